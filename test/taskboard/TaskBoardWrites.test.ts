/**
 * The live board writes against the Trello twin over HTTP, where only a real board can fail:
 * credentials or access refused (permanent), a 5xx then success (retryable, one card not two), a
 * hang (timeout), Trello's rate limit obeyed from its headers (no 429 provoked; a 429 waited out;
 * a wait too long refused as retryable), and the credentials in no URL, log line or span.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted, Tracer } from "effect"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { FetchHttpClient } from "effect/http"
import { TaskBoardTrello } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { S1_ID } from "../../src/sandbox/Seed.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { httpCall, ROADMAP, TODO_LIST, twinLayer, TwinUrl } from "./TwinFixtures.ts"

/**
 * The client's time-out for one call. The twin answers at once, so this only has to outlast a slow,
 * loaded machine; the test of the time-out itself (a hang) passes its own short one.
 */
const TIMEOUT: Duration.Input = "10 seconds"

/** The live client as server S1 paired with `token` (each test its own token: its own rate-limit window). */
const client = (token: string, maxRateLimitWait: Duration.Input = "5 seconds", timeout: Duration.Input = TIMEOUT) =>
  Effect.map(TwinUrl, (url) =>
    TaskBoardTrello.layer({
      ...SandboxMode.taskBoardOptions(url, timeout),
      maxRateLimitWait,
      pairings: () => Effect.succeed({ teamId: "sandbox-team-1", key: Redacted.make("key-live"), token: Redacted.make(token) })
    }))

const withBoard = <A, E, R>(
  token: string,
  f: (t: TaskBoard["Service"]) => Effect.Effect<A, E, R>,
  maxRateLimitWait?: Duration.Input,
  timeout?: Duration.Input
) => Effect.flatMap(client(token, maxRateLimitWait, timeout), (live) => TaskBoard.use(f).pipe(Effect.provide(live)))

const fault = (route: string, kind: string, count = 1, extra: Record<string, unknown> = {}) =>
  httpCall("POST", "/sandbox/faults", { route, kind, count, ...extra })
const cardsNamed = (name: string) =>
  Effect.map(httpCall("GET", "/sandbox/taskboard/cards"), (a) => a.json.cards.filter((c: { name: string }) => c.name === name).length)
const card = (name: string) => ({ idList: TODO_LIST, name, desc: "", idLabels: [] })

const Env = twinLayer({ tokenLimit: 4, intervalMs: 1000 }).pipe(
  Layer.provideMerge(FetchHttpClient.layer),
  // The refusals and waits these tests provoke are logged as warnings: kept, not printed.
  Layer.provideMerge(CapturedLogs.layer)
)

layer(Env, { excludeTestServices: true })("TaskBoardTrello writes: failures", (it) => {
  it.effect("credentials refused (401) or access refused (403): permanent, and no card", () =>
    Effect.gen(function*() {
      for (const kind of ["401", "403"]) {
        yield* fault("POST /1/cards", kind)
        const e = yield* Effect.flip(withBoard("t-refused", (t) => t.createCard(S1_ID, card(`refused ${kind}`))))
        assert.deepInclude(e, { reason: "refused", retryable: false, status: Number(kind) })
        assert.strictEqual(yield* cardsNamed(`refused ${kind}`), 0)
      }
    }))

  it.effect("a 5xx is retryable, and the retry makes one card, not two", () =>
    Effect.gen(function*() {
      yield* fault("POST /1/cards", "500")
      const e = yield* Effect.flip(withBoard("t-5xx", (t) => t.createCard(S1_ID, card("after 500"))))
      assert.deepInclude(e, { reason: "unavailable", retryable: true, status: 500 })
      assert.strictEqual(yield* cardsNamed("after 500"), 0)
      const made = yield* withBoard("t-5xx", (t) => t.createCard(S1_ID, card("after 500")))
      assert.strictEqual(made.name, "after 500")
      assert.strictEqual(yield* cardsNamed("after 500"), 1)
    }))

  it.effect("a board that does not answer: timeout, retryable; unreachable: unavailable, retryable", () =>
    Effect.gen(function*() {
      yield* fault("GET /1/boards/{id}/lists", "hang")
      // The twin never answers: a short time-out suffices to see it fire.
      assert.deepInclude(yield* Effect.flip(withBoard("t-hang", (t) => t.lists(S1_ID, ROADMAP), undefined, "1 second")), { reason: "timeout", retryable: true })
      const nowhere = TaskBoardTrello.layer({
        ...SandboxMode.taskBoardOptions("http://127.0.0.1:9", TIMEOUT),
        pairings: () => Effect.succeed({ teamId: "t", key: Redacted.make("k"), token: Redacted.make("t") })
      })
      const e = yield* Effect.flip(TaskBoard.use((t) => t.labels(S1_ID, ROADMAP)).pipe(Effect.provide(nowhere)))
      assert.deepInclude(e, { reason: "unavailable", retryable: true })
    }))

  it.effect("the pairing cannot be read: retryable; a server without one: permanent", () =>
    Effect.gen(function*() {
      const url = yield* TwinUrl
      const noPairing = TaskBoardTrello.layer({ ...SandboxMode.taskBoardOptions(url, TIMEOUT) })
      const e = yield* Effect.flip(TaskBoard.use((t) => t.lists("399999999999999999", ROADMAP)).pipe(Effect.provide(noPairing)))
      assert.deepInclude(e, { reason: "unpaired", retryable: false })
      const registryDown = TaskBoardTrello.layer({
        ...SandboxMode.taskBoardOptions(url, TIMEOUT),
        pairings: () => Effect.fail(ServiceUnavailable.of("database down (test)", 5))
      })
      const down = yield* Effect.flip(TaskBoard.use((t) => t.createCard(S1_ID, card("x"))).pipe(Effect.provide(registryDown)))
      assert.deepInclude(down, { reason: "unavailable", retryable: true })
    }))
})

layer(Env, { excludeTestServices: true })("TaskBoardTrello writes: Trello's rate limit", (it) => {
  it.effect("10 calls on a token allowed 4 a second: all answered, none refused, spread over the windows", () =>
    Effect.gen(function*() {
      yield* httpCall("DELETE", "/sandbox/stats")
      const started = Date.now()
      const lists = yield* withBoard("t-paced", (t) => Effect.forEach(Array.from({ length: 10 }), () => t.lists(S1_ID, ROADMAP)))
      assert.lengthOf(lists, 10)
      assert.strictEqual((yield* httpCall("GET", "/sandbox/stats")).json.status429, 0, "the client waited instead of being refused")
      assert.isAtLeast(Date.now() - started, 2000, "three windows of 4")
    }))

  it.effect("12 concurrent cards: each made once, the 429s of the first burst waited out", () =>
    Effect.gen(function*() {
      const names = Array.from({ length: 12 }, (_, i) => `burst ${i}`)
      const made = yield* withBoard("t-burst", (t) => Effect.forEach(names, (n) => t.createCard(S1_ID, card(n)), { concurrency: "unbounded" }))
      assert.deepStrictEqual(made.map((c) => c.name), names)
      for (const n of names) assert.strictEqual(yield* cardsNamed(n), 1, n)
    }))

  it.effect("a 429 with Retry-After is waited out and sent again: one card", () =>
    Effect.gen(function*() {
      yield* fault("POST /1/cards", "429", 1, { retry_after: 1 })
      const started = Date.now()
      yield* withBoard("t-429", (t) => t.createCard(S1_ID, card("after 429")))
      assert.isAtLeast(Date.now() - started, 950)
      assert.strictEqual(yield* cardsNamed("after 429"), 1)
    }))

  it.effect("a wait past maxRateLimitWait fails at once as retryable, saying when", () =>
    Effect.gen(function*() {
      yield* fault("POST /1/cards", "429", 1, { retry_after: 30 })
      const started = Date.now()
      // A budget of 10 s against a 30 s wait: failing at once takes well under 5 s even on a slow
      // machine, while waiting out the budget before failing would take 10 s.
      const e = yield* Effect.flip(withBoard("t-long", (t) => t.createCard(S1_ID, card("too long")), "10 seconds"))
      assert.deepInclude(e, { reason: "unavailable", retryable: true, status: 429, retryAfterSeconds: 30 })
      assert.isBelow(Date.now() - started, 5000)
      assert.strictEqual(yield* cardsNamed("too long"), 0)
    }))
})

layer(Env, { excludeTestServices: true })("TaskBoardTrello writes: credentials", (it) => {
  it.effect("the key and token are in no URL, log line, error or span", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.NativeSpan> = []
      const tracer = Tracer.make({
        span(options) {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      yield* fault("POST /1/cards", "401")
      const errors = yield* withBoard("tok-SECRET-9", (t) =>
        Effect.all([
          Effect.flip(t.createCard(S1_ID, card("x"))),
          t.lists(S1_ID, ROADMAP),
          Effect.flip(t.lists(S1_ID, "5f1a00000000000000000bad"))
        ])).pipe(Effect.provideService(Tracer.Tracer, tracer))
      const logs = yield* CapturedLogs.use((c) => c.lines)
      const seen = JSON.stringify([
        errors,
        logs,
        spans.map((s) => [s.name, [...s.attributes.entries()], s.events])
      ])
      assert.isAbove(spans.length, 3, "spans were recorded")
      assert.include(seen, "url.full", "the HTTP client's own spans are among them")
      for (const secret of ["tok-SECRET-9", "key-live"]) assert.notInclude(seen, secret)
    }))
})
