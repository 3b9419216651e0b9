/**
 * The Redis client of the shared counters (the gateway's rate limits and the chat platform's global
 * budget): node-redis through `NodeRedis`, set up so that an outage of Redis never outlives Redis.
 * - Commands fail fast while Redis is away (no offline queue) or silent (COMMAND_TIMEOUT_MS for the
 *   answer): the limiter then counts in this instance's memory (http/edge/RateLimit.ts). node-redis's
 *   own command `timeout` only covers a command waiting to be written, which without an offline queue
 *   is none: on a partition (no error, no answer) a written command waited until the kernel gave the
 *   connection up, minutes later, and every rate-limited request with it. The deadline is Effect's,
 *   on every `send` and `eval`; the commands it gave up on stay in node-redis's queue (at most
 *   QUEUE_MAX, then refused at once) until their answers arrive or the connection ends.
 * - Once connected, the client tries again for as long as it takes, whatever ended the connection:
 *   NodeRedis's default strategy gives up after a socket time-out, which left the counters in memory
 *   until a restart. Before the first connection it makes `START_ATTEMPTS` attempts, so a blip (a
 *   handshake cut or timed out while the process is busy starting) does not fail the start, and a
 *   Redis still unreachable after them fails it (within a second when refused; after three connect
 *   time-outs when nothing answers): start-up reports Redis down.
 * - The client's own line per failed attempt ("NodeRedis client error") is folded into the outage
 *   count (services/infra/DependencyHealth.ts): one line when Redis goes down, a count, one when it is back.
 */
import { NodeRedis } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { libraryLogsAsOutage } from "../../services/infra/DependencyHealth.ts"

/** Socket settings of node-redis (`connectTimeout`, `socketTimeout`, …); the defaults are node-redis's. */
export interface RedisSocketTuningShape {
  readonly connectTimeout?: number
  /** Closes a connection idle this long (node-redis: none by default). */
  readonly socketTimeout?: number
}

/** node-redis's socket settings: its defaults unless a layer provides others (tests use a short `socketTimeout`). */
// Stryker disable next-line StringLiteral: the reference's key names it in traces only
export const RedisSocketTuning = Context.Reference<RedisSocketTuningShape>("gateway/RedisSocketTuning", {
  // Stryker disable next-line ArrowFunction: no settings and `undefined` spread alike
  defaultValue: () => ({})
})

/** The wait before attempt `retries + 1`: from 50 ms, doubling, at most 2 s, plus up to 200 ms of jitter. */
export const reconnectDelay = (retries: number): number =>
  Math.min(2 ** Math.min(retries, 16) * 50, 2_000) + Math.floor(Math.random() * 200)

/** Attempts to connect at start-up before the start fails (Redis down). */
export const START_ATTEMPTS = 3

/**
 * node-redis's `reconnectStrategy`: the wait before the next attempt, or the cause to give up with.
 * `retries` counts the failed attempts of this round (0 after the first).
 */
export const reconnectStrategy = (connected: () => boolean) => (retries: number, cause: Error): number | Error =>
  connected() || retries < START_ATTEMPTS - 1 ? reconnectDelay(retries) : cause

/** How long a command may wait for Redis's answer before it fails (and the caller counts in memory). */
export const COMMAND_TIMEOUT_MS = 500
/** Commands node-redis may hold unanswered (a partition's given-up ones included) before refusing more. */
export const QUEUE_MAX = 10_000

const silent = () => new Redis.RedisError({ cause: new Error(`Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`) })
const bounded = <A>(command: Effect.Effect<A, Redis.RedisError>) =>
  Effect.timeoutOrElse(command, { duration: COMMAND_TIMEOUT_MS, orElse: () => Effect.fail(silent()) })

/** `redis` whose every command and script fails after COMMAND_TIMEOUT_MS without an answer. */
export const withCommandDeadline = (redis: Redis.Redis["Service"]): Redis.Redis["Service"] =>
  Redis.Redis.of({
    ...redis,
    send: (command, ...args) => bounded(redis.send(command, ...args)),
    eval: (script) => (...params) => bounded(redis.eval(script)(...params))
  })

/** `Redis` and `NodeRedis` on `url`, connected when built (or failing: Redis unreachable at start-up). */
export const RedisClientLive = (url: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const tuning = yield* RedisSocketTuning
    let connected = false
    const client = NodeRedis.layer({
      url,
      disableOfflineQueue: true,
      commandsQueueMaxLength: QUEUE_MAX,
      socket: {
        ...tuning,
        reconnectStrategy: reconnectStrategy(() => connected)
      }
    }).pipe(
      Layer.tap(() => Effect.sync(() => void (connected = true))),
      Layer.provide(libraryLogsAsOutage("redis"))
    )
    return Layer.effectContext(Effect.gen(function*() {
      const redis = yield* Redis.Redis
      const node = yield* NodeRedis.NodeRedis
      return Context.make(Redis.Redis, withCommandDeadline(redis)).pipe(Context.add(NodeRedis.NodeRedis, node))
    })).pipe(Layer.provide(client))
  }))
