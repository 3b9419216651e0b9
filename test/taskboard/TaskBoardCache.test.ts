/**
 * The task board's per-server cache (issue #12 item 17), on the live Trello client against the
 * sandbox twin: concurrent reads make one call, answers are kept for the TTL, failures are not,
 * and a pairing change (pair, re-pair, unpair: the CLI, another process) applies at the next read.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import type { TaskBoardPairing } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { TaskBoardTrello } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { S1_ID, S2_ID } from "../../src/sandbox/Seed.ts"
import { TASKBOARD_TEAM } from "../../src/sandbox/sources/Seed.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"

/** The pairings the client reads on every call: the test changes them as the CLI would. */
class Pairings extends Context.Service<Pairings, Map<string, TaskBoardPairing>>()("test/Pairings") {}

const pairing = (token: string): TaskBoardPairing => ({
  teamId: TASKBOARD_TEAM,
  key: Redacted.make("sandbox"),
  token: Redacted.make(token)
})

/** Two clients over one sandbox: the default TTL (30 s) and TTL 0 (coalescing only). */
class Clients extends Context.Service<Clients, { readonly cached: TaskBoard["Service"]; readonly coalescing: TaskBoard["Service"] }>()(
  "test/Clients"
) {}

const Env = Layer.unwrap(Effect.gen(function*() {
  const sandbox = yield* SandboxServer
  const pairings = yield* Pairings
  const options = {
    ...SandboxMode.taskBoardOptions(sandbox.url, "5 seconds"),
    pairings: (serverId: string) => Effect.sync(() => pairings.get(serverId))
  }
  const client = (cacheTtl?: number) =>
    Effect.provide(Effect.gen(function*() { return yield* TaskBoard }), TaskBoardTrello.layer(cacheTtl === undefined ? options : { ...options, cacheTtl }))
  return Layer.effect(Clients, Effect.all({ cached: client(), coalescing: client(0) }))
})).pipe(
  Layer.provideMerge(Layer.mergeAll(SandboxServer.layer(), FetchHttpClient.layer)),
  Layer.provideMerge(Layer.sync(Pairings, () => new Map([[S1_ID, pairing("sandbox")]]))),
  // What the client logs (an unknown team, an outage) is kept and checked, with an outage state of this file's own.
  Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth())),
  Layer.provideMerge(CapturedLogs.layer)
)

const control = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const { url } = yield* SandboxServer
    return yield* Effect.promise(async () => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return text === "" ? undefined : JSON.parse(text)
    })
  })

const BOARDS_ROUTE = "GET /1/organizations/{teamId}/boards"
const calls = Effect.map(control("GET", "/sandbox/stats"), (s: { calls: Record<string, number> }) => s.calls[BOARDS_ROUTE] ?? 0)
const reset = control("DELETE", "/sandbox/stats")

layer(Env, { excludeTestServices: true })("TaskBoardTrello cache", (it) => {
  it.effect("50 concurrent reads of a server's boards → one call; later reads within the TTL → none", () =>
    Effect.gen(function*() {
      const { cached } = yield* Clients
      yield* reset
      const answers = yield* Effect.forEach(Array.from({ length: 50 }), () => cached.boards(S1_ID), { concurrency: "unbounded" })
      for (const a of answers) assert.deepStrictEqual(a, answers[0])
      assert.isAbove(answers[0]!.length, 0)
      assert.strictEqual(yield* calls, 1)
      yield* cached.boards(S1_ID)
      yield* cached.boards(S1_ID)
      assert.strictEqual(yield* calls, 1)
      // An unpaired server: no call at all.
      assert.isUndefined(yield* cached.boards(S2_ID))
      assert.strictEqual(yield* calls, 1)
    }))

  it.effect("a pairing change applies at the next read: unpair → -1 at once, re-pair with new credentials → a fresh call", () =>
    Effect.gen(function*() {
      const { cached } = yield* Clients
      const pairings = yield* Pairings
      yield* cached.boards(S1_ID)
      yield* reset
      pairings.delete(S1_ID)
      assert.isUndefined(yield* cached.boards(S1_ID))
      assert.strictEqual(yield* calls, 0)
      pairings.set(S1_ID, pairing("rotated-token"))
      assert.isAbove((yield* cached.boards(S1_ID))!.length, 0)
      assert.strictEqual(yield* calls, 1)
      // Paired with a team Trello does not know: unpaired, at once too.
      pairings.set(S1_ID, { ...pairing("rotated-token"), teamId: "another-team" })
      assert.isUndefined(yield* cached.boards(S1_ID))
      pairings.set(S1_ID, pairing("sandbox"))
      // The operator is told which server's pairing Trello no longer accepts.
      const refused = yield* logged("Trello no longer accepts a server's pairing")
      assert.deepStrictEqual(refused.map((l) => l.annotations["serverId"]), [S1_ID])
    }))

  it.effect("a failure is never kept: the next read calls again", () =>
    Effect.gen(function*() {
      const { coalescing } = yield* Clients
      yield* control("POST", "/sandbox/faults", { route: BOARDS_ROUTE, kind: "500", count: 1 })
      yield* reset
      const failed = yield* Effect.flip(coalescing.boards(S1_ID))
      assert.strictEqual(failed._tag, "ServiceUnavailable")
      assert.isAbove((yield* coalescing.boards(S1_ID))!.length, 0)
      assert.strictEqual(yield* calls, 2)
      // One outage, two lines: down, then back once the next read succeeds.
      const outage = yield* logged("task board (Trello)")
      assert.deepStrictEqual(outage.map((l) => l.text.replace(/ \{.*$/, "")), ["dependency down: task board (Trello)", "dependency back: task board (Trello)"])
    }))

  it.effect("TTL 0 only coalesces: concurrent reads share one call, sequential reads each call", () =>
    Effect.gen(function*() {
      const { coalescing } = yield* Clients
      yield* reset
      yield* Effect.forEach(Array.from({ length: 20 }), () => coalescing.boards(S1_ID), { concurrency: "unbounded" })
      assert.strictEqual(yield* calls, 1)
      yield* coalescing.boards(S1_ID)
      assert.strictEqual(yield* calls, 2)
    }))
})
