/**
 * The task board the form editor offers (src/panel/forms/formBoards.ts): without a paired team only "No
 * task-board team paired"; with one, never that: `-1` shows as `0` (no board), the team's boards listed.
 */
import { describe, expect, it } from "@effect/vitest"
import { BOARD_DISABLED, BOARD_NO_TEAM } from "../../src/http/client.ts"
import { boardChoices, shownBoard } from "../../src/panel/forms/formBoards.ts"

const paired = [BOARD_DISABLED, { id: "11", name: "Applications" }, { id: "12", name: "Reports" }]
const unpaired = [BOARD_NO_TEAM]

describe("formBoards", () => {
  const rows = [
    ["no team, the template's -1", "-1", unpaired, "-1", ["-1"]],
    ["no team, a board kept from when one was paired", "11", unpaired, "-1", ["-1"]],
    ["no team, 0", "0", unpaired, "-1", ["-1"]],
    ["a team, the template's -1: no board", "-1", paired, "0", ["0", "11", "12"]],
    ["a team, one of its boards", "12", paired, "12", ["0", "11", "12"]],
    ["a team, a board it no longer lists: kept, said so", "99", paired, "99", ["99", "0", "11", "12"]]
  ] as const
  for (const [name, stored, listing, shown, ids] of rows) {
    it(name, () => {
      expect(shownBoard(stored, listing)).toBe(shown)
      const choices = boardChoices(shownBoard(stored, listing), listing)
      expect(choices.map((b) => b.id)).toEqual(ids)
      if (listing === paired) expect(choices.map((b) => b.name)).not.toContain(BOARD_NO_TEAM.name)
    })
  }
  it("a board the team no longer lists is named so", () =>
    expect(boardChoices("99", paired)[0]!.name).toBe("Board 99 (not on the team's list)"))
})
