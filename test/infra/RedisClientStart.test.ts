/**
 * The Redis client of the shared counters (layers/infra/RedisClient.ts). At start: a handshake cut
 * while the process starts is tried again, so the start does not fail on a blip (CI, 2026-12-03: a
 * 400 ms socket time-out met a busy start and failed a suite); a Redis that never answers fails the
 * start after START_ATTEMPTS attempts, as start-up must report Redis down. While running: commands
 * fail fast while Redis is away or silent, and the client comes back however long the outage lasted,
 * with one "dependency down: redis" line.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import { Redis } from "effect/persistence"
import { createServer } from "node:net"
import { ClientOfflineError } from "redis"
import { COMMAND_TIMEOUT_MS, reconnectDelay, reconnectStrategy, RedisClientLive, START_ATTEMPTS } from "../../src/layers/infra/RedisClient.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { redisProxy } from "../utils/RedisProxy.ts"

const REDIS = process.env.TEST_REDIS_URL

/** The client on `url`, built in the caller's scope; its lines go to the caller's CapturedLogs. */
const build = (url: string) =>
  Layer.build(RedisClientLive(url)).pipe(Effect.provideService(DependencyHealth, makeDependencyHealth()))

/** Adds `by` to a number key and answers the new value (a script, as the carry and the global budget use). */
const incrBy = Redis.script((key: string, by: number) => [key, by], {
  numberOfKeys: 1,
  lua: "return redis.call('INCRBY', KEYS[1], ARGV[1])"
}).withReturnType<number>()

/** The RedisError a failed command ended with (not a defect, not an interruption). */
const redisErrorOf = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit), "failed")
  const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
  assert.instanceOf(error, Redis.RedisError, Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "")
  return error as Redis.RedisError
}

/** How long `effect` took, and how it ended. */
const timed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const exit = yield* Effect.exit(effect)
    return { exit, ms: Date.now() - started }
  })

describe("the Redis client's reconnect strategy", () => {
  it("before the first connection: START_ATTEMPTS attempts, then the cause", () => {
    assert.strictEqual(START_ATTEMPTS, 3)
    const strategy = reconnectStrategy(() => false)
    const cause = new Error("ECONNREFUSED")
    for (let retries = 0; retries < START_ATTEMPTS - 1; retries++) {
      const wait = strategy(retries, cause)
      assert.isNumber(wait)
      assert.isAtLeast(wait as number, 50 * 2 ** retries)
    }
    assert.strictEqual(strategy(START_ATTEMPTS - 1, cause), cause)
    assert.strictEqual(strategy(40, cause), cause)
  })

  it("once connected: a wait, however long it has lasted", () => {
    const strategy = reconnectStrategy(() => true)
    for (const retries of [0, 2, 3, 1_000]) assert.isNumber(strategy(retries, new Error("socket timeout")))
  })

  it("the wait doubles from 50 ms up to 2 s, with under 200 ms of jitter", () => {
    const firsts = Array.from({ length: 50 }, () => reconnectDelay(0))
    assert.isAbove(Math.max(...firsts) - Math.min(...firsts), 50, "jittered, so that instances do not reconnect together")
    for (let i = 0; i < 20; i++) {
      const first = reconnectDelay(0)
      assert.isAtLeast(first, 50)
      assert.isBelow(first, 250)
      const third = reconnectDelay(2)
      assert.isAtLeast(third, 200)
      assert.isBelow(third, 400)
      const late = reconnectDelay(60)
      assert.isAtLeast(late, 2_000)
      assert.isBelow(late, 2_200)
    }
  })
})

describe("the Redis client at start-up, over real sockets", () => {
  it.live("a server that closes every connection: the start fails after START_ATTEMPTS attempts", () =>
    Effect.gen(function*() {
      let accepted = 0
      const server = createServer((socket) => {
        accepted++
        socket.on("error", () => {})
        socket.destroy()
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.sync(() => server.close())
      )
      const port = (server.address() as { port: number }).port
      const started = Date.now()
      const exit = yield* Effect.exit(Effect.scoped(build(`redis://127.0.0.1:${port}`)))
      assert.isTrue(Exit.isFailure(exit), "a Redis that never answers fails the start")
      assert.strictEqual(accepted, START_ATTEMPTS)
      assert.isBelow(Date.now() - started, 5_000, "reported within seconds, not retried for ever")
    }).pipe(Effect.provide(CapturedLogs.layer)))

  it.live.runIf(REDIS !== undefined)("a handshake cut twice (TEST_REDIS_URL): started on the third attempt, and it answers", () =>
    Effect.gen(function*() {
      const proxy = yield* redisProxy(new URL(REDIS!))
      proxy.dropNext(START_ATTEMPTS - 1)
      const context = yield* build(proxy.url)
      const pong = yield* Context.get(context, Redis.Redis).send<string>("PING")
      assert.strictEqual(pong, "PONG")
    }).pipe(Effect.scoped, Effect.provide(CapturedLogs.layer)))
})

describe.runIf(REDIS !== undefined)("the Redis client while running (TEST_REDIS_URL)", () => {
  it.live("Redis gone for longer than the start's attempts: commands fail at once meanwhile, and it comes back", () =>
    Effect.gen(function*() {
      const proxy = yield* redisProxy(new URL(REDIS!))
      const redis = Context.get(yield* build(proxy.url), Redis.Redis)
      assert.strictEqual(yield* redis.send<string>("PING"), "PONG")

      proxy.cut()
      // Past START_ATTEMPTS failed attempts (50, 100, 200 ms apart plus jitter): a client that kept the
      // start's limit after connecting would have given up by now.
      yield* Effect.sleep("1500 millis")
      // Told by node-redis's own refusal, not by the clock (a loaded machine stalls either way): a client
      // still trying to connect (open, not ready) refuses at once without an offline queue (with one, the
      // command would wait and end on its deadline; a client that gave up answers "The client is closed").
      const error = redisErrorOf(yield* Effect.exit(redis.send("PING")))
      assert.notInclude(String((error.cause as Error).message), "did not answer within", "failed at once, not after its deadline")
      assert.instanceOf(error.cause, ClientOfflineError, "refused while disconnected (no offline queue), the client still trying")

      proxy.restore()
      // Its waits are at most ~2.2 s: 15 s leaves a loaded machine room; a client that gave up never comes back.
      const deadline = Date.now() + 15_000
      let back = false
      while (!back && Date.now() < deadline) {
        yield* Effect.sleep("100 millis")
        back = Exit.isSuccess(yield* Effect.exit(redis.send<string>("PING")))
      }
      assert.isTrue(back, "the client is back within 15 s of Redis (its waits are at most ~2.2 s)")
      const down = yield* logged("dependency down")
      assert.isAbove(down.length, 0)
      assert.isTrue(down.every((l) => l.text.startsWith("dependency down: redis")), JSON.stringify(down.map((l) => l.text)))
    }).pipe(Effect.scoped, Effect.provide(CapturedLogs.layer)))

  it.live("Redis silent (a partition): a command and a script fail after COMMAND_TIMEOUT_MS, then answer again", () =>
    Effect.gen(function*() {
      const proxy = yield* redisProxy(new URL(REDIS!))
      const redis = Context.get(yield* build(proxy.url), Redis.Redis)
      const key = `gateway-redis-client-${process.pid}-${Date.now()}`
      yield* Effect.addFinalizer(() => Effect.ignore(redis.send("DEL", key)))
      assert.strictEqual(yield* redis.eval(incrBy)(key, 2), 2, "a script answers while Redis does")

      proxy.blackhole()
      for (const command of [redis.send("PING"), redis.eval(incrBy)(key, 5)]) {
        const silent = yield* timed(command.pipe(Effect.timeout("10 seconds")))
        const error = redisErrorOf(silent.exit)
        assert.include(String((error.cause as Error).message), `did not answer within ${COMMAND_TIMEOUT_MS} ms`)
        assert.isAtLeast(silent.ms, COMMAND_TIMEOUT_MS - 50)
        // The error above is the deadline's; the time, with room for a loaded machine's stalls.
        assert.isBelow(silent.ms, 5_000, "the command's deadline, not the test's 10 s")
      }

      proxy.restore()
      assert.strictEqual(yield* redis.send<string>("PING"), "PONG", "the connection was kept: Redis answers again")
      // What was sent meanwhile reached Redis once it answered (the script given up on ran: 2 + 5 + 1).
      assert.strictEqual(yield* redis.eval(incrBy)(key, 1), 8)
    }).pipe(Effect.scoped, Effect.provide(CapturedLogs.layer)))
})
