/**
 * Issue #30 item 4: the `/api` limit across an outage of the shared counters, on a real Redis cut and
 * restored through a proxy. Within one window a user limited to L gets at most L through one
 * instance, and at most N × L minus what each instance last saw counted through N (README "Rate
 * limits"): the memory fallback starts from the count this instance last saw, and the outage's counts
 * are carried into Redis before Redis counts again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { redisProxy } from "../utils/RedisProxy.ts"
import { raw, signIn, TestApp } from "../utils/TestApp.ts"

const REDIS = process.env.TEST_REDIS_URL
const LIMIT = 6

type Instance = Context.Context<TestApp | CapturedLogs>

/** A gateway on PGlite whose counters are in the Redis behind `redisUrl`, its Warn lines captured. */
const instance = (redisUrl: string, prefix: string) =>
  Layer.build(TestApp.layer({
    capabilities: { db: "pglite" },
    config: { redisUrl, redisKeyPrefix: prefix, rateLimitApiPerMinute: LIMIT }
  }).pipe(Layer.provideMerge(CapturedLogs.layer)))

/** `n` requests of one user through one instance: their statuses and RateLimit fields. */
const requests = (at: Instance, token: string, n: number) =>
  Effect.gen(function*() {
    const out: Array<{ status: number; ratelimit: string | null }> = []
    for (let i = 0; i < n; i++) {
      const res = yield* raw({ token }, "/api/v1/bots")
      out.push({ status: res.status, ratelimit: res.headers.get("ratelimit") })
      yield* Effect.promise(() => res.arrayBuffer())
    }
    return out
  }).pipe(Effect.provideContext(at))

const admitted = (answers: ReadonlyArray<{ status: number }>) => answers.filter((a) => a.status === 200).length

/** Requests through every instance until each has logged Redis back (bounded): what they were answered. */
const untilBack = (instances: ReadonlyArray<{ at: Instance; token: string }>) =>
  Effect.gen(function*() {
    const answers: Array<{ status: number; ratelimit: string | null }> = []
    const back = (at: Instance) => logged("dependency back: redis").pipe(Effect.provideContext(at), Effect.map((l) => l.length > 0))
    for (let i = 0; i < 100; i++) {
      let all = true
      for (const { at, token } of instances) {
        answers.push(...yield* requests(at, token, 1))
        if (!(yield* back(at))) all = false
      }
      if (all) return answers
      yield* Effect.sleep("100 millis")
    }
    throw new Error(`Redis not back after 10 s: ${JSON.stringify(answers)}`)
  })

describe.runIf(REDIS !== undefined)("the /api limit across a Redis outage (TEST_REDIS_URL)", () => {
  it.live("one instance: at most the limit within the window, before, during and after the outage", () =>
    Effect.gen(function*() {
      const proxy = yield* redisProxy(new URL(REDIS!))
      const a = yield* instance(proxy.url, `gateway-outage1-${randomBytes(4).toString("hex")}:`)
      const token = (yield* signIn(ALICE_ID).pipe(Effect.provideContext(a))).access_token

      const before = yield* requests(a, token, 2)
      assert.deepStrictEqual(before.map((r) => r.status), [200, 200])
      proxy.cut()
      // Counted in memory from the 2 Redis counted: 4 more, then refusals (not L more).
      const during = yield* requests(a, token, 8)
      assert.deepStrictEqual(during.map((r) => r.status), [200, 200, 200, 200, 429, 429, 429, 429], JSON.stringify(during))
      assert.match(during[0]!.ratelimit!, /^"api";r=3;t=\d+$/)
      assert.match(during[3]!.ratelimit!, /^"api";r=0;t=\d+$/)

      proxy.restore()
      // Redis answers again: the outage's 4 are in it before it counts, so the window goes on refusing.
      const reconnecting = yield* untilBack([{ at: a, token }])
      const after = yield* requests(a, token, 5)
      const all = [...before, ...during, ...reconnecting, ...after]
      assert.strictEqual(admitted(all), LIMIT, JSON.stringify(all))
      assert.isTrue(after.every((r) => r.status === 429 && /^"api";r=0;t=\d+$/.test(r.ratelimit!)), JSON.stringify(after))
    }).pipe(Effect.scoped), 60_000)

  it.live("two instances: each admits at most the limit minus the count it last saw, and Redis refuses after", () =>
    Effect.gen(function*() {
      const proxy = yield* redisProxy(new URL(REDIS!))
      const prefix = `gateway-outage2-${randomBytes(4).toString("hex")}:`
      const a = yield* instance(proxy.url, prefix)
      const b = yield* instance(proxy.url, prefix)
      // Each instance its own database and sign-in; both count the same user.
      const tokenA = (yield* signIn(ALICE_ID).pipe(Effect.provideContext(a))).access_token
      const tokenB = (yield* signIn(ALICE_ID).pipe(Effect.provideContext(b))).access_token

      // 3 counted in Redis: A last saw 2, B last saw 3.
      const before = [...yield* requests(a, tokenA, 2), ...yield* requests(b, tokenB, 1)]
      assert.deepStrictEqual(before.map((r) => r.status), [200, 200, 200])
      proxy.cut()
      const duringA = yield* requests(a, tokenA, LIMIT + 2)
      const duringB = yield* requests(b, tokenB, LIMIT + 2)
      assert.strictEqual(admitted(duringA), LIMIT - 2, JSON.stringify(duringA))
      assert.strictEqual(admitted(duringB), LIMIT - 3, JSON.stringify(duringB))

      proxy.restore()
      const reconnecting = yield* untilBack([{ at: a, token: tokenA }, { at: b, token: tokenB }])
      const after = [...yield* requests(a, tokenA, 3), ...yield* requests(b, tokenB, 3)]
      const all = [...before, ...duringA, ...duringB, ...reconnecting, ...after]
      // The documented bound: N × L minus what was counted before, as each instance last saw it.
      assert.strictEqual(admitted(all), 2 * LIMIT - 2, JSON.stringify(all))
      assert.isTrue(after.every((r) => r.status === 429), JSON.stringify(after))
    }).pipe(Effect.scoped), 60_000)
})
