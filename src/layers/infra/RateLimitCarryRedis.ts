/**
 * The carry of an outage's counts into Redis (services/infra/RateLimitCarry.ts), on the keys Effect's
 * Redis rate-limit store counts (`<prefix><limiter key>`, its "fixed-window" value and expiry):
 * - the key still there (Redis kept it; other instances may have counted in it meanwhile): the
 *   requests counted in memory are added as the store adds a request (+1 each, + refill each to the
 *   expiry), and never less than this instance's own count and window;
 * - the key gone (Redis restarted empty): this instance's count and what is left of its window.
 * One script, so nothing counts in the key between the read and the write.
 */
import { Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { RateLimitCarry, RateLimitCarryError } from "../../services/infra/RateLimitCarry.ts"

const carryScript = Redis.script(
  (key: string, pending: number, count: number, ttlMillis: number, refillMillis: number) => [key, pending, count, ttlMillis, refillMillis],
  {
    numberOfKeys: 1,
    lua: `
local key = KEYS[1]
local pending = tonumber(ARGV[1])
local count = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local refill = tonumber(ARGV[4])
local current = tonumber(redis.call("GET", key))
local next = count
local nextpttl = ttl
if current then
  local pttl = tonumber(redis.call("PTTL", key))
  next = math.max(current + pending, count)
  nextpttl = math.max(pttl + refill * pending, ttl)
end
nextpttl = math.max(1, math.ceil(nextpttl))
redis.call("SET", key, string.format("%.17g", next), "PX", nextpttl)
return { string.format("%.17g", next), nextpttl }
`
  }
).withReturnType<readonly [string, number]>()

/** Carries into the counters under `prefix` (the store's own prefix). */
export const RateLimitCarryRedis = (prefix: string) =>
  Layer.effect(
    RateLimitCarry,
    Effect.gen(function*() {
      const redis = yield* Redis.Redis
      const run = redis.eval(carryScript)
      return {
        carry: (c) =>
          run(`${prefix}${c.key}`, c.pending, c.count, c.ttlMillis, c.refillMillis).pipe(
            Effect.asVoid,
            Effect.mapError((e) =>
              new RateLimitCarryError({ message: `Failed to carry rate-limit counts: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}` })
            )
          )
      }
    })
  )
