/**
 * Requests whose order does not matter (`RouteTarget.unordered`: a channel's review messages,
 * summaries, a form's start message) go together within their bucket's known `remaining`, where every
 * other request of a bucket waits for the one before it (DiscordRateLimits.ts). On the test clock
 * against a scripted bucket (5 requests per 2 s window, counted as the platform counts them, each
 * answered 100 ms or more after it is received), and over HTTP against the sandbox platform, whose
 * channel bucket is 50 a second.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import type { RouteTarget } from "../../src/layers/platform/discord/DiscordRateLimits.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT1_TOKEN } from "../../src/sandbox/Seed.ts"
import { CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { answer, calls, clearFaults, limits, sandboxClient, sentSince } from "./RateLimitFixtures.ts"

const channel = { identity: "bot:x", route: "POST /channels/:channel/messages", major: "1" }
const unordered: RouteTarget = { ...channel, unordered: true }
const FAR = 1_000_000

/**
 * The platform's bucket: 5 requests per 2 s window from the window's first request. A request is
 * counted when it is received; its answer (`remaining` and `reset-after` as counted then, or a 429)
 * leaves `delay(remaining)` ms later.
 */
const platformBucket = (delay: (remaining: number) => number = () => 100) => {
  let windowStart = -Infinity
  let count = 0
  let inFlight = 0
  const seen = { sentAt: [] as Array<number>, most: 0, tooMany: 0 }
  const send = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    if (now >= windowStart + 2000) {
      windowStart = now
      count = 0
    }
    count++
    const remaining = 5 - count
    const resetAfter = (windowStart + 2000 - now) / 1000
    seen.sentAt.push(now)
    seen.most = Math.max(seen.most, ++inFlight)
    yield* Effect.sleep(`${delay(Math.max(0, remaining))} millis`)
    inFlight--
    if (remaining < 0) {
      seen.tooMany++
      return answer(429, { "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": String(resetAfter) }, JSON.stringify({ retry_after: resetAfter, global: false }))
    }
    return answer(200, { "x-ratelimit-remaining": String(remaining), "x-ratelimit-reset-after": String(resetAfter) })
  })
  return { send, seen }
}

describe("unordered requests on the test clock", () => {
  it.effect("go together up to the bucket's remaining once its window is known, then wait for its reset", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      const { send, seen } = platformBucket()
      const fibers = yield* Effect.forEach(Array.from({ length: 12 }), () => Effect.forkChild(limiter.run(unordered, send, FAR)))
      yield* TestClock.adjust("10 seconds")
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      // The first alone (nothing known yet); its answer says 4 left until 2.1 s: four at once; then
      // one alone after the reset to learn the new window, four at once, and so on. No 429.
      assert.deepStrictEqual(seen.sentAt, [0, 100, 100, 100, 100, 2100, 2200, 2200, 2200, 2200, 4200, 4300])
      assert.strictEqual(seen.most, 4)
      assert.strictEqual(seen.tooMany, 0)
    }))

  it.effect("requests in order go one after another, whatever the bucket has left", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      const { send, seen } = platformBucket()
      const fibers = yield* Effect.forEach(Array.from({ length: 6 }), () => Effect.forkChild(limiter.run(channel, send, FAR)))
      yield* TestClock.adjust("10 seconds")
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      // The fifth's answer (at 500 ms) says 0 left until 2.1 s.
      assert.deepStrictEqual(seen.sentAt, [0, 100, 200, 300, 400, 2100])
      assert.strictEqual(seen.most, 1)
      assert.strictEqual(seen.tooMany, 0)
    }))

  it.effect("answers that arrive out of order: the lowest remaining of the window counts", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      // The more a request's answer says is left, the later it arrives: the last answer says 3 left.
      const { send, seen } = platformBucket((remaining) => 100 + 50 * remaining)
      const first = yield* Effect.forEach(Array.from({ length: 5 }), () => Effect.forkChild(limiter.run(unordered, send, FAR)))
      yield* TestClock.adjust("600 millis")
      yield* Effect.forEach(first, Fiber.join, { discard: true })
      assert.deepStrictEqual(seen.sentAt, [0, 300, 300, 300, 300])
      // Every token of the window is spent: the next waits for the reset (0 + 2 s, as learnt at 300 ms + 2 s).
      const next = yield* Effect.forkChild(limiter.run(unordered, send, FAR))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(next)
      assert.deepStrictEqual(seen.sentAt, [0, 300, 300, 300, 300, 2300])
      assert.strictEqual(seen.tooMany, 0)
    }))

  it.effect("an unordered request interrupted on its way gives its token back", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      let sent = 0
      const learnt = Effect.sync(() => (sent++, answer(200, { "x-ratelimit-remaining": "2", "x-ratelimit-reset-after": "60" })))
      yield* limiter.run(unordered, learnt, FAR)
      // Two tokens left for 60 s: two requests take them and hang; both are interrupted.
      const hanging = yield* Effect.forEach([1, 2], () =>
        Effect.forkChild(limiter.run(unordered, Effect.andThen(Effect.sync(() => sent++), Effect.never), FAR)))
      yield* TestClock.adjust("100 millis")
      assert.strictEqual(sent, 3)
      yield* Effect.forEach(hanging, Fiber.interrupt, { discard: true })
      // Their tokens are free again: two more go at once, long before the reset.
      const again = yield* Effect.forEach([1, 2], () =>
        Effect.forkChild(limiter.run(unordered, Effect.andThen(Effect.sleep("100 millis"), Effect.sync(() => (sent++, answer(200)))), FAR)))
      yield* TestClock.adjust("100 millis")
      yield* Effect.forEach(again, Fiber.join, { discard: true })
      assert.strictEqual(sent, 5)
    }))

  it.effect("a 429 to a request sent alongside spends the bucket: the refused one goes again at its reset", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      let calls = 0
      const at: Array<number> = []
      // The platform said 3 left until 5 s, but refuses the third request received (a limit it shares
      // elsewhere, for 1 s). Answers leave 100 ms after the request.
      const send = Effect.gen(function*() {
        at.push(yield* Clock.currentTimeMillis)
        const n = ++calls
        yield* Effect.sleep("100 millis")
        if (n === 1) return answer(200, { "x-ratelimit-remaining": "3", "x-ratelimit-reset-after": "5" })
        if (n === 3) return answer(429, {}, JSON.stringify({ retry_after: 1, global: false }))
        return answer(200, { "x-ratelimit-remaining": "1", "x-ratelimit-reset-after": "4.9" })
      })
      const fibers = yield* Effect.forEach([1, 2, 3, 4], () => Effect.forkChild(limiter.run(unordered, send, FAR)))
      yield* TestClock.adjust("10 seconds")
      const results = yield* Effect.forEach(fibers, Fiber.join)
      assert.deepStrictEqual(results.map((r) => r.status), [200, 200, 200, 200])
      // The first alone, three together at 100 ms; the refused one once more, at the bucket's reset
      // (100 ms + 5 s), not at the 429's own 1 s: a bucket that refused is spent until its reset.
      assert.deepStrictEqual(at, [0, 100, 100, 100, 5100])
    }))
})

describe("what answers teach, on the test clock", () => {
  it.effect("in order, the latest answer's window counts, even a shorter one", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      const at: Array<number> = []
      const answers = [{ remaining: "1", resetAfter: "10" }, { remaining: "0", resetAfter: "2" }, { remaining: "4", resetAfter: "2" }]
      const send = Effect.gen(function*() {
        at.push(yield* Clock.currentTimeMillis)
        const a = answers[at.length - 1]!
        return answer(200, { "x-ratelimit-remaining": a.remaining, "x-ratelimit-reset-after": a.resetAfter })
      })
      const fibers = yield* Effect.forEach([1, 2, 3], () => Effect.forkChild(limiter.run(channel, send, FAR)))
      yield* TestClock.adjust("20 seconds")
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      // The second answer: none left until 2 s (not the first answer's 10 s).
      assert.deepStrictEqual(at, [0, 0, 2000])
    }))

  it.effect("answers of requests sent alongside that arrive once their window is over start the next window", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      const at: Array<number> = []
      yield* limiter.run(unordered, Effect.succeed(answer(200, { "x-ratelimit-remaining": "2", "x-ratelimit-reset-after": "1" })), FAR)
      // Two together, both answered exactly at the window's end (1 s): the platform's new window has 4 then 3 left.
      const late = (remaining: string) =>
        Effect.andThen(Effect.sleep("1 second"), Effect.succeed(answer(200, { "x-ratelimit-remaining": remaining, "x-ratelimit-reset-after": "1" })))
      const pair = yield* Effect.forEach(["4", "3"], (r) => Effect.forkChild(limiter.run(unordered, late(r), FAR)))
      yield* TestClock.adjust("1 second")
      yield* Effect.forEach(pair, Fiber.join, { discard: true })
      // 3 left until 2 s: three go at once, the fourth at the reset.
      const send = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => at.push(now))).pipe(
        Effect.andThen(Effect.sleep("100 millis")),
        Effect.as(answer(200))
      )
      const four = yield* Effect.forEach([1, 2, 3, 4], () => Effect.forkChild(limiter.run(unordered, send, FAR)))
      yield* TestClock.adjust("5 seconds")
      yield* Effect.forEach(four, Fiber.join, { discard: true })
      assert.deepStrictEqual(at, [1000, 1000, 1000, 2000])
    }))

  it.effect("a request waiting for the reset waits again when a 429 sent alongside moved it later", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      yield* limiter.run(unordered, Effect.succeed(answer(200, { "x-ratelimit-remaining": "2", "x-ratelimit-reset-after": "10" })), FAR)
      // Two take the tokens: one answered at once, the other a 429 for 20 s, answered at 5 s.
      const fine = Effect.succeed(answer(200, { "x-ratelimit-remaining": "1", "x-ratelimit-reset-after": "10" }))
      let refused = false
      const refusedOnce = Effect.andThen(
        Effect.sleep("5 seconds"),
        Effect.sync(() => refused ? answer(200) : (refused = true, answer(429, {}, JSON.stringify({ retry_after: 20, global: false }))))
      )
      const first = yield* Effect.forEach([fine, refusedOnce], (send) => Effect.forkChild(limiter.run(unordered, send, FAR)))
      yield* TestClock.adjust("100 millis")
      // Another finds no token: it waits for the reset at 10 s, and then for the 429's 25 s.
      let sentAt = -1
      const waiter = yield* Effect.forkChild(limiter.run(channel, Effect.map(Clock.currentTimeMillis, (now) => (sentAt = now, answer(200))), FAR))
      yield* TestClock.adjust("60 seconds")
      yield* Effect.forEach([...first, waiter], Fiber.join, { discard: true })
      assert.strictEqual(sentAt, 25_000)
    }))
})

const MESSAGES = "POST /channels/{id}/messages"

layer(SandboxServer.layer(), { excludeTestServices: true })("unordered messages against the sandbox platform", (it) => {
  it.effect("60 messages in one channel at once: every one posted, none refused, in two of the channel's windows", () =>
    Effect.gen(function*() {
      yield* clearFaults
      const platform = yield* sandboxClient()
      const before = yield* calls
      const started = yield* Clock.currentTimeMillis
      const ids = yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) => platform.createMessage(Redacted.make(BOT1_TOKEN), channelId(1, CHANNEL_INDEX.text2), { content: `message ${i}`, allowed_mentions: { parse: [] } }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(ids).size, 60)
      // Every request sent once: a 429 would have been sent again.
      assert.strictEqual((yield* sentSince(before))(MESSAGES), 60)
      // The channel's bucket is 50 a second: the last ten wait for its reset, not for 59 round trips.
      assert.isBelow((yield* Clock.currentTimeMillis) - started, 5000)
    }))
})
