/**
 * The Discord client's caches (layers/platform/discord/DiscordCache.ts) read a kept answer in one step on the
 * hot path (issue #16): that step must keep exactly what `Cache.has` + `Cache.get` kept — the TTL,
 * invalidation, failures never kept, and the least-recently-used order at capacity.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { cached, makeKeys } from "../../src/layers/platform/discord/DiscordCache.ts"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"

const setup = (capacity: number, failing: Set<string> = new Set()) =>
  Effect.gen(function*() {
    const calls: Array<string> = []
    const cache = yield* cached("hotpath_test", capacity, "30 seconds", (key) =>
      Effect.suspend(() => {
        calls.push(key.arg)
        return failing.has(key.arg)
          ? Effect.fail(new PlatformRejected({ status: 404, message: "Unknown Guild" }))
          : Effect.succeed(`${key.arg}#${calls.length}`)
      }))
    const keyOf = makeKeys()
    const token = Redacted.make("bot-token")
    const get = (arg: string) => cache.get(keyOf("Bot", "guild", token, arg))
    return { calls, cache, get, key: (arg: string) => keyOf("Bot", "guild", token, arg) }
  })

describe("DiscordCache hot read", () => {
  it.effect("a kept answer is served until its TTL, then read again", () =>
    Effect.gen(function*() {
      const { calls, get } = yield* setup(10)
      assert.strictEqual(yield* get("a"), "a#1")
      assert.strictEqual(yield* get("a"), "a#1")
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(yield* get("a"), "a#1")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* get("a"), "a#2")
      assert.deepStrictEqual(calls, ["a", "a"])
    }))

  it.effect("an invalidated answer is read again", () =>
    Effect.gen(function*() {
      const { cache, calls, get, key } = yield* setup(10)
      yield* get("a")
      yield* cache.invalidate(key("a"))
      assert.strictEqual(yield* get("a"), "a#2")
      assert.strictEqual(yield* get("a"), "a#2")
      assert.deepStrictEqual(calls, ["a", "a"])
    }))

  it.effect("a failure is never kept", () =>
    Effect.gen(function*() {
      const { calls, get } = yield* setup(10, new Set(["down"]))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(get("down"))))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(get("down"))))
      assert.deepStrictEqual(calls, ["down", "down"])
    }))

  it.effect("a hit counts as recently used: at capacity the least recently read answer goes", () =>
    Effect.gen(function*() {
      const { calls, get } = yield* setup(2)
      yield* get("a")
      yield* get("b")
      yield* get("a") // a hit: now b is the least recently used
      yield* get("c") // over capacity: b is evicted, not a
      assert.strictEqual(yield* get("a"), "a#1")
      assert.strictEqual(yield* get("b"), "b#4")
      assert.deepStrictEqual(calls, ["a", "b", "c", "b"])
    }))
})
