/**
 * The chat platform's rate limiter (DiscordRateLimits.ts) on the test clock: behaviours that the
 * mutation run of issue #19 found unpinned. What a caller sees: whether a request is sent, and the
 * 503's message and Retry-After when it is not.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import type { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { DiscordGlobalBudget } from "../../src/layers/platform/discord/DiscordGlobalBudget.ts"
import type { Answer } from "../../src/layers/platform/discord/DiscordRateLimits.ts"
import { DiscordRateLimits } from "../../src/layers/platform/discord/DiscordRateLimits.ts"

const limits = (options: Parameters<typeof DiscordRateLimits.layer>[0] = {}) =>
  Layer.build(DiscordRateLimits.layer(options).pipe(Layer.provide([RateLimiter.layerStoreMemory, DiscordGlobalBudget.layerMemory])))
    .pipe(Effect.map((context) => Context.get(context, DiscordRateLimits)))

const target = { identity: "bot:m", route: "GET /guilds/:guild", major: "1" }
const answer = (status: number, headers: Record<string, string> = {}): Answer => ({ status, headers, body: "" })

const refusal = (error: unknown) => {
  const unavailable = error as ServiceUnavailable
  assert.strictEqual(unavailable._tag, "ServiceUnavailable")
  return {
    message: unavailable.problems[0]?.message ?? "",
    retryAfter: unavailable.problems[0]?.additionalProperties?.["retry_after"]
  }
}

describe("DiscordRateLimits: what mutation testing found unpinned", () => {
  it.effect("a call past its deadline is still sent when nothing makes it wait, a bucket reset reached this instant included", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "10 seconds" })
      let sent = 0
      const ok = (headers: Record<string, string> = {}) => Effect.sync(() => (sent++, answer(200, headers)))
      // The bucket is spent until 1 s from now.
      yield* limiter.run(target, ok({ "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "1" }))
      yield* TestClock.adjust("1 second")
      // Its reset is now; the caller's deadline (epoch 0) is long gone, but there is nothing to wait for.
      assert.strictEqual((yield* limiter.run(target, ok(), 0)).status, 200)
      assert.strictEqual(sent, 2)
    }))

  it.effect("the global budget's wait past the deadline answers 503 naming the global limit, without sending", () =>
    Effect.gen(function*() {
      // An hour in: the deadline is counted from now, not from the clock's start.
      yield* TestClock.adjust("1 hour")
      // One request per second: the first at once, the next 1.2 s after it.
      const limiter = yield* limits({ globalPerSecond: 1, waitBudget: "500 millis" })
      let sent = 0
      const ok = Effect.sync(() => (sent++, answer(200)))
      yield* limiter.run({ ...target, major: "1" }, ok)
      const error = refusal(yield* Effect.flip(limiter.run({ ...target, major: "2" }, ok)))
      assert.include(error.message, "(global limit)")
      assert.strictEqual(error.retryAfter, 2)
      assert.strictEqual(sent, 1)
    }))

  it.effect("a learned bucket hash is kept when an answer of that route carries no bucket header", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "1 second" })
      let sent = 0
      const ok = (headers: Record<string, string> = {}) => Effect.sync(() => (sent++, answer(200, headers)))
      const a = { ...target, route: "GET /a" }
      const b = { ...target, route: "GET /b" }
      const room = { "x-ratelimit-bucket": "h", "x-ratelimit-remaining": "5", "x-ratelimit-reset-after": "1" }
      // Both routes learn that they share the bucket "h".
      yield* limiter.run(b, ok(room))
      yield* limiter.run(a, ok(room))
      // An answer of route a without rate-limit headers (an error page, say).
      yield* limiter.run(a, Effect.sync(() => (sent++, answer(502))))
      // Route b spends "h" for 3 s: route a waits for it too (past its budget: 503 at once, not sent).
      yield* limiter.run(b, ok({ "x-ratelimit-bucket": "h", "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "3" }))
      const error = refusal(yield* Effect.flip(limiter.run(a, ok())))
      assert.include(error.message, "bucket GET /a")
      assert.strictEqual(error.retryAfter, 3)
      assert.strictEqual(sent, 4)
    }))

  for (const [name, headers] of [
    ["only X-RateLimit-Reset-After", { "x-ratelimit-reset-after": "3" }],
    ["only X-RateLimit-Remaining", { "x-ratelimit-remaining": "0" }]
  ] as const) {
    it.effect(`an answer with ${name} changes nothing: the next call is sent, a busy route says Retry-After 1`, () =>
      Effect.gen(function*() {
        const limiter = yield* limits({ waitBudget: "1 second" })
        let sent = 0
        yield* limiter.run(target, Effect.sync(() => (sent++, answer(200, headers))))
        // The next call holds the bucket for 5 s; it is sent at once.
        const holder = yield* Effect.forkChild(
          limiter.run(target, Effect.sync(() => sent++).pipe(Effect.andThen(Effect.sleep("5 seconds")), Effect.as(answer(200))))
        )
        yield* Effect.yieldNow
        assert.strictEqual(sent, 2)
        const waiter = yield* Effect.forkChild(Effect.flip(limiter.run(target, Effect.sync(() => (sent++, answer(200))))))
        yield* TestClock.adjust("1 second")
        const error = refusal(yield* Fiber.join(waiter))
        assert.include(error.message, "route busy")
        // No reset is known: the shortest wait, never a reset read from half the headers.
        assert.strictEqual(error.retryAfter, 1)
        yield* TestClock.adjust("4 seconds")
        yield* Fiber.join(holder)
        assert.strictEqual(sent, 2)
      }))
  }
})
