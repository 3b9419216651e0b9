/**
 * The global budget's sliding log (DiscordGlobalBudget.ts), in memory and, with TEST_REDIS_URL, in
 * Redis (its Lua script, on Redis's clock): the waits it answers, and that a refused reservation
 * takes no slot.
 */
import { NodeRedis } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { DiscordGlobalBudget } from "../../src/layers/platform/discord/DiscordGlobalBudget.ts"

const redisUrl = process.env["TEST_REDIS_URL"]

const stores: ReadonlyArray<readonly [string, Layer.Layer<DiscordGlobalBudget, unknown>]> = [
  ["memory", DiscordGlobalBudget.layerMemory],
  ...(redisUrl === undefined ? [] : [[
    "Redis",
    DiscordGlobalBudget.layerRedis({ prefix: "test:global-budget:" }).pipe(Layer.provide(NodeRedis.layer({ url: redisUrl })))
  ] as const])
]

for (const [name, store] of stores) {
  describe(`the global budget's sliding log (${name})`, () => {
    const budget = Layer.build(store).pipe(Effect.map((context) => Context.get(context, DiscordGlobalBudget)))
    const fresh = () => `k:${Date.now()}:${Math.random()}`

    it.live("up to the limit at once, then a window after the limit-th last", () =>
      Effect.gen(function*() {
        const log = yield* budget
        const key = fresh()
        const waits = []
        for (let i = 0; i < 5; i++) waits.push(yield* log.reserve(key, 3, 1000, 10_000))
        assert.deepStrictEqual(waits.slice(0, 3), Array.from({ length: 3 }, () => ({ waitMs: 0, reserved: true })))
        // The 4th and 5th: 1 s after the 1st and 2nd (less the few ms this loop took).
        for (const { reserved, waitMs } of waits.slice(3)) {
          assert.isTrue(reserved)
          assert.isAtLeast(waitMs, 900)
          assert.isAtMost(waitMs, 1000)
        }
        // The 6th: a window after the 3rd (now), not after the 5th.
        const sixth = yield* log.reserve(key, 3, 1000, 10_000)
        assert.isAtLeast(sixth.waitMs, 900)
        assert.isAtMost(sixth.waitMs, 1000)
        // The 7th: a window after the 4th (about 1 s from now), so about 2 s.
        const seventh = yield* log.reserve(key, 3, 1000, 10_000)
        assert.isAtLeast(seventh.waitMs, 1900)
        assert.isAtMost(seventh.waitMs, 2000)
      }))

    it.live("a wait past the caller's longest reserves nothing; other keys have their own log", () =>
      Effect.gen(function*() {
        const log = yield* budget
        const key = fresh()
        yield* log.reserve(key, 1, 1000, 0)
        const refused = yield* log.reserve(key, 1, 1000, 500)
        assert.isFalse(refused.reserved)
        // The wait it would have had (the 503's Retry-After): up to a window.
        assert.isAbove(refused.waitMs, 500)
        assert.isAtMost(refused.waitMs, 1000)
        // Nothing was reserved: the next caller willing to wait gets the same slot, not one after it.
        const next = yield* log.reserve(key, 1, 1000, 10_000)
        assert.isTrue(next.reserved)
        assert.isAtMost(next.waitMs, 1000)
        assert.deepStrictEqual(yield* log.reserve(fresh(), 1, 1000, 0), { waitMs: 0, reserved: true })
      }))

    if (name === "Redis") {
      it.live("the log expires a window after its last slot", () =>
        Effect.gen(function*() {
          const log = yield* budget
          const redis = yield* Effect.map(Layer.build(NodeRedis.layer({ url: redisUrl! })), (context) => Context.get(context, Redis.Redis))
          const key = fresh()
          yield* log.reserve(key, 2, 1000, 0)
          yield* log.reserve(key, 2, 1000, 0)
          yield* log.reserve(key, 2, 1000, 10_000)
          const ttl = yield* redis.send<number>("PTTL", `test:global-budget:${key}`)
          // The third slot is ~1 s away: the log lives ~2 s.
          assert.isAbove(ttl, 1500)
          assert.isAtMost(ttl, 2000)
          assert.strictEqual(yield* redis.send<number>("LLEN", `test:global-budget:${key}`), 2)
        }))
    }
  })
}

describe("the global budget's Redis store failing", () => {
  it.effect("a script that fails is the store's failure (RateLimitStoreError), which the limiter counts in memory", () =>
    Effect.gen(function*() {
      const down = new Redis.RedisError({ cause: new Error("ECONNREFUSED") })
      const failing = Layer.succeed(Redis.Redis, {
        send: () => Effect.fail(down),
        subscribe: () => Effect.die("unused"),
        eval: () => () => Effect.fail(down),
        reserve: Effect.die("unused")
      } as Redis.Redis["Service"])
      const log = yield* Layer.build(DiscordGlobalBudget.layerRedis({ prefix: "x:" }).pipe(Layer.provide(failing)))
        .pipe(Effect.map((context) => Context.get(context, DiscordGlobalBudget)))
      const error = yield* Effect.flip(log.reserve("k", 1, 1000, 0))
      assert.strictEqual(error._tag, "RateLimiterError")
      assert.strictEqual(error.reason._tag, "RateLimitStoreError")
      assert.strictEqual(error.reason.message, "Failed to reserve a global budget slot")
      assert.strictEqual((error.reason as { readonly cause?: unknown }).cause, down)
    }))
})
