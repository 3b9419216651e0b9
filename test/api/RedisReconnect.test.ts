/**
 * Issue #12: a Redis client that stopped reconnecting after a socket time-out left the rate limits
 * counting in one instance's memory until a restart. Here the gateway reaches the shared Redis
 * (TEST_REDIS_URL, never stopped) through a proxy the test blackholes and restores, with a short
 * socket time-out so that the partition ends the connection by a time-out: once Redis answers again,
 * requests are counted in Redis again (what Redis holds is what the test checks).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { RedisSocketTuning } from "../../src/layers/infra/RedisClient.ts"
import { logged } from "../utils/CapturedLogs.ts"
import type { RedisProxy } from "../utils/RedisProxy.ts"
import { gatewayBehindProxy, storedAuthCount } from "../utils/RedisGateway.ts"
import { CLIENT_REDIRECT, raw } from "../utils/TestApp.ts"

const REDIS = process.env.TEST_REDIS_URL
const LOGIN = `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}`
const PREFIX = `gateway-reconnect-${process.pid}-${Date.now()}:`

/** The /auth requests Redis has counted for this file's gateway (every key under its prefix). */
const storedCount = Effect.suspend(() => storedAuthCount(REDIS!, PREFIX))

const login = Effect.gen(function*() {
  const res = yield* raw({}, LOGIN)
  yield* Effect.promise(() => res.arrayBuffer())
  assert.strictEqual(res.status, 307, "a sign-in start is admitted (counted in Redis or, meanwhile, in memory)")
})

describe.runIf(REDIS !== undefined)("rate limits after Redis comes back (TEST_REDIS_URL)", () => {
  let proxy: RedisProxy | undefined
  // An idle connection ends by a socket time-out after 400 ms (node-redis has none by default).
  const app = gatewayBehindProxy(REDIS ?? "", PREFIX, (p) => (proxy = p), Layer.succeed(RedisSocketTuning, { socketTimeout: 400 }))

  layer(app, { excludeTestServices: true, timeout: 60_000 })("blackholed, timed out, restored", (it) => {
    it.effect("counting goes back to Redis once it answers again, whatever ended the connection", () =>
      Effect.gen(function*() {
        // Counted in Redis while it answers (a request that meets the client reconnecting after an
        // idle time-out is counted in memory: hence a few tries).
        let before = 0
        for (let i = 0; i < 20 && before === 0; i++) {
          yield* login
          before = yield* storedCount
        }
        assert.isAbove(before, 0, "counted in Redis while it answers")

        // A partition: nothing passes, the idle connection ends by a socket time-out, and every
        // attempt to reconnect through the partition times out too.
        proxy!.blackhole()
        yield* Effect.sleep("1500 millis")
        for (let i = 0; i < 5; i++) yield* login
        assert.strictEqual(yield* storedCount, before, "nothing reached Redis during the partition")

        // Redis answers again: within a bounded wait, the gateway's requests are counted there again.
        proxy!.restore()
        let now = before
        for (let i = 0; i < 60 && now === before; i++) {
          yield* login
          yield* Effect.sleep("250 millis")
          now = yield* storedCount
        }
        assert.isAbove(now, before, "the limiter stayed on memory counting after Redis came back")

        // What an operator read meanwhile: each outage a "down" line then a "back" line (idle
        // time-outs may add pairs, or a "down" just now), down_for_ms plausible.
        const lines = (yield* logged("dependency")).filter((l) => l.text.includes(": redis"))
        const kinds = lines.map((l) => /^dependency (down|still down|back)/.exec(l.text)?.[1])
        kinds.forEach((kind, i) => assert.strictEqual(kind, i % 2 === 0 ? "down" : "back", JSON.stringify(lines)))
        const downFor = lines.filter((l) => l.text.startsWith("dependency back")).map((l) => l.annotations["down_for_ms"] as number)
        for (const ms of downFor) {
          assert.isAtLeast(ms, 0, JSON.stringify(lines))
          assert.isBelow(ms, 10 * 60_000, `an outage of this test lasted ${ms} ms?`)
        }
        assert.isAtLeast(Math.max(...downFor), 1_000, "the partition (1.5 s at least) is one of them")
      }).pipe(Effect.ensuring(Effect.sync(() => proxy!.restore()))))
  })
})
