/**
 * countRequest (http/RateLimit.ts) across an outage of the shared store, in process and under the
 * TestClock: a store that can be made unreachable (Effect's memory store behind a switch) and a
 * carry into it. The answers' statuses and RateLimit fields, and the outage's log lines.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Metric } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import { countRequest, makeFallbackLimiter } from "../../src/http/edge/RateLimit.ts"
import type { Policy } from "../../src/http/edge/RateLimit.ts"
import type { TooManyRequests } from "../../src/domain/infra/Errors.ts"
import { rateLimitRejections } from "../../src/services/infra/Metrics.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { RateLimitCarry, RateLimitCarryError } from "../../src/services/infra/RateLimitCarry.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"

const policy: Policy = { name: "api", limit: 4, windowSeconds: 60 }

/** One shared store for every instance of a test, reachable or not. */
const sharedStore = Effect.gen(function*() {
  const inner = Context.get(yield* Layer.build(RateLimiter.layerStoreMemory), RateLimiter.RateLimiterStore)
  const state = { down: false }
  /** The problems of every 429 answered. */
  const refusals: Array<TooManyRequests["problems"]> = []
  const refused = new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message: "connection refused" }) })
  const store = RateLimiter.RateLimiterStore.of({ ...inner, fixedWindow: (o) => state.down ? Effect.fail(refused) : inner.fixedWindow(o) })
  /** An instance: its limiter on the shared store, and its fallback carrying into it. */
  const instance = Effect.gen(function*() {
    const limiter = yield* RateLimiter.make.pipe(Effect.provideService(RateLimiter.RateLimiterStore, store))
    const fallback = yield* makeFallbackLimiter.pipe(Effect.provideService(RateLimitCarry, {
      carry: (c) =>
        state.down
          ? Effect.fail(new RateLimitCarryError({ message: "carry refused" }))
          // What the Redis carry does to a key the store kept: the requests added, and their refill.
          : Effect.asVoid(Effect.orDie(inner.fixedWindow({ key: c.key, tokens: c.pending, refillRate: Duration.millis(c.refillMillis), limit: undefined })))
    }))
    /** One request of `user`: its status and RateLimit fields. */
    return (user: string) =>
      Effect.gen(function*() {
        let response: HttpServerResponse.HttpServerResponse | undefined
        const app = countRequest(limiter, policy, user, fallback).pipe(
          Effect.as(HttpServerResponse.empty({ status: 200 })),
          Effect.catchTag("TooManyRequests", (e) => {
            refusals.push(e.problems)
            return Effect.succeed(HttpServerResponse.empty({ status: 429 }))
          })
        )
        yield* HttpEffect.toHandled(app, (_req, res) => Effect.sync(() => void (response = res))).pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request("http://gateway/api/v1/user")))
        )
        const h = response!.headers
        assert.strictEqual(h["ratelimit-policy"], '"api";q=4;w=60')
        return [response!.status, h["ratelimit"], h["retry-after"]].filter((v) => v !== undefined).join(" ")
      })
  })
  return { instance, refusals, state }
})

const isolated = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(Effect.scoped, Effect.provideService(DependencyHealth, makeDependencyHealth()), Effect.provide(CapturedLogs.layer))

const repeat = <A, E, R>(n: number, self: Effect.Effect<A, E, R>) => Effect.forEach(Array.from({ length: n }), () => self)

describe("one instance", () => {
  it.effect("counts on in memory from the store's count, carries it back, and the store refuses after", () =>
    Effect.gen(function*() {
      const { instance, state } = yield* sharedStore
      const request = yield* instance
      assert.deepStrictEqual(yield* repeat(2, request("alice")), ['200 "api";r=3;t=15', '200 "api";r=2;t=30'])
      state.down = true
      yield* TestClock.adjust("2 seconds")
      // From the 2 the store counted, on the store's arithmetic (15 s a request): 28 s left + 15 s.
      assert.deepStrictEqual(yield* repeat(3, request("alice")), ['200 "api";r=1;t=43', '200 "api";r=0;t=58', '429 "api";r=0;t=58 58'])
      assert.deepStrictEqual(yield* request("bob"), '200 "api";r=3;t=15', "per key")
      yield* TestClock.adjust("1 second")
      state.down = false
      // The store has alice's 4 (and bob's 1) before it counts again.
      assert.deepStrictEqual(yield* repeat(2, request("alice")), ['429 "api";r=0;t=57 57', '429 "api";r=0;t=57 57'])
      // (This store adds a carried request as it adds a request: bob's window is 15 s from the carry.)
      assert.deepStrictEqual(yield* request("bob"), '200 "api";r=2;t=30')
      const lines = yield* logged("dependency")
      assert.deepStrictEqual(lines.map((l) => l.text), ["dependency down: redis", "dependency back: redis"])
      assert.deepStrictEqual(lines[0]!.annotations, { store: "rate limits", policy: "api", reason: "RateLimitStoreError", detail: "connection refused", dependency: "redis" })
      assert.strictEqual(lines[1]!.annotations["failures"], 4)
    }).pipe(isolated))

  it.effect("while the carry itself is refused, requests are counted here, and the outage stays one line", () =>
    Effect.gen(function*() {
      const { instance, state } = yield* sharedStore
      const request = yield* instance
      state.down = true
      assert.deepStrictEqual(yield* request("alice"), '200 "api";r=3;t=15')
      // Now every request tries the carry first: refused, so counted here.
      assert.deepStrictEqual(yield* repeat(4, request("alice")), ['200 "api";r=2;t=30', '200 "api";r=1;t=45', '200 "api";r=0;t=60', '429 "api";r=0;t=60 60'])
      const lines = yield* logged("dependency")
      assert.deepStrictEqual(lines.map((l) => l.text), ["dependency down: redis"])
      state.down = false
      assert.deepStrictEqual(yield* request("alice"), '429 "api";r=0;t=60 60')
      const back = yield* logged("dependency back")
      assert.strictEqual(back[0]!.annotations["failures"], 5, "the refused carries count towards the outage")
    }).pipe(isolated))

  it.effect("a refused window kept from the store: refused in memory until it ends, then a new one", () =>
    Effect.gen(function*() {
      const { instance, refusals, state } = yield* sharedStore
      const request = yield* instance
      const rejected = Effect.map(Metric.value(Metric.withAttributes(rateLimitRejections, { limit: "api" })), (s) => Number(s.count))
      const rejectedBefore = yield* rejected
      yield* repeat(4, request("alice"))
      yield* TestClock.adjust("500 millis")
      assert.deepStrictEqual(yield* request("alice"), '429 "api";r=0;t=60 60')
      state.down = true
      yield* TestClock.adjust("58 seconds")
      // 1.5 s left of the window the store refused: Retry-After rounds up.
      assert.deepStrictEqual(yield* request("alice"), '429 "api";r=0;t=2 2')
      yield* TestClock.adjust("1499 millis")
      assert.deepStrictEqual(yield* request("alice"), '429 "api";r=0;t=1 1')
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* request("alice"), '200 "api";r=3;t=15')
      // Refused by the store and in memory alike: the same problem, counted in the same metric.
      assert.deepStrictEqual(refusals, [60, 2, 1].map((s) => [{
        message: `Rate limit of 4 requests per 60 s exceeded; retry after ${s} s.`,
        additionalProperties: { retry_after: s }
      }]))
      assert.strictEqual((yield* rejected) - rejectedBefore, 3)
    }).pipe(isolated))
})

describe("two instances on one store", () => {
  it.effect("a refusal of the store is kept too: the window others filled stays full here during the outage", () =>
    Effect.gen(function*() {
      const { instance, state } = yield* sharedStore
      const a = yield* instance
      const b = yield* instance
      assert.deepStrictEqual(yield* a("alice"), '200 "api";r=3;t=15')
      yield* repeat(3, b("alice"))
      // A last saw 1, then the store refused it: full.
      assert.deepStrictEqual(yield* a("alice"), '429 "api";r=0;t=60 60')
      state.down = true
      assert.deepStrictEqual(yield* a("alice"), '429 "api";r=0;t=60 60')
    }).pipe(isolated))

  it.effect("each counts on from the count it last saw: at most 2 × the limit minus those, and the store refuses after", () =>
    Effect.gen(function*() {
      const { instance, state } = yield* sharedStore
      const a = yield* instance
      const b = yield* instance
      // The store counts 3: A last saw 1, B last saw 3.
      assert.deepStrictEqual([yield* a("alice"), ...yield* repeat(2, b("alice"))], ['200 "api";r=3;t=15', '200 "api";r=2;t=30', '200 "api";r=1;t=45'])
      state.down = true
      const duringA = yield* repeat(5, a("alice"))
      const duringB = yield* repeat(5, b("alice"))
      assert.deepStrictEqual(duringA.filter((s) => s.startsWith("200")).length, 3, JSON.stringify(duringA))
      assert.deepStrictEqual(duringB.filter((s) => s.startsWith("200")).length, 1, JSON.stringify(duringB))
      state.down = false
      assert.deepStrictEqual([yield* a("alice"), yield* b("alice")].map((s) => s.slice(0, 3)), ["429", "429"])
    }).pipe(isolated))
})
