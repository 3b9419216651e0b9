/**
 * The carry of an outage's counts into Redis (layers/infra/RateLimitCarryRedis.ts) on a real Redis,
 * on the keys Effect's Redis store counts: a key Redis kept, one other instances counted in
 * meanwhile, one Redis lost, and Redis still unreachable.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { RateLimiter, Redis } from "effect/persistence"
import { randomBytes } from "node:crypto"
import { RedisClientLive } from "../../src/layers/infra/RedisClient.ts"
import { RateLimitCarryRedis } from "../../src/layers/infra/RateLimitCarryRedis.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { RateLimitCarry } from "../../src/services/infra/RateLimitCarry.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { redisProxy } from "../utils/RedisProxy.ts"

const REDIS = process.env.TEST_REDIS_URL

/** The carry, the store and raw Redis on `url`, under a prefix of the test's own. */
const onRedis = (url: string) =>
  Effect.gen(function*() {
    const prefix = `gateway-carry-${randomBytes(4).toString("hex")}:ratelimit:`
    const redisLayer = RedisClientLive(url)
    const context = yield* Layer.build(Layer.mergeAll(
      RateLimitCarryRedis(prefix),
      RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreRedis({ prefix }))),
      redisLayer
    ).pipe(Layer.provide(redisLayer)))
    const redis = Context.get(context, Redis.Redis)
    /** The stored count and the ms left of it (-2: no key). */
    const stored = (key: string) =>
      Effect.all([redis.send<string | null>("GET", prefix + key), redis.send<number>("PTTL", prefix + key)])
    return {
      carry: Context.get(context, RateLimitCarry),
      limiter: Context.get(context, RateLimiter.RateLimiter),
      stored,
      set: (key: string, value: string) => redis.send("SET", prefix + key, value)
    }
  }).pipe(Effect.provide(CapturedLogs.layer), Effect.provideService(DependencyHealth, makeDependencyHealth()))

const count = (limiter: RateLimiter.RateLimiter, key: string, n: number) =>
  Effect.forEach(Array.from({ length: n }), () =>
    limiter.consume({ algorithm: "fixed-window", onExceeded: "fail", window: "60 seconds", limit: 6, key }))

/**
 * At most `expected`, and below it by no more than the time since `since` (a Date.now() read before
 * the first Redis command `expected` stands on: Redis's clock runs between it and the read; Redis's
 * clock may round by 1 ms), however slow the machine.
 */
const near = (actual: number, expected: number, since: number) => {
  const slack = Date.now() - since + 2
  assert.isTrue(actual <= expected && actual >= expected - slack, `${actual} not within ${slack} ms below ${expected}`)
}

describe.runIf(REDIS !== undefined)("carrying into Redis (TEST_REDIS_URL)", () => {
  it.live("a key Redis kept: the outage's requests added with their refill, and the store refuses on it", () =>
    Effect.gen(function*() {
      const { carry, limiter, stored } = yield* onRedis(REDIS!)
      yield* count(limiter, "api:u", 2)
      const since = Date.now()
      const [, before] = yield* stored("api:u")
      yield* carry.carry({ key: "api:u", pending: 3, count: 5, ttlMillis: 45_000, refillMillis: 10_000 })
      const [value, pttl] = yield* stored("api:u")
      assert.strictEqual(value, "5")
      near(pttl, before + 30_000, since)
      const next = yield* count(limiter, "api:u", 1)
      assert.strictEqual(next[0]!.remaining, 0)
      const refused = yield* Effect.flip(count(limiter, "api:u", 1))
      assert.strictEqual(refused.reason._tag, "RateLimitExceeded")
    }).pipe(Effect.scoped))

  it.live("other instances counted in it meanwhile: theirs stay, this instance's are added", () =>
    Effect.gen(function*() {
      const { carry, limiter, stored } = yield* onRedis(REDIS!)
      yield* count(limiter, "api:u", 4)
      const since = Date.now()
      const [, before] = yield* stored("api:u")
      // This instance last saw 1 and counted 2 here.
      yield* carry.carry({ key: "api:u", pending: 2, count: 3, ttlMillis: 25_000, refillMillis: 10_000 })
      const [value, pttl] = yield* stored("api:u")
      assert.strictEqual(value, "6")
      near(pttl, before + 20_000, since)
    }).pipe(Effect.scoped))

  it.live("never below this instance's own count and window (a key Redis began again after losing it)", () =>
    Effect.gen(function*() {
      const { carry, limiter, stored } = yield* onRedis(REDIS!)
      yield* count(limiter, "api:u", 1)
      const since = Date.now()
      yield* carry.carry({ key: "api:u", pending: 2, count: 5, ttlMillis: 50_000, refillMillis: 10_000 })
      const [value, pttl] = yield* stored("api:u")
      assert.strictEqual(value, "5")
      near(pttl, 50_000, since)
    }).pipe(Effect.scoped))

  it.live("a key Redis lost: this instance's count and what is left of its window", () =>
    Effect.gen(function*() {
      const { carry, stored } = yield* onRedis(REDIS!)
      const since = Date.now()
      yield* carry.carry({ key: "api:gone", pending: 2, count: 4, ttlMillis: 12_345.5, refillMillis: 10_000 })
      const [value, pttl] = yield* stored("api:gone")
      assert.strictEqual(value, "4")
      near(pttl, 12_346, since)
    }).pipe(Effect.scoped))

  it.live("a key without expiry (not one the store wrote) gets one", () =>
    Effect.gen(function*() {
      const { carry, set, stored } = yield* onRedis(REDIS!)
      yield* set("api:x", "3")
      const since = Date.now()
      yield* carry.carry({ key: "api:x", pending: 1, count: 1, ttlMillis: 5_000, refillMillis: 10_000 })
      const [value, pttl] = yield* stored("api:x")
      assert.strictEqual(value, "4")
      near(pttl, 10_000, since)
    }).pipe(Effect.scoped))

  it.live("Redis unreachable: a RateLimitCarryError naming why", () =>
    Effect.gen(function*() {
      const proxy = yield* redisProxy(new URL(REDIS!))
      const { carry } = yield* onRedis(proxy.url)
      proxy.cut()
      yield* Effect.sleep("100 millis")
      const error = yield* Effect.flip(carry.carry({ key: "api:u", pending: 1, count: 1, ttlMillis: 10_000, refillMillis: 10_000 }))
      assert.strictEqual(error._tag, "RateLimitCarryError")
      assert.match(error.message, /^Failed to carry rate-limit counts: \S/)
    }).pipe(Effect.scoped))
})
