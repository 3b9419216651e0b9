/**
 * Issue #12 at the HTTP edge: a Redis outage of the rate-limit store logs one line when it goes down
 * and one when it is back, nothing per request; and the dependency health that counts it.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { NodeRedis } from "@effect/platform-node"
import { Effect, Layer, Logger } from "effect"
import { DependencyHealth, libraryLogsAsOutage, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { redisProxy } from "../utils/RedisProxy.ts"
import type { RedisProxy } from "../utils/RedisProxy.ts"
import { raw } from "../utils/TestApp.ts"
import { CapturedApp, LOGIN } from "./HardeningFixtures.ts"

const REDIS = process.env.TEST_REDIS_URL

describe.runIf(REDIS !== undefined)("a Redis outage (TEST_REDIS_URL)", () => {
  const outageLogs: Array<string> = []
  let proxy: RedisProxy | undefined
  const app = Layer.unwrap(Effect.gen(function*() {
    proxy = yield* redisProxy(new URL(REDIS!))
    return CapturedApp(outageLogs, { redisUrl: proxy.url, redisKeyPrefix: `gateway-hardening-${process.pid}:` })
  }))
  layer(app, { excludeTestServices: true, timeout: 60_000 })("rate-limit store", (it) => {
    it.effect("one line when Redis goes down, one when it is back (with the count), nothing per request", () =>
      Effect.gen(function*() {
        // Every line but the access log: the limiter's and the Redis client's own (one per failed
        // connection attempt) count towards the same outage.
        const warnings = () => outageLogs.filter((l) => !l.includes('"message":"request"'))
        assert.strictEqual((yield* raw({}, LOGIN)).status, 307)
        const before = warnings().length
        proxy!.cut()
        for (let i = 0; i < 20; i++) assert.strictEqual((yield* raw({}, LOGIN)).status, 307, "admitted while the store is down")
        const during = warnings().slice(before)
        assert.strictEqual(during.length, 1, during.join("\n"))
        assert.include(during[0]!, "dependency down: redis")

        proxy!.restore()
        // The client reconnects on its own schedule: a bounded wait for the "back" line.
        for (let i = 0; i < 100 && !warnings().some((l) => l.includes("dependency back: redis")); i++) {
          yield* raw({}, LOGIN)
          yield* Effect.sleep("100 millis")
        }
        const after = warnings().slice(before)
        const back = after.filter((l) => l.includes("dependency back: redis"))
        assert.strictEqual(back.length, 1, after.join("\n"))
        const failures = (JSON.parse(back[0]!) as { annotations: { failures: number } }).annotations.failures
        assert.isAtLeast(failures, 20)
        assert.deepStrictEqual(
          after.map((l) => [(JSON.parse(l) as { message: unknown }).message].flat()[0]),
          ["dependency down: redis", "dependency back: redis"],
          after.join("\n")
        )
      }))
  })

  it.live("the Redis client's own reconnect lines, through libraryLogsAsOutage: one \"down\" line", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const own = yield* redisProxy(new URL(REDIS!))
      const capture = Logger.formatJson.pipe(Logger.map((line) => void lines.push(line)))
      yield* Effect.gen(function*() {
        const redis = yield* NodeRedis.NodeRedis
        own.cut()
        // The client retries with a growing delay (50 ms, 100 ms, …): a second of it is several attempts.
        yield* Effect.sleep("1200 millis")
        own.restore()
        yield* Effect.ignore(redis.use((client) => client.ping()))
      }).pipe(
        Effect.provide(NodeRedis.layer({ url: own.url }).pipe(Layer.provide(libraryLogsAsOutage("redis")))),
        Effect.provide(Logger.layer([capture])),
        Effect.provideService(DependencyHealth, makeDependencyHealth())
      )
      const down = lines.filter((l) => l.includes("dependency down: redis"))
      assert.strictEqual(down.length, 1, lines.join("\n"))
      assert.isEmpty(lines.filter((l) => l.includes('"message":["NodeRedis')), lines.join("\n"))
    }).pipe(Effect.scoped, Effect.timeout("20 seconds")), 30_000)
})

describe("dependency health", () => {
  it("down once, counted, a count line per period, back once with the total", () => {
    const health = makeDependencyHealth({ stillDownEveryMs: 1_000 })
    assert.strictEqual(health.recordSuccess("database", 0), undefined)
    assert.strictEqual(health.recordFailure("database", 0)?.message, "dependency down: database")
    for (let t = 1; t < 1_000; t += 10) assert.strictEqual(health.recordFailure("database", t), undefined)
    const still = health.recordFailure("database", 1_000)
    assert.strictEqual(still?.message, "dependency still down: database")
    assert.strictEqual(still?.annotations["failures"], 101)
    assert.isTrue(health.isDown("database"))
    assert.isFalse(health.isDown("redis"))
    const back = health.recordSuccess("database", 1_500)
    assert.deepStrictEqual(back, { message: "dependency back: database", annotations: { dependency: "database", failures: 102, down_for_ms: 1_500 } })
    assert.strictEqual(health.recordSuccess("database", 1_600), undefined)
    assert.deepStrictEqual(health.down(), [])
  })
})
