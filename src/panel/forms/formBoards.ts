/**
 * The task board a form editor offers (gateway-api.md "Forms", decisions.md "Forms"), from the
 * server's listing (`taskboardBoards`): without a paired team it is only `-1` "No task-board team
 * paired", so that is the only choice; with one it is `0` "Disable task-board integration" and the
 * team's boards, and a form stored with `-1` (the template's value, or saved before the team was
 * paired) shows `0`, which means the same: no board. Pure.
 */
import { BOARD_DISABLED, BOARD_NO_TEAM } from "../../http/client.ts"
import type { Board } from "../../http/client.ts"

export const teamPaired = (listing: ReadonlyArray<Board>) => !listing.some((b) => b.id === BOARD_NO_TEAM.id)

/** The board the editor shows for a form's stored one. */
export const shownBoard = (board: string, listing: ReadonlyArray<Board>): string =>
  !teamPaired(listing) ? BOARD_NO_TEAM.id : board === BOARD_NO_TEAM.id ? BOARD_DISABLED.id : board

/** The options of the select; a board the team no longer lists stays, said so (saving it is refused at the field). */
export const boardChoices = (board: string, listing: ReadonlyArray<Board>): ReadonlyArray<Board> =>
  !teamPaired(listing)
    ? [BOARD_NO_TEAM]
    : listing.some((b) => b.id === board)
    ? listing
    : [{ id: board, name: `Board ${board} (not on the team's list)` }, ...listing]
