/**
 * The TaskBoard contract: the open boards of a paired server, in the board's order; `undefined`
 * for a server with no pairing or a pairing the board no longer accepts (the forms then offer
 * board `-1`). Outages belong to the live layer's own tests (test/taskboard/TaskBoardLive.test.ts).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Layer } from "effect"
import type { Board } from "../../src/domain/forms/Form.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"

export interface TaskBoardFixture {
  /** A paired server and its team's open boards. */
  readonly paired: { readonly serverId: string; readonly boards: ReadonlyArray<Board> }
  /** A server paired with a team the board does not know. */
  readonly stalePairing: string
  /** Servers without a pairing. */
  readonly unpaired: ReadonlyArray<string>
}

export const taskBoardContract = <E>(name: string, boardLayer: Layer.Layer<TaskBoard, E>, fixture: TaskBoardFixture) =>
  layer(boardLayer, { excludeTestServices: true })(`TaskBoard contract (${name})`, (it) => {
    it.effect("a paired server lists its team's open boards, in order, as id and name only", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        assert.deepStrictEqual(yield* board.boards(fixture.paired.serverId), fixture.paired.boards)
        // Asked again: the same answer.
        assert.deepStrictEqual(yield* board.boards(fixture.paired.serverId), fixture.paired.boards)
      }))

    it.effect("a server without a pairing has no boards (undefined)", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        for (const serverId of fixture.unpaired) assert.isUndefined(yield* board.boards(serverId), serverId)
      }))

    it.effect("a pairing the board does not accept counts as none (undefined)", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        assert.isUndefined(yield* board.boards(fixture.stalePairing))
      }))
  })
