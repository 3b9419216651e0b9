/**
 * A partition between the gateway and Redis (no error, no answer), with node-redis as the gateway
 * runs it (no socket time-out): requests that count towards a rate limit are answered within the
 * command deadline (beyond what a request takes anyway), counted in this instance's memory meanwhile,
 * and counted in Redis again once it answers.
 * Before the command deadline (layers/infra/RedisClient.ts), each waited for an answer until the
 * kernel gave the connection up, minutes later. test/api/RedisReconnect.test.ts covers a partition
 * that ends the connection by a socket time-out.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { COMMAND_TIMEOUT_MS } from "../../src/layers/infra/RedisClient.ts"
import { logged } from "../utils/CapturedLogs.ts"
import type { RedisProxy } from "../utils/RedisProxy.ts"
import { gatewayBehindProxy, storedAuthCount } from "../utils/RedisGateway.ts"
import { CLIENT_REDIRECT, raw } from "../utils/TestApp.ts"

const REDIS = process.env.TEST_REDIS_URL
const LOGIN = `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}`
const PREFIX = `gateway-partition-${process.pid}-${Date.now()}:`

/** What a request during the partition may take beyond an ordinary one and the command deadline: a loaded machine's stalls. */
const MARGIN_MS = 4_000

/** The /auth requests Redis has counted for this file's gateway. */
const storedCount = Effect.suspend(() => storedAuthCount(REDIS!, PREFIX))

/** A sign-in start: its status and how long it took. */
const login = Effect.gen(function*() {
  const started = Date.now()
  const res = yield* raw({}, LOGIN)
  yield* Effect.promise(() => res.arrayBuffer())
  return { status: res.status, ms: Date.now() - started }
})

describe.runIf(REDIS !== undefined)("rate limits during a Redis partition (TEST_REDIS_URL)", () => {
  let proxy: RedisProxy | undefined
  // node-redis as the gateway runs it: no socket time-out.
  const app = gatewayBehindProxy(REDIS ?? "", PREFIX, (p) => (proxy = p))

  layer(app, { excludeTestServices: true, timeout: 60_000 })("silent, then back", (it) => {
    it.effect("answered within the command deadline while Redis is silent, counted there again once it answers", () =>
      Effect.gen(function*() {
        const first = yield* login
        assert.strictEqual(first.status, 307)
        const second = yield* login
        assert.strictEqual(second.status, 307)
        const before = yield* storedCount
        assert.isAbove(before, 0, "counted in Redis while it answers")

        // What a request takes on this machine now (the second, warm one), plus the command deadline
        // (each request meets it once: the count, or the carry before it), plus MARGIN_MS for a loaded
        // machine's stalls. Without the deadline a request waits until Redis answers: never during this
        // partition (the proxy holds what is sent), minutes in production (until the kernel gives the
        // connection up). A deadline of several seconds fails it too (one of ten times COMMAND_TIMEOUT_MS
        // does, wherever the partition's requests are no faster than the warm one).
        const bound = COMMAND_TIMEOUT_MS + second.ms + MARGIN_MS
        proxy!.blackhole()
        for (let i = 0; i < 4; i++) {
          const during = yield* login
          assert.strictEqual(during.status, 307, "admitted, counted in memory")
          assert.isBelow(during.ms, bound, "not held until Redis answers")
        }
        assert.strictEqual(yield* storedCount, before, "nothing reached Redis during the partition")
        assert.isAbove((yield* logged("dependency down")).length, 0, "the outage is logged")

        proxy!.restore()
        let now = before
        for (let i = 0; i < 40 && now === before; i++) {
          yield* login
          yield* Effect.sleep("100 millis")
          now = yield* storedCount
        }
        assert.isAbove(now, before, "counted in Redis again once it answers")
      }).pipe(Effect.ensuring(Effect.sync(() => proxy!.restore()))))
  })
})
