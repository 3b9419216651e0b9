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
import { failingRedis } from "../utils/FailingRedis.ts"

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
        // Each reservation with the clock read before and after it: a slot a window after the k-th
        // reservation answers a wait between (k's start + window − this one's end) and (k's end +
        // window − this one's start), however slow the machine (the store's clock may round by 1 ms).
        const calls: Array<{ readonly before: number; readonly after: number; readonly waitMs: number; readonly reserved: boolean }> = []
        const reserve = Effect.gen(function*() {
          const before = Date.now()
          const answer = yield* log.reserve(key, 3, 1000, 10_000)
          calls.push({ before, after: Date.now(), ...answer })
          return answer
        })
        const windowAfter = (k: number, call: number, windows = 1) => {
          const { reserved, waitMs } = calls[call]!
          assert.isTrue(reserved)
          assert.isAtLeast(waitMs, calls[k]!.before + windows * 1000 - calls[call]!.after - 2)
          assert.isAtMost(waitMs, calls[k]!.after + windows * 1000 - calls[call]!.before + 2)
        }
        for (let i = 0; i < 5; i++) yield* reserve
        assert.deepStrictEqual(
          calls.slice(0, 3).map(({ reserved, waitMs }) => ({ waitMs, reserved })),
          Array.from({ length: 3 }, () => ({ waitMs: 0, reserved: true }))
        )
        // The 4th and 5th: a window after the 1st and 2nd.
        windowAfter(0, 3)
        windowAfter(1, 4)
        // The 6th: a window after the 3rd (now), not after the 5th.
        yield* reserve
        windowAfter(2, 5)
        // The 7th: a window after the 4th, whose slot is itself a window after the 1st: two windows.
        yield* reserve
        windowAfter(0, 6, 2)
      }))

    it.live("a wait past the caller's longest reserves nothing; other keys have their own log", () =>
      Effect.gen(function*() {
        const log = yield* budget
        const key = fresh()
        // A 10 s window and a longest wait of 5 s: the refusal holds however slow the machine, as long
        // as the second reservation comes within 5 s of the first. Each wait is bounded by the clock
        // read before the first reservation and after the later one (the store's clock may round by 1 ms).
        const start = Date.now()
        yield* log.reserve(key, 1, 10_000, 0)
        const firstEnd = Date.now()
        const refusedStart = Date.now()
        const refused = yield* log.reserve(key, 1, 10_000, 5_000)
        const refusedEnd = Date.now()
        assert.isFalse(refused.reserved)
        // The wait it would have had (the 503's Retry-After): the first's slot a window on, past the 5 s.
        assert.isAbove(refused.waitMs, 5_000)
        assert.isAtLeast(refused.waitMs, start + 10_000 - refusedEnd - 2)
        assert.isAtMost(refused.waitMs, firstEnd + 10_000 - refusedStart + 2)
        // Nothing was reserved: the next caller willing to wait gets the same slot (a window after the
        // first), not one after it (two windows after the first).
        const nextStart = Date.now()
        const next = yield* log.reserve(key, 1, 10_000, 60_000)
        const nextEnd = Date.now()
        assert.isTrue(next.reserved)
        assert.isAtLeast(next.waitMs, start + 10_000 - nextEnd - 2)
        assert.isAtMost(next.waitMs, firstEnd + 10_000 - nextStart + 2)
        assert.deepStrictEqual(yield* log.reserve(fresh(), 1, 10_000, 0), { waitMs: 0, reserved: true })
      }))

    if (name === "Redis") {
      it.live("the log expires a window after its last slot", () =>
        Effect.gen(function*() {
          const log = yield* budget
          const redis = yield* Effect.map(Layer.build(NodeRedis.layer({ url: redisUrl! })), (context) => Context.get(context, Redis.Redis))
          const key = fresh()
          const before = Date.now()
          yield* log.reserve(key, 2, 1000, 0)
          yield* log.reserve(key, 2, 1000, 0)
          const third = yield* log.reserve(key, 2, 1000, 10_000)
          const ttl = yield* redis.send<number>("PTTL", `test:global-budget:${key}`)
          const after = Date.now()
          assert.isTrue(third.reserved)
          // The third slot is a window after the first (taken at `before` or later): the log lives until
          // a window after that, 2 s after the first, less the time the reservations and the PTTL took
          // (the store's clock may round by 1 ms).
          assert.isAtLeast(ttl, 2000 - (after - before) - 2)
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
      const log = yield* Layer.build(DiscordGlobalBudget.layerRedis({ prefix: "x:" }).pipe(Layer.provide(failingRedis(down))))
        .pipe(Effect.map((context) => Context.get(context, DiscordGlobalBudget)))
      const error = yield* Effect.flip(log.reserve("k", 1, 1000, 0))
      assert.strictEqual(error._tag, "RateLimiterError")
      assert.strictEqual(error.reason._tag, "RateLimitStoreError")
      assert.strictEqual(error.reason.message, "Failed to reserve a global budget slot")
      assert.strictEqual((error.reason as { readonly cause?: unknown }).cause, down)
    }))
})
