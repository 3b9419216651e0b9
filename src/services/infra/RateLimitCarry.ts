/**
 * Carrying what one instance counted in memory while the shared counter store was unreachable back
 * into that store when it answers again (issue #30): without it the store hands out a fresh window
 * at the end of an outage. The HTTP limiter (http/edge/RateLimitFallback.ts) decides what to carry and
 * when; the store's layer (layers/infra/RateLimitCarryRedis.ts) applies it. The default carries
 * nothing: counters in this process's memory never have an outage to carry.
 */
import { Context, Effect, Schema } from "effect"

/** One limiter key's counts of an outage, as this instance has them. */
export interface CarriedCount {
  /** The limiter's key (`api:<user>`), without the store's prefix. */
  readonly key: string
  /** Requests this instance counted in memory that the shared store has not counted. */
  readonly pending: number
  /** This instance's count of the key's window: the shared count it last saw, plus `pending`. */
  readonly count: number
  /** Milliseconds left of this instance's window of the key (> 0). */
  readonly ttlMillis: number
  /** What one request adds to a window's length (window ÷ limit), as the store's own counting does. */
  readonly refillMillis: number
}

/** The shared store could not take the counts (it is still unreachable). */
export class RateLimitCarryError extends Schema.TaggedError<RateLimitCarryError>()("RateLimitCarryError", {
  message: Schema.String
}) {}

export interface RateLimitCarryShape {
  /** Adds `counted` to the shared store's counter of its key (applied once when this succeeds). */
  readonly carry: (counted: CarriedCount) => Effect.Effect<void, RateLimitCarryError>
}

export const RateLimitCarry = Context.Reference<RateLimitCarryShape>("gateway/RateLimitCarry", {
  defaultValue: () => ({ carry: () => Effect.void })
})
