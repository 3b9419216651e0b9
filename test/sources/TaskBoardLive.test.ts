/**
 * The live TaskBoard (Trello) client against the sandbox twin over real HTTP: the paired sandbox
 * team's open boards, undefined for an unpaired server or a pairing Trello refuses, time-out and 5xx.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TaskBoardTrello, type TaskBoardOptions } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { S1_ID, S2_ID } from "../../src/sandbox/Seed.ts"
import { TASKBOARD_BOARDS } from "../../src/sandbox/sources/Seed.ts"
import { TaskBoard } from "../../src/services/TaskBoard.ts"
import { fault, SandboxServer, SandboxUrl } from "./SandboxServer.ts"

const withBoard = <A, E, R>(
  pairings: TaskBoardOptions["pairings"],
  f: (t: TaskBoard["Service"]) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const url = yield* SandboxUrl
    const live = TaskBoardTrello.layer({ ...SandboxMode.taskBoardOptions(url, "1 second"), pairings })
    return yield* TaskBoard.use(f).pipe(Effect.provide(live))
  })

const Env = Layer.unwrap(Effect.gen(function*() {
  const url = yield* SandboxUrl
  return TaskBoardTrello.layer(SandboxMode.taskBoardOptions(url, "1 second"))
})).pipe(Layer.provideMerge(SandboxServer))

const ROUTE = "GET /sandbox/taskboard/1/organizations/{teamId}/boards"

layer(Env, { excludeTestServices: true })("TaskBoardTrello against the Trello twin", (it) => {
  it.effect("the paired sandbox server lists its team's open boards", () =>
    Effect.gen(function*() {
      const t = yield* TaskBoard
      const boards = yield* t.boards(S1_ID)
      assert.deepStrictEqual(boards, TASKBOARD_BOARDS.filter((b) => !b.closed).map((b) => ({ id: b.id, name: b.name })))
      assert.isAtLeast(boards?.length ?? 0, 2)
    }))

  it.effect("an unpaired server has no boards (undefined)", () =>
    Effect.gen(function*() {
      const t = yield* TaskBoard
      assert.isUndefined(yield* t.boards(S2_ID))
    }))

  it.effect("a pairing Trello refuses (unknown team, no credentials) counts as unpaired", () =>
    Effect.gen(function*() {
      const unknownTeam = yield* withBoard(
        () => Effect.succeed({ teamId: "no-such-team", key: Redacted.make("k"), token: Redacted.make("t") }),
        (t) => t.boards(S1_ID)
      )
      assert.isUndefined(unknownTeam)
      const noKey = yield* withBoard(
        () => Effect.succeed({ teamId: "sandbox-team-1", key: Redacted.make(""), token: Redacted.make("") }),
        (t) => t.boards(S1_ID)
      )
      assert.isUndefined(noKey)
    }))

  it.effect("a hanging Trello is RequestTimeout; 5xx is ServiceUnavailable naming the task board", () =>
    Effect.gen(function*() {
      const t = yield* TaskBoard
      yield* fault(ROUTE, "hang")
      const timedOut = yield* Effect.flip(t.boards(S1_ID))
      assert.strictEqual(timedOut._tag, "RequestTimeout")
      yield* fault(ROUTE, "500")
      const down = yield* Effect.flip(t.boards(S1_ID))
      assert.strictEqual(down._tag, "ServiceUnavailable")
      assert.include(down.problems[0]?.message ?? "", "task board")
    }))
})
