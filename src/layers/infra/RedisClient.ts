/**
 * The Redis client of the shared counters (the gateway's rate limits and the chat platform's global
 * budget): node-redis through `NodeRedis`, set up so that an outage of Redis never outlives Redis.
 * - Commands fail fast while Redis is away (no offline queue, 500 ms per command): the limiter then
 *   counts in this instance's memory (http/edge/RateLimit.ts).
 * - Once connected, the client tries again for as long as it takes, whatever ended the connection:
 *   NodeRedis's default strategy gives up after a socket time-out, which left the counters in memory
 *   until a restart. Before the first connection it does not retry: start-up reports Redis down.
 * - The client's own line per failed attempt ("NodeRedis client error") is folded into the outage
 *   count (services/infra/DependencyHealth.ts): one line when Redis goes down, a count, one when it is back.
 */
import { NodeRedis } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { libraryLogsAsOutage } from "../../services/infra/DependencyHealth.ts"

/** Socket settings of node-redis (`connectTimeout`, `socketTimeout`, …); the defaults are node-redis's. */
export interface RedisSocketTuningShape {
  readonly connectTimeout?: number
  /** Closes a connection idle this long (node-redis: none by default). */
  readonly socketTimeout?: number
}

/** node-redis's socket settings: its defaults unless a layer provides others (tests use a short `socketTimeout`). */
export const RedisSocketTuning = Context.Reference<RedisSocketTuningShape>("gateway/RedisSocketTuning", {
  defaultValue: () => ({})
})

/** The wait before attempt `retries + 1`: from 50 ms, doubling, at most 2 s, plus up to 200 ms of jitter. */
export const reconnectDelay = (retries: number): number =>
  Math.min(2 ** Math.min(retries, 16) * 50, 2_000) + Math.floor(Math.random() * 200)

/** `Redis` and `NodeRedis` on `url`, connected when built (or failing: Redis unreachable at start-up). */
export const RedisClientLive = (url: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const tuning = yield* RedisSocketTuning
    let connected = false
    return NodeRedis.layer({
      url,
      disableOfflineQueue: true,
      commandOptions: { timeout: 500 },
      socket: {
        ...tuning,
        reconnectStrategy: (retries: number, cause: Error) => connected ? reconnectDelay(retries) : cause
      }
    }).pipe(
      Layer.tap(() => Effect.sync(() => void (connected = true))),
      Layer.provide(libraryLogsAsOutage("redis"))
    )
  }))
