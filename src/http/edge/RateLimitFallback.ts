/**
 * This instance's own view of the rate-limit counters, and its counting while the shared store
 * (Redis) is unreachable (issue #30: the counters used to restart at zero when an outage began and
 * again when it ended, 3 × the limit in one window):
 * - while the store answers, its answer is kept per key (the count it said and when the window
 *   ends): a Map write on the request's path, no extra round trip;
 * - during an outage this instance counts in memory from there, with the store's own arithmetic
 *   (Effect's "fixed-window": a window ends `refill` = window ÷ limit per request after it began);
 * - what it counted in memory is carried into the store (services/infra/RateLimitCarry.ts) before the
 *   store counts again, so the end of an outage is no fresh window either.
 * Each instance counts alone during an outage: N instances admit at most N × limit in a window,
 * each minus the count it last saw (README "Rate limits").
 */
import { Clock, Deferred, Effect } from "effect"
import type { CarriedCount, RateLimitCarryError, RateLimitCarryShape } from "../../services/infra/RateLimitCarry.ts"

interface Entry {
  /** The window's count as this instance knows it: the store's last answer plus `pending`. */
  count: number
  /** When the window ends (this instance's clock, ms). */
  expiresAt: number
  /** Counted here in memory, not yet in the store. */
  pending: number
  /** What one request adds to the window (ms), for the carry. */
  refillMillis: number
}

/** A request counted in memory: admitted or not, the window's count and the ms left of it. */
export interface Counted {
  readonly admitted: boolean
  readonly count: number
  readonly ttlMillis: number
}

export interface RateLimitFallback {
  /** The store counted `count` in `key`'s window, which ends in `ttlMillis`. */
  readonly observe: (key: string, count: number, ttlMillis: number, now: number) => void
  /** Counts one request of `key` here (the store is unreachable). */
  readonly consume: (key: string, limit: number, refillMillis: number, now: number) => Counted
  /** Whether counts made here wait to be carried into the store (then the next request carries them first). */
  readonly mustCarry: () => boolean
  /**
   * Carries every waiting count into the store. One attempt at a time: a request that comes during
   * an attempt waits for its outcome. Fails while the store is unreachable (the counts keep waiting).
   */
  readonly carryPending: Effect.Effect<void, RateLimitCarryError>
  /** Keys kept (at most `maxKeys`). */
  readonly size: () => number
}

/** Keys one instance keeps at most (~100 bytes each); past it the ended windows go, then the oldest keys. */
export const MAX_KEYS = 100_000
/** Keys carried at once when the store is back. */
const CARRY_CONCURRENCY = 16

export const makeFallback = (store: RateLimitCarryShape, maxKeys: number = MAX_KEYS): RateLimitFallback => {
  const entries = new Map<string, Entry>()
  /** The entries with counts to carry, by key. */
  const waiting = new Map<string, Entry>()
  let attempt: Deferred.Deferred<void, RateLimitCarryError> | undefined

  const forget = (key: string) => {
    entries.delete(key)
    waiting.delete(key)
  }
  const insert = (key: string, entry: Entry, now: number) => {
    if (entries.size >= maxKeys) {
      for (const [k, e] of entries) if (e.expiresAt <= now) forget(k)
      // Still full of open windows: the oldest keys go (a tenth, so this scan is rare).
      for (const k of entries.keys()) {
        if (entries.size < maxKeys * 0.9) break
        forget(k)
      }
    }
    entries.set(key, entry)
  }

  const observe = (key: string, count: number, ttlMillis: number, now: number) => {
    const entry = entries.get(key)
    if (entry === undefined) return insert(key, { count, expiresAt: now + ttlMillis, pending: 0, refillMillis: 0 }, now)
    // A count made here that the store has not seen yet (an answer overtaken by the outage) stays counted.
    entry.count = count + entry.pending
    entry.expiresAt = now + ttlMillis
  }

  const consume = (key: string, limit: number, refillMillis: number, now: number): Counted => {
    let entry = entries.get(key)
    if (entry === undefined || entry.expiresAt <= now) {
      // A new window (its ended one has nothing left to carry).
      forget(key)
      entry = { count: 0, expiresAt: now, pending: 0, refillMillis }
      insert(key, entry, now)
    }
    if (entry.count >= limit) return { admitted: false, count: entry.count, ttlMillis: entry.expiresAt - now }
    entry.count += 1
    entry.pending += 1
    entry.expiresAt += refillMillis
    entry.refillMillis = refillMillis
    waiting.set(key, entry)
    return { admitted: true, count: entry.count, ttlMillis: entry.expiresAt - now }
  }

  const carryAll = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const batch: Array<readonly [Entry, CarriedCount]> = []
    for (const [key, entry] of waiting) {
      // A window that ended during the outage is over in the store too: nothing to carry.
      if (entry.expiresAt <= now) waiting.delete(key)
      else batch.push([entry, { key, pending: entry.pending, count: entry.count, ttlMillis: entry.expiresAt - now, refillMillis: entry.refillMillis }])
    }
    return Effect.forEach(
      batch,
      ([entry, counted]) =>
        Effect.map(store.carry(counted), () => {
          entry.pending -= counted.pending
          if (entry.pending === 0 && waiting.get(counted.key) === entry) waiting.delete(counted.key)
        }),
      // Stryker disable next-line BooleanLiteral: equivalent, no caller reads the results (all undefined) it would collect
      { concurrency: CARRY_CONCURRENCY, discard: true }
    )
  })

  const carryPending = Effect.suspend(() => {
    if (attempt !== undefined) return Deferred.await(attempt)
    const current = Deferred.makeUnsafe<void, RateLimitCarryError>()
    attempt = current
    // Uninterruptible: a client that leaves must not leave the others waiting on an attempt nobody ends.
    return Effect.uninterruptible(Effect.onExit(carryAll, (exit) => {
      attempt = undefined
      return Deferred.done(current, exit)
    }))
  })

  return { observe, consume, mustCarry: () => waiting.size > 0, carryPending, size: () => entries.size }
}
