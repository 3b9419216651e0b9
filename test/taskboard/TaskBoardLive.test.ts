/**
 * The live TaskBoard (Trello) client against the sandbox twin over real HTTP: the paired sandbox
 * team's open boards, undefined for an unpaired server or a pairing Trello refuses, time-out and 5xx.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted } from "effect"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { TaskBoardTrello, type TaskBoardOptions } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { S1_ID, S2_ID } from "../../src/sandbox/Seed.ts"
import { TASKBOARD_BOARDS } from "../../src/sandbox/sources/Seed.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"
import { fault, SandboxServer, SandboxUrl } from "../sources/SandboxServerFixtures.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"

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
  // cacheTtl 0: these tests fault the twin between reads of one server (the cache: test/taskboard/TaskBoardCache.test.ts).
  return TaskBoardTrello.layer({ ...SandboxMode.taskBoardOptions(url, "1 second"), cacheTtl: 0 })
})).pipe(
  Layer.provideMerge(SandboxServer),
  // The outages and refusals these tests provoke are logged as warnings: kept, not printed.
  Layer.provideMerge(CapturedLogs.layer)
)

const ROUTE = "GET /1/organizations/{teamId}/boards"

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
      // The operator is told, once per refused pairing.
      assert.lengthOf(yield* logged("Trello no longer accepts a server's pairing"), 2)
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

layer(Env, { excludeTestServices: true })("TaskBoardTrello: every 503 says when to retry", (it) => {
  it.effect("5xx, 429 without a wait, and an unreachable Trello are ServiceUnavailable with retry_after", () =>
    Effect.gen(function*() {
      const t = yield* TaskBoard
      yield* fault(ROUTE, "500")
      const down = yield* Effect.flip(t.boards(S1_ID))
      assert.strictEqual(down._tag, "ServiceUnavailable")
      assert.isAtLeast(Number(down.problems[0]?.additionalProperties?.["retry_after"]), 1)
      // Nothing listens on port 9 of the loopback address.
      const unreachable = yield* Effect.flip(
        TaskBoard.use((b) => b.boards(S1_ID)).pipe(Effect.provide(TaskBoardTrello.layer({
          ...SandboxMode.taskBoardOptions("http://127.0.0.1:9", "1 second"),
          pairings: () => Effect.succeed({ teamId: "team", key: Redacted.make("k"), token: Redacted.make("t") })
        })))
      )
      assert.strictEqual(unreachable._tag, "ServiceUnavailable")
      assert.isAtLeast(Number(unreachable.problems[0]?.additionalProperties?.["retry_after"]), 1)
    }))
})

layer(Env, { excludeTestServices: true })("TaskBoardTrello: outage logging", (it) => {
  it.effect("three failed calls and a good one log one line down and one line back", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.layer([Logger.make((o) => {
        lines.push(String(Array.isArray(o.message) ? o.message[0] : o.message))
      })])
      const pairing = () => Effect.succeed({ teamId: "team", key: Redacted.make("k"), token: Redacted.make("t") })
      const url = yield* SandboxUrl
      const live = TaskBoardTrello.layer({ ...SandboxMode.taskBoardOptions(url, "1 second"), pairings: pairing, cacheTtl: 0 })
      yield* fault(ROUTE, "500", 3)
      yield* Effect.gen(function*() {
        const t = yield* TaskBoard
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* Effect.flip(t.boards(S1_ID)))._tag, "ServiceUnavailable")
        yield* Effect.ignore(t.boards(S1_ID))
      }).pipe(Effect.provide(Layer.mergeAll(live, capture, Layer.succeed(DependencyHealth, makeDependencyHealth()))))
      const health = lines.filter((l) => l.startsWith("dependency") || l.includes("answered"))
      assert.deepStrictEqual(health, ["dependency down: task board (Trello)", "dependency back: task board (Trello)"], lines.join("\n"))
    }))
})
