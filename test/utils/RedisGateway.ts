/**
 * A gateway whose shared counters are in the test Redis (TEST_REDIS_URL) behind a proxy the test
 * controls (RedisProxy.ts), and what Redis has counted for it: the fixture of the files that take
 * Redis away from a running gateway (test/api/RedisReconnect.test.ts, RedisPartition.test.ts).
 */
import { Effect, Layer, References } from "effect"
import { createClient } from "redis"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import type { Capabilities } from "../../src/layers/App.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { CapturedLogs } from "./CapturedLogs.ts"
import { testDb } from "./Db.ts"
import { redisProxy } from "./RedisProxy.ts"
import type { RedisProxy } from "./RedisProxy.ts"
import { freePort, TestApp, testAppConfig } from "./TestApp.ts"

const withRedis = <A>(url: string, f: (redis: ReturnType<typeof createClient>) => Promise<A>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => createClient({ url }).connect()),
    (redis) => Effect.promise(() => f(redis)),
    (redis) => Effect.promise(() => redis.close())
  )

/** The /auth requests Redis at `url` has counted under `prefix` (every key of the policy). */
export const storedAuthCount = (url: string, prefix: string) =>
  withRedis(url, async (redis) => {
    const keys = await redis.keys(`${prefix}ratelimit:auth:*`)
    const values = keys.length === 0 ? [] : await redis.mGet(keys)
    return values.reduce((sum, v) => sum + Number(v ?? 0), 0)
  })

/**
 * A gateway on PGlite counting in the Redis at `url` under `prefix`, through a proxy (handed to
 * `onProxy`), its Warn lines captured (CapturedLogs), its keys removed at the end. `tuning`: layers
 * for the app's build (node-redis's socket settings, say).
 */
export const gatewayBehindProxy = (
  url: string,
  prefix: string,
  onProxy: (proxy: RedisProxy) => void,
  tuning: Layer.Layer<never> = Layer.empty
) =>
  Layer.unwrap(Effect.gen(function*() {
    const proxy = yield* redisProxy(new URL(url))
    onProxy(proxy)
    yield* Effect.addFinalizer(() =>
      withRedis(url, async (redis) => {
        const keys = await redis.keys(`${prefix}*`)
        if (keys.length > 0) await redis.del(keys)
      }))
    const port = yield* Effect.promise(freePort)
    // A count expires one window/limit per request (Effect's fixed window): 3.6 s each, well past the tests' waits.
    const config = testAppConfig(port, { redisUrl: proxy.url, redisKeyPrefix: prefix, rateLimitAuthPerHour: 1_000 })
    const capabilities = liveCapabilities(config, SandboxMode.of(config), parseKeyring(generateKey()), testDb("pglite"))
    return makeApp(config, SandboxMode.of(config), capabilities as Layer.Layer<Capabilities, unknown>).pipe(
      Layer.merge(Layer.succeed(TestApp, TestApp.of({ url: config.publicUrl, config }))),
      // The outage's lines are part of what is checked: kept (CapturedLogs), not printed.
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth())),
      Layer.provide(tuning)
    )
  })).pipe(Layer.provideMerge(CapturedLogs.layer))
