/**
 * Rate limits beyond one instance: the window resets; two gateways sharing a real Redis admit at
 * most the limit together; while the store is unreachable (a store that refuses every command, or
 * a real Redis killed while running) each instance counts in memory: the limits hold, never "admit all".
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { connect } from "node:net"
import { countRequest, makeFallbackLimiter } from "../../src/http/edge/RateLimit.ts"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { freePort, json, raw, signIn, TestApp } from "../utils/TestApp.ts"

describe("fixed window", () => {
  it.effect("the 4th request in a window is refused; the window resets when the clock moves", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      const fallback = yield* makeFallbackLimiter
      const policy = { name: "api", limit: 3, windowSeconds: 60 } as const
      const request = HttpServerRequest.fromWeb(new Request("http://gateway/api/v1/user"))
      const count = countRequest(limiter, policy, "user-1", fallback).pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, request),
        Effect.result
      )
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* count)._tag, "Success")
      const refused = yield* count
      assert.strictEqual(refused._tag, "Failure")
      if (refused._tag === "Failure") {
        assert.strictEqual(refused.failure._tag, "TooManyRequests")
        const retry = refused.failure.problems[0]!.additionalProperties!.retry_after as number
        assert.isAbove(retry, 0)
        assert.isAtMost(retry, 60)
      }
      yield* TestClock.adjust(Duration.seconds(61))
      assert.strictEqual((yield* count)._tag, "Success")
    }).pipe(Effect.provide(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)))))
})

/** A counter store that refuses every command, as Redis does while it is unreachable. */
const UnreachableStore = Layer.succeed(RateLimiter.RateLimiterStore, RateLimiter.RateLimiterStore.of({
  fixedWindow: () => Effect.fail(new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message: "connection refused" }) })),
  tokenBucket: () => Effect.fail(new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message: "connection refused" }) })),
  adaptiveConsume: () => Effect.fail(new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message: "connection refused" }) })),
  adaptiveFeedback: () => Effect.fail(new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message: "connection refused" }) }))
}))

describe("shared store unreachable", () => {
  it.effect("each request is counted in this instance's memory: the limit holds, with its headers", () =>
    Effect.gen(function*() {
      const shared = yield* RateLimiter.RateLimiter
      const fallback = yield* makeFallbackLimiter
      const policy = { name: "api", limit: 3, windowSeconds: 60 } as const
      const count = (key: string) =>
        Effect.gen(function*() {
          const request = HttpServerRequest.fromWeb(new Request("http://gateway/api/v1/user"))
          const exit = yield* countRequest(shared, policy, key, fallback).pipe(
            Effect.provideService(HttpServerRequest.HttpServerRequest, request),
            Effect.result
          )
          return exit._tag
        })
      const statuses: Array<string> = []
      for (let i = 0; i < 5; i++) statuses.push(yield* count("user-1"))
      assert.deepStrictEqual(statuses, ["Success", "Success", "Success", "Failure", "Failure"])
      assert.strictEqual(yield* count("user-2"), "Success", "per key, as in the shared store")
      yield* TestClock.adjust(Duration.seconds(61))
      assert.strictEqual(yield* count("user-1"), "Success", "the memory window resets too")
      // Seven failed store calls, one line: the outage, not each request.
      const lines = yield* logged("dependency")
      assert.deepStrictEqual(lines.map((l) => l.text), ["dependency down: redis"], JSON.stringify(lines))
      assert.strictEqual(lines[0]!.annotations["detail"], "connection refused")
    }).pipe(
      Effect.provide(RateLimiter.layer.pipe(Layer.provide(UnreachableStore))),
      // A state of its own: this outage (under the TestClock) must not be "back" in another test.
      Effect.provideService(DependencyHealth, makeDependencyHealth()),
      Effect.provide(CapturedLogs.layer)
    ))
})

const redisUrl = process.env.TEST_REDIS_URL

/** Whether a Redis on the loopback address's `port` answers PING (within a second). */
const answersPing = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    let reply = ""
    const done = (answered: boolean) => {
      socket.destroy()
      resolve(answered)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.on("error", () => done(false))
    socket.on("connect", () => socket.write("PING\r\n"))
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString()
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"))
    })
  })

// Shared counters need a real Redis: CI sets TEST_REDIS_URL; `npm test` alone has none to share.
if (redisUrl !== undefined) {
  const prefix = `gateway-test-${randomBytes(4).toString("hex")}:`
  const config = { redisUrl, redisKeyPrefix: prefix, rateLimitApiPerMinute: 5 }
  const A = TestApp.layer({ capabilities: { db: "pglite" }, config }).pipe(Layer.provideMerge(CapturedLogs.layer))
  const B = TestApp.layer({ capabilities: { db: "pglite" }, config })

  layer(A, { excludeTestServices: true, timeout: 60_000 })("two instances on one Redis", (it) => {
    it.effect("admit at most the limit together", () =>
      Effect.gen(function*() {
        const tokenA = (yield* signIn(ALICE_ID)).access_token
        const statuses: Array<number> = []
        for (let i = 0; i < 3; i++) statuses.push((yield* raw({ token: tokenA }, "/api/v1/bots")).status)
        // The second instance, with its own database and sign-in, counts against the same user.
        const fromB = yield* Effect.gen(function*() {
          const tokenB = (yield* signIn(ALICE_ID)).access_token
          const out: Array<{ status: number; remaining: string | null; body: unknown }> = []
          for (let i = 0; i < 3; i++) {
            const res = yield* raw({ token: tokenB }, "/api/v1/bots")
            out.push({ status: res.status, remaining: res.headers.get("ratelimit"), body: yield* json(res) })
          }
          return out
        }).pipe(Effect.provide(B))
        const all = [...statuses, ...fromB.map((r) => r.status)]
        assert.strictEqual(all.filter((s) => s === 200).length, 5, JSON.stringify(all))
        assert.strictEqual(all.filter((s) => s === 429).length, 1, JSON.stringify(all))
        assert.match(fromB[1]!.remaining!, /^"api";r=0;t=\d+$/)
      }))
  })

  // A private Redis that the test can stop while the gateway runs.
  const privateRedis = Layer.unwrap(Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    const child: ChildProcess = yield* Effect.acquireRelease(
      Effect.sync(() => spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })),
      (c) => Effect.sync(() => void c.kill("SIGKILL"))
    )
    // Ready when it answers PING, however long a loaded machine takes to start it: the app's client
    // makes only START_ATTEMPTS attempts, well under a second, before its start fails.
    const deadline = Date.now() + 10_000
    while (!(yield* Effect.promise(() => answersPing(port)))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        return yield* Effect.die(new Error(`redis-server on port ${port} did not answer PING within 10 s (exit code ${child.exitCode})`))
      }
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
    }
    return TestApp.layer({
      capabilities: { db: "pglite" },
      config: { redisUrl: `redis://127.0.0.1:${port}`, redisKeyPrefix: prefix, rateLimitApiPerMinute: 5, rateLimitAuthPerHour: 10 }
    }).pipe(Layer.merge(Layer.succeed(PrivateRedis, child)), Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth())))
  })).pipe(Layer.provideMerge(CapturedLogs.layer))

  layer(privateRedis, { excludeTestServices: true, timeout: 60_000 })("Redis lost while running", (it) => {
    it.effect("each instance counts in memory from what it counted last: /api and /auth limits hold, with their headers", () =>
      Effect.gen(function*() {
        const token = (yield* signIn(ALICE_ID)).access_token
        const before = yield* raw({ token }, "/api/v1/bots")
        assert.strictEqual(before.status, 200)
        assert.match(before.headers.get("ratelimit")!, /^"api";r=4;t=\d+$/)
        // The sign-in's own /auth requests are counted too: what is left of the /auth window.
        const authBefore = yield* raw({ method: "POST" }, "/auth/idp/token/check")
        assert.strictEqual(authBefore.status, 401)
        const authLeft = Number(/^"auth";r=(\d+);t=\d+$/.exec(authBefore.headers.get("ratelimit")!)![1])
        assert.isAbove(authLeft, 0)
        const redis = yield* PrivateRedis
        redis.kill("SIGKILL")
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 300)))
        // 4 more (not 5: the one Redis counted stays counted); without the fallback every one would be admitted.
        const api: Array<{ status: number; ratelimit: string | null }> = []
        for (let i = 0; i < 20; i++) {
          const res = yield* raw({ token }, "/api/v1/bots")
          api.push({ status: res.status, ratelimit: res.headers.get("ratelimit") })
          yield* Effect.promise(() => res.arrayBuffer())
        }
        assert.deepStrictEqual(api.slice(0, 4).map((r) => r.status), [200, 200, 200, 200], JSON.stringify(api))
        assert.match(api[0]!.ratelimit!, /^"api";r=3;t=\d+$/)
        assert.match(api[3]!.ratelimit!, /^"api";r=0;t=\d+$/)
        assert.isTrue(api.slice(4).every((r) => r.status === 429), JSON.stringify(api))
        const auth: Array<number> = []
        for (let i = 0; i < 20; i++) auth.push((yield* raw({ method: "POST" }, "/auth/idp/token/check")).status)
        assert.deepStrictEqual(auth.slice(0, authLeft), Array.from({ length: authLeft }, () => 401), JSON.stringify(auth))
        assert.isTrue(auth.slice(authLeft).every((s) => s === 429), JSON.stringify(auth))
        // Forty requests and the client's reconnect attempts while Redis is gone: one line says so.
        const lines = yield* logged("dependency")
        assert.deepStrictEqual(lines.map((l) => l.text.replace(/ \{.*$/, "")), ["dependency down: redis"], JSON.stringify(lines))
      }))
  })
}
class PrivateRedis extends Context.Service<PrivateRedis, ChildProcess>()("test/PrivateRedis") {}
