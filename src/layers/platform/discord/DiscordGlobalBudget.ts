/**
 * The bot's global budget on the chat platform as a sliding log of send slots: a send's slot is the
 * earliest instant at which fewer than `limit` slots lie within the `window` before it. No window of
 * that length ever holds more than `limit` sends, and a burst of up to `limit` goes at once (Discord:
 * 50 requests in any second per token; a token bucket under the same guarantee allows a burst of only
 * a fraction of that, then a slower rate). Slots are reserved in arrival order, so concurrent callers,
 * and instances sharing the Redis log, queue behind one another; a caller that would wait longer than
 * it may reserves nothing.
 *
 * The memory store counts for one instance; the Redis store shares the log (one list per key, holding
 * the last `limit` slots, on Redis's clock).
 */
import { Context, Effect, Layer } from "effect"
import { RateLimiter, Redis } from "effect/persistence"

/** A reservation: the wait for the slot (ms, 0: now) and whether the slot was taken. */
export interface Reservation {
  readonly waitMs: number
  /** False when the wait exceeds the caller's `maxWaitMs`: nothing reserved. */
  readonly reserved: boolean
}

export class DiscordGlobalBudget extends Context.Service<DiscordGlobalBudget, {
  /** Reserves `key`'s next slot, unless its wait exceeds `maxWaitMs`. */
  readonly reserve: (
    key: string,
    limit: number,
    windowMs: number,
    maxWaitMs: number
  ) => Effect.Effect<Reservation, RateLimiter.RateLimiterError>
}>()(
  // Stryker disable next-line StringLiteral: the service's key; any unique string serves
  "gateway/DiscordGlobalBudget"
) {
  /** Counts in this process's memory. */
  static readonly layerMemory: Layer.Layer<DiscordGlobalBudget> = Layer.sync(DiscordGlobalBudget, () => DiscordGlobalBudget.of(makeMemory()))
  /** Counts in Redis, shared by every instance using it. */
  static readonly layerRedis = (options: { readonly prefix: string }) =>
    Layer.effect(DiscordGlobalBudget, makeRedis(options.prefix))
}

/** The slot the log allows now: `now` while it holds fewer than `limit`, else a window after the `limit`-th last. */
const nextSlot = (log: ReadonlyArray<number>, limit: number, windowMs: number, now: number): number =>
  log.length < limit ? now : Math.max(now, log[log.length - limit]! + windowMs)

/** The memory store (it never fails: the fallback while Redis is away). */
export const makeMemory = (): {
  readonly reserve: (key: string, limit: number, windowMs: number, maxWaitMs: number) => Effect.Effect<Reservation>
} => {
  const logs = new Map<string, Array<number>>()
  let lastSweep = 0
  // Forgets logs whose last slot is over a window old (they allow a send now whatever they hold).
  // Stryker disable next-line BlockStatement: memory only; how often it runs changes no answer
  const sweep = (now: number, windowMs: number) => {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: memory only, see above
    if (now - lastSweep < 60_000) return
    lastSweep = now
    // Stryker disable next-line all: memory only, see above
    for (const [key, log] of logs) if (log[log.length - 1]! + windowMs < now) logs.delete(key)
  }
  return {
    reserve: (key, limit, windowMs, maxWaitMs) =>
      Effect.clockWith((clock) =>
        Effect.sync((): Reservation => {
          const now = clock.currentTimeMillisUnsafe()
          // Stryker disable next-line CallExpression: memory only, see sweep
          sweep(now, windowMs)
          let log = logs.get(key)
          if (log === undefined) {
            log = []
            logs.set(key, log)
          }
          const slot = nextSlot(log, limit, windowMs, now)
          if (slot - now > maxWaitMs) return { waitMs: slot - now, reserved: false }
          log.push(slot)
          // Memory only: nextSlot reads the log from its end, so slots past the last `limit` change no answer.
          // Stryker disable next-line ConditionalExpression,EqualityOperator: memory only, see above
          if (log.length > limit) log.splice(0, log.length - limit)
          return { waitMs: slot - now, reserved: true }
        })
      )
  }
}

// KEYS[1]: the log; ARGV: limit, window (ms), longest wait (ms). Answers { wait, reserved (1/0) }.
const reserveScript = Redis.script(
  (key: string, limit: number, windowMs: number, maxWaitMs: number) => [key, limit, windowMs, maxWaitMs],
  {
    numberOfKeys: 1,
    lua: `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot = now
if redis.call("LLEN", key) >= limit then
  local edge = tonumber(redis.call("LINDEX", key, -limit)) + window
  if edge > slot then slot = edge end
end
if slot - now > maxwait then return { slot - now, 0 } end
redis.call("RPUSH", key, slot)
redis.call("LTRIM", key, -limit, -1)
redis.call("PEXPIRE", key, slot - now + window)
return { slot - now, 1 }
`
  }
).withReturnType<[number, number]>()

const makeRedis = (prefix: string) =>
  Effect.gen(function*() {
    const redis = yield* Redis.Redis
    const reserve = redis.eval(reserveScript)
    return DiscordGlobalBudget.of({
      reserve: (key, limit, windowMs, maxWaitMs) =>
        reserve(`${prefix}${key}`, limit, windowMs, Math.max(0, Math.floor(maxWaitMs))).pipe(
          Effect.map(([waitMs, reserved]): Reservation => ({ waitMs: Number(waitMs), reserved: Number(reserved) === 1 })),
          Effect.mapError((cause) =>
            new RateLimiter.RateLimiterError({
              reason: new RateLimiter.RateLimitStoreError({ message: "Failed to reserve a global budget slot", cause })
            })
          )
        )
    })
  })
