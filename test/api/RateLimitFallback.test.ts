/**
 * The counters one instance keeps for an outage of the shared store (http/edge/RateLimitFallback.ts):
 * counting on from the store's last answer, the store's window arithmetic, what is carried back
 * and when, one carry attempt at a time, and the bound on the keys kept.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeFallback, MAX_KEYS } from "../../src/http/edge/RateLimitFallback.ts"
import { RateLimitCarryError } from "../../src/services/infra/RateLimitCarry.ts"
import type { CarriedCount, RateLimitCarryShape } from "../../src/services/infra/RateLimitCarry.ts"

/** A store that takes every carry and remembers it. */
const recording = () => {
  const carried: Array<CarriedCount> = []
  const store: RateLimitCarryShape = { carry: (c) => Effect.sync(() => void carried.push(c)) }
  return { carried, store }
}
const unreachable: RateLimitCarryShape = { carry: () => Effect.fail(new RateLimitCarryError({ message: "connection refused" })) }

describe("counting in memory", () => {
  it("a key the store never answered for: a fresh window, `refill` long per request, refused at the limit", () => {
    const fallback = makeFallback(recording().store)
    assert.deepStrictEqual(fallback.consume("api:u", 3, 1_000, 10_000), { admitted: true, count: 1, ttlMillis: 1_000 })
    assert.deepStrictEqual(fallback.consume("api:u", 3, 1_000, 10_500), { admitted: true, count: 2, ttlMillis: 1_500 })
    assert.deepStrictEqual(fallback.consume("api:u", 3, 1_000, 10_500), { admitted: true, count: 3, ttlMillis: 2_500 })
    assert.deepStrictEqual(fallback.consume("api:u", 3, 1_000, 11_000), { admitted: false, count: 3, ttlMillis: 2_000 })
    assert.deepStrictEqual(fallback.consume("api:other", 3, 1_000, 11_000), { admitted: true, count: 1, ttlMillis: 1_000 }, "per key")
  })

  it("counts on from the store's last answer, not from zero", () => {
    const fallback = makeFallback(recording().store)
    fallback.observe("api:u", 2, 20_000, 0)
    assert.deepStrictEqual(fallback.consume("api:u", 3, 10_000, 5_000), { admitted: true, count: 3, ttlMillis: 25_000 })
    assert.deepStrictEqual(fallback.consume("api:u", 3, 10_000, 5_000), { admitted: false, count: 3, ttlMillis: 25_000 })
    // A later answer replaces the earlier one.
    fallback.observe("api:v", 1, 10_000, 0)
    fallback.observe("api:v", 3, 4_000, 1_000)
    assert.deepStrictEqual(fallback.consume("api:v", 3, 10_000, 2_000), { admitted: false, count: 3, ttlMillis: 3_000 })
  })

  it("a window ends at its last millisecond: the next request starts a new one", () => {
    const fallback = makeFallback(recording().store)
    fallback.observe("api:u", 3, 1_000, 0)
    assert.deepStrictEqual(fallback.consume("api:u", 3, 500, 999), { admitted: false, count: 3, ttlMillis: 1 })
    assert.deepStrictEqual(fallback.consume("api:u", 3, 500, 1_000), { admitted: true, count: 1, ttlMillis: 500 })
  })

  it("an answer that arrives after a count made here keeps that count", () => {
    const fallback = makeFallback(recording().store)
    fallback.consume("api:u", 5, 1_000, 0)
    fallback.observe("api:u", 2, 8_000, 0)
    assert.deepStrictEqual(fallback.consume("api:u", 5, 1_000, 0), { admitted: true, count: 4, ttlMillis: 9_000 })
  })
})

describe("carrying the outage's counts", () => {
  it.effect("what was counted here goes to the store once, with this instance's count and window", () =>
    Effect.gen(function*() {
      const { carried, store } = recording()
      const fallback = makeFallback(store)
      assert.isFalse(fallback.mustCarry())
      fallback.observe("api:u", 2, 20_000, 0)
      fallback.consume("api:u", 5, 10_000, 0)
      fallback.consume("api:u", 5, 10_000, 0)
      fallback.consume("api:w", 5, 10_000, 0)
      fallback.observe("api:x", 1, 10_000, 0)
      assert.isTrue(fallback.mustCarry())
      yield* TestClock.adjust("3 seconds")
      yield* fallback.carryPending
      assert.deepStrictEqual(carried, [
        { key: "api:u", pending: 2, count: 4, ttlMillis: 37_000, refillMillis: 10_000 },
        { key: "api:w", pending: 1, count: 1, ttlMillis: 7_000, refillMillis: 10_000 }
      ])
      assert.isFalse(fallback.mustCarry())
      yield* fallback.carryPending
      assert.strictEqual(carried.length, 2, "nothing twice")
    }))

  it.effect("a window that ended during the outage is not carried", () =>
    Effect.gen(function*() {
      const { carried, store } = recording()
      const fallback = makeFallback(store)
      fallback.consume("api:u", 5, 1_000, 0)
      fallback.consume("api:w", 5, 10_000, 0)
      yield* TestClock.adjust("1 second")
      yield* fallback.carryPending
      assert.deepStrictEqual(carried.map((c) => c.key), ["api:w"])
      assert.isFalse(fallback.mustCarry())
    }))

  it.effect("the store still unreachable: the carry fails and the counts keep waiting", () =>
    Effect.gen(function*() {
      let down = true
      const { carried, store } = recording()
      const fallback = makeFallback({ carry: (c) => down ? unreachable.carry(c) : store.carry(c) })
      fallback.consume("api:u", 5, 10_000, 0)
      const failed = yield* Effect.flip(fallback.carryPending)
      assert.strictEqual(failed.message, "connection refused")
      assert.isTrue(fallback.mustCarry())
      fallback.consume("api:u", 5, 10_000, 0)
      down = false
      yield* fallback.carryPending
      assert.deepStrictEqual(carried, [{ key: "api:u", pending: 2, count: 2, ttlMillis: 20_000, refillMillis: 10_000 }])
    }))

  it.effect("a count made while its key is being carried waits for the next carry", () =>
    Effect.gen(function*() {
      const carried: Array<CarriedCount> = []
      const fallback = makeFallback({
        carry: (c) =>
          Effect.sync(() => {
            carried.push(c)
            if (carried.length === 1) fallback.consume("api:u", 5, 10_000, 0)
          })
      })
      fallback.consume("api:u", 5, 10_000, 0)
      yield* fallback.carryPending
      assert.isTrue(fallback.mustCarry())
      yield* fallback.carryPending
      assert.deepStrictEqual(carried.map((c) => [c.pending, c.count]), [[1, 1], [1, 2]])
      assert.isFalse(fallback.mustCarry())
    }))

  it.effect("a window that ended and began again during its carry: the new window's count waits", () =>
    Effect.gen(function*() {
      const carried: Array<CarriedCount> = []
      const fallback = makeFallback({
        carry: (c) =>
          Effect.sync(() => {
            carried.push(c)
            // The old window (ending at 10 s) is over at 11 s: a new one, counted here.
            if (carried.length === 1) fallback.consume("api:u", 5, 10_000, 11_000)
          })
      })
      fallback.consume("api:u", 5, 10_000, 0)
      yield* fallback.carryPending
      assert.isTrue(fallback.mustCarry())
      yield* TestClock.adjust("11 seconds")
      yield* fallback.carryPending
      assert.deepStrictEqual(carried.map((c) => [c.pending, c.count, c.ttlMillis]), [[1, 1, 10_000], [1, 1, 10_000]])
    }))

  it.effect("one attempt at a time: a request during an attempt waits for it, and shares its outcome", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      let calls = 0
      const fallback = makeFallback({
        carry: () =>
          Effect.andThen(Effect.sync(() => void calls++), Deferred.await(release)).pipe(
            Effect.andThen(Effect.fail(new RateLimitCarryError({ message: "timed out" })))
          )
      })
      fallback.consume("api:u", 5, 10_000, 0)
      const first = yield* Effect.forkChild(Effect.flip(fallback.carryPending))
      yield* Effect.yieldNow
      const second = yield* Effect.forkChild(Effect.flip(fallback.carryPending))
      yield* Effect.yieldNow
      assert.strictEqual(calls, 1)
      // The request that began the attempt leaves: the attempt still ends, for the one waiting.
      const interrupted = yield* Effect.forkChild(Fiber.interrupt(first))
      yield* Effect.yieldNow
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual((yield* Fiber.join(second)).message, "timed out")
      yield* Fiber.join(interrupted)
      assert.strictEqual(calls, 1)
      // The next request makes a new attempt.
      yield* Effect.flip(fallback.carryPending)
      assert.strictEqual(calls, 2)
    }))

  it.effect("many keys are carried a few at a time, not one by one nor all at once", () =>
    Effect.gen(function*() {
      let inFlight = 0
      let most = 0
      const fallback = makeFallback({
        carry: () =>
          Effect.gen(function*() {
            most = Math.max(most, ++inFlight)
            yield* Effect.yieldNow
            inFlight--
          })
      })
      for (let i = 0; i < 40; i++) fallback.consume(`api:${i}`, 5, 10_000, 0)
      yield* fallback.carryPending
      assert.strictEqual(most, 16)
      assert.isFalse(fallback.mustCarry())
    }))
})

describe("the keys kept", () => {
  it("at most `maxKeys`: the ended windows go first, then the oldest keys, down to nine tenths", () => {
    const fallback = makeFallback(recording().store, 10)
    for (let i = 0; i < 3; i++) fallback.observe(`api:ended${i}`, 1, 100, 0)
    for (let i = 0; i < 7; i++) fallback.observe(`api:${i}`, 3, 10_000, 0)
    assert.strictEqual(fallback.size(), 10)
    fallback.observe("api:new", 3, 10_000, 100)
    assert.strictEqual(fallback.size(), 8, "the three ended windows went, nothing else")
    fallback.observe("api:new2", 3, 10_000, 100)
    fallback.observe("api:new3", 3, 10_000, 100)
    assert.strictEqual(fallback.size(), 10)
    fallback.consume("api:new4", 3, 1_000, 100)
    assert.strictEqual(fallback.size(), 9)
    // The two oldest open windows went: they start again; the others still refuse.
    assert.isTrue(fallback.consume("api:0", 3, 1_000, 100).admitted)
    assert.isFalse(fallback.consume("api:2", 3, 1_000, 100).admitted)
    assert.isFalse(fallback.consume("api:new3", 3, 1_000, 100).admitted)
  })

  it("a key whose window begins again is the newest: the last to go", () => {
    const fallback = makeFallback(recording().store, 4)
    fallback.observe("api:a", 3, 100, 0)
    fallback.observe("api:b", 3, 10_000, 0)
    fallback.observe("api:c", 3, 10_000, 0)
    assert.isTrue(fallback.consume("api:a", 3, 1_000, 100).admitted)
    fallback.observe("api:d", 3, 10_000, 100)
    fallback.observe("api:e", 3, 10_000, 100)
    assert.strictEqual(fallback.size(), 4)
    assert.deepStrictEqual(fallback.consume("api:a", 3, 1_000, 100), { admitted: true, count: 2, ttlMillis: 2_000 })
    assert.isTrue(fallback.consume("api:b", 3, 1_000, 100).admitted, "b, now the oldest, went")
  })

  it.effect("a key that goes takes its counts to carry with it", () =>
    Effect.gen(function*() {
      const { carried, store } = recording()
      const fallback = makeFallback(store, 2)
      fallback.consume("api:a", 3, 10_000, 0)
      fallback.observe("api:b", 1, 10_000, 0)
      fallback.observe("api:c", 1, 10_000, 0)
      assert.isFalse(fallback.mustCarry())
      yield* fallback.carryPending
      assert.deepStrictEqual(carried, [])
    }))

  it("100,000 by default", () => {
    assert.strictEqual(MAX_KEYS, 100_000)
    const fallback = makeFallback(recording().store)
    for (let i = 0; i <= MAX_KEYS; i++) fallback.observe(`api:${i}`, 1, 10_000, 0)
    assert.strictEqual(fallback.size(), 90_000)
  })
})
