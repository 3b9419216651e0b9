/**
 * How many forms a member may start (forms-runtime.md §2: more than 10 starts in a minute → "Slow
 * down" for the rest of that minute): the window the first start opens, in memory and on a real
 * Redis (TEST_REDIS_URL), and an unreachable Redis counted in memory, not refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { TestClock } from "effect/testing"
import { randomBytes } from "node:crypto"
import { RedisClientLive } from "../../src/layers/infra/RedisClient.ts"
import { StartLimitMemory, StartLimitRedis } from "../../src/layers/submissions/StartLimitLive.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { START_LIMIT, START_WINDOW_MS, StartLimit, windowCounter } from "../../src/services/submissions/StartLimit.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { failingRedis } from "../utils/FailingRedis.ts"

const REDIS = process.env.TEST_REDIS_URL

/** `n` starts of `key`: whether each was admitted. */
const starts = (limit: StartLimit["Service"], key: string, n: number) =>
  Effect.forEach(Array.from({ length: n }), () => limit.admit(key))

const admitted = (n: number, refused = 0) => [...Array<boolean>(n).fill(true), ...Array<boolean>(refused).fill(false)]

describe("the start window in memory", () => {
  it("ten starts admitted, the eleventh and later refused until the window the first opened ends", () => {
    const c = windowCounter()
    const got = Array.from({ length: 12 }, (_, i) => c.count("m", i * 1_000))
    assert.deepStrictEqual(got, admitted(10, 2))
    assert.isFalse(c.count("m", START_WINDOW_MS - 1), "still the first start's minute")
    assert.isTrue(c.count("m", START_WINDOW_MS), "a new window")
  })

  it("one start, a pause, then ten more: the eleventh within the minute is refused", () => {
    const c = windowCounter()
    assert.isTrue(c.count("m", 0))
    const later = Array.from({ length: 10 }, (_, i) => c.count("m", 7_000 + i * 100))
    assert.deepStrictEqual(later, admitted(9, 1))
  })

  it("members are counted apart; past the most windows kept, ended ones go first", () => {
    const c = windowCounter(START_LIMIT, START_WINDOW_MS, 3)
    for (let i = 0; i < 10; i++) c.count("a", 0)
    assert.isTrue(c.count("b", 0))
    assert.isFalse(c.count("a", 0))
    c.count("old", 0)
    assert.strictEqual(c.size(), 3)
    // At 60 s every window has ended: the new key takes an ended one's place.
    assert.isTrue(c.count("new", START_WINDOW_MS))
    assert.strictEqual(c.size(), 1)
  })

  it("past the most windows kept: the ended ones go and the open ones stay; with none ended, all go", () => {
    // Limit 1: a window still kept refuses its key's second start.
    const c = windowCounter(1, START_WINDOW_MS, 3)
    assert.isTrue(c.count("a", 0))
    assert.isTrue(c.count("b", 60_000), "a's window ended and is replaced only when needed")
    assert.strictEqual(c.size(), 2, "an ended window stays until the space is needed")
    assert.isTrue(c.count("c", 30_000))
    // Full (3) at 60 s: a's window has ended, b's and c's have not.
    assert.isTrue(c.count("d", 60_000))
    assert.strictEqual(c.size(), 3)
    assert.isFalse(c.count("c", 60_001), "c's window kept")
    assert.isFalse(c.count("b", 60_001), "b's window kept")
    // Full with none ended: all go, so the members' counts start again.
    assert.isTrue(c.count("e", 60_002))
    assert.strictEqual(c.size(), 1)
    assert.isTrue(c.count("c", 60_003), "c's count went with the others")
  })

  it.effect("StartLimitMemory follows Effect's clock", () =>
    Effect.gen(function*() {
      const limit = yield* Effect.map(Layer.build(StartLimitMemory), (ctx) => Context.get(ctx, StartLimit))
      assert.deepStrictEqual(yield* starts(limit, "m", 11), admitted(10, 1))
      yield* TestClock.adjust(START_WINDOW_MS - 1)
      assert.isFalse(yield* limit.admit("m"))
      yield* TestClock.adjust(1)
      assert.isTrue(yield* limit.admit("m"))
    }))
})

describe("the start window's Redis failing", () => {
  it.effect("an unreachable Redis counts in this instance's memory: members are not all told to slow down", () =>
    Effect.gen(function*() {
      const limit = yield* Effect.map(Layer.build(StartLimitRedis("x:").pipe(Layer.provide(failingRedis()))), (ctx) => Context.get(ctx, StartLimit))
      assert.deepStrictEqual(yield* starts(limit, "m", 11), admitted(10, 1))
      assert.isTrue(yield* limit.admit("other"))
      // The outage is said once, naming Redis and what it was counting.
      const outage = (yield* (yield* CapturedLogs).lines).filter((l) => l.text.includes("dependency down"))
      assert.strictEqual(outage.length, 1)
      assert.strictEqual(outage[0]!.text, "dependency down: redis")
      assert.strictEqual(outage[0]!.annotations["store"], "form starts")
      assert.strictEqual(outage[0]!.annotations["detail"], "ECONNREFUSED")
    }).pipe(Effect.provide(CapturedLogs.layer), Effect.provideService(DependencyHealth, makeDependencyHealth())))
})

describe.runIf(REDIS !== undefined)("the start window on Redis (TEST_REDIS_URL)", () => {
  it.live("shared by instances; the window is the first start's, later starts do not extend it", () =>
    Effect.gen(function*() {
      const prefix = `gateway-starts-${randomBytes(4).toString("hex")}:`
      const redisLayer = RedisClientLive(REDIS!)
      const context = yield* Layer.build(Layer.mergeAll(redisLayer, StartLimitRedis(prefix).pipe(Layer.provide(redisLayer))))
      const redis = Context.get(context, Redis.Redis)
      // A second instance: its own limiter on the same Redis.
      const other = yield* Effect.map(Layer.build(StartLimitRedis(prefix).pipe(Layer.provide(redisLayer))), (ctx) => Context.get(ctx, StartLimit))
      const one = Context.get(context, StartLimit)
      // The window opens with the first start (at `opened` or later) and lasts START_WINDOW_MS: less
      // what the start and the PTTL took, by the clock read around them (Redis's may round by 1 ms).
      const opened = Date.now()
      assert.isTrue(yield* one.admit("m"))
      const first = yield* redis.send<number>("PTTL", `${prefix}m`)
      const read = Date.now()
      assert.isAtLeast(first, START_WINDOW_MS - (read - opened) - 2)
      assert.isAtMost(first, START_WINDOW_MS)
      yield* Effect.sleep("1100 millis")
      assert.deepStrictEqual(yield* starts(other, "m", 9), admitted(9))
      assert.isFalse(yield* one.admit("m"))
      assert.isFalse(yield* other.admit("m"))
      // Not extended by the later starts: the first start's minute, a second of it gone.
      assert.isBelow(yield* redis.send<number>("PTTL", `${prefix}m`), first - 1_000)
      assert.isTrue(yield* one.admit("n"))
      yield* redis.send("DEL", `${prefix}m`, `${prefix}n`)
    }).pipe(Effect.scoped, Effect.provide(CapturedLogs.layer), Effect.provideService(DependencyHealth, makeDependencyHealth())))
})
