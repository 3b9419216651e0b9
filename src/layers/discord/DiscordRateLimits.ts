/**
 * Following Discord's rate limits like a well-behaved client: per-route buckets learned from the
 * `X-RateLimit-*` headers (requests to one bucket are sent one after another, and a bucket at
 * remaining 0 waits for its reset instead of drawing a 429), the global per-token budget counted
 * through Effect's `RateLimiter` (memory or Redis store, so several instances share it), 429s waited
 * out within a wait budget, and invalid answers (401/403/429) kept well under 10,000 per 10 minutes.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Duration, Effect, Layer, Semaphore } from "effect"
import { RateLimiter } from "effect/persistence"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import { dependencyFailed, dependencySucceeded } from "../../services/DependencyHealth.ts"
import { countUpstream } from "../../services/Metrics.ts"

export interface DiscordRateLimitsOptions {
  /** Requests per second per token (Discord's global limit is 50). Default 50. */
  readonly globalPerSecond?: number | undefined
  /** Longest a call may wait in total for buckets, the global budget and 429s. Default 15 s. */
  readonly waitBudget?: Duration.Input | undefined
  /** Invalid answers (401/403/429) per 10 minutes after which nothing is sent. Default 5,000. */
  readonly invalidRequestLimit?: number | undefined
  /** Prefix of the keys in the shared store. Default `discord:`. */
  readonly keyPrefix?: string | undefined
}

/** Where a request goes, for rate limiting. Never holds a raw token. */
export interface RouteTarget {
  /** `bot:<hash>`, `user:<hash>`, `app:<client id>` or `anon`. */
  readonly identity: string
  /** Method and path template, e.g. `GET /guilds/:guild/channels`. */
  readonly route: string
  /** The major parameter (guild id, channel id, webhook id + token hash), or "". */
  readonly major: string
}

/** One upstream answer, body read. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
}

// Stryker disable next-line MethodExpression,StringLiteral: the hash only keys per-token state (buckets, caches); any stable digest of the token keeps tokens apart
export const tokenHash = (token: string): string => createHash("sha256").update(token).digest("hex").slice(0, 32)

interface Bucket {
  readonly lock: Semaphore.Semaphore
  remaining: number
  resetAt: number
  pending: number
}

const parseNumber = (value: string | undefined): number | undefined => {
  // An absent header is Number(undefined), NaN: not a number like any other junk.
  const n = Number(value)
  return Number.isFinite(n) ? n : undefined
}

/** `retry_after` (seconds, float) and `global` of a 429, from the body or else the headers. */
const parse429 = (answer: Answer): { readonly retryAfterMs: number; readonly global: boolean } => {
  let retryAfter: number | undefined
  let global = answer.headers["x-ratelimit-global"] === "true" || answer.headers["x-ratelimit-scope"] === "global"
  try {
    const body: unknown = JSON.parse(answer.body)
    // Stryker disable next-line ConditionalExpression,LogicalOperator: on a non-object body the `in` checks throw, and the catch below answers the same as this guard (the headers)
    if (typeof body === "object" && body !== null) {
      if ("retry_after" in body && typeof body.retry_after === "number") retryAfter = body.retry_after
      if ("global" in body && body.global === true) global = true
    }
  } catch {
    // Cloudflare-level 429s may not be JSON; fall back to the headers.
  }
  retryAfter ??= parseNumber(answer.headers["x-ratelimit-reset-after"]) ?? parseNumber(answer.headers["retry-after"]) ?? 1
  return { retryAfterMs: Math.max(0, Math.ceil(retryAfter * 1000)), global }
}

const tooLong = (what: string, waitMs: number) =>
  ServiceUnavailable.of(
    `The chat platform is rate limiting the gateway (${what}); try again later.`,
    Math.max(1, Math.ceil(waitMs / 1000))
  )

export class DiscordRateLimits extends Context.Service<DiscordRateLimits, {
  /**
   * Sends one request under the limits: waits for its bucket, the global budget and any 429's
   * `retry_after` (retrying the request), never past `deadline` (epoch ms; default now + wait
   * budget). Returns the first answer that is not a 429.
   */
  readonly run: <E>(
    target: RouteTarget,
    send: Effect.Effect<Answer, E>,
    deadline?: number
  ) => Effect.Effect<Answer, E | ServiceUnavailable>
  /** The deadline a call starting now gets. */
  readonly deadline: Effect.Effect<number>
}>()(
  // Stryker disable next-line StringLiteral: the service's key; any unique string serves
  "gateway/DiscordRateLimits"
) {
  /** Needs a `RateLimiterStore`: `RateLimiter.layerStoreMemory`, or `layerStoreRedis` to share the budget. */
  static readonly layer = (options: DiscordRateLimitsOptions = {}) =>
    Layer.effect(DiscordRateLimits, make(options))
}

/** The dependency name of the shared counter store in outage lines (as http/RateLimit.ts). */
const STORE = "redis"

type ConsumeOptions = Parameters<RateLimiter.RateLimiter["consume"]>[0]

const make = Effect.fnUntraced(function*(options: DiscordRateLimitsOptions) {
  const shared = yield* RateLimiter.make
  // While the shared store (Redis) is unreachable, this instance counts in its own memory: the limits
  // hold per instance, never none (decisions.md "Rate limits"). The outage is logged once, not per call.
  const fallback = yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreMemory))
  const limiter = {
    consume: (options: ConsumeOptions) =>
      shared.consume(options).pipe(
        Effect.tap(() => dependencySucceeded(STORE)),
        Effect.catchReason("RateLimiterError", "RateLimitStoreError", (reason) =>
          // Stryker disable next-line ObjectLiteral,StringLiteral: log annotations only
          dependencyFailed(STORE, { store: "chat platform rate limits", detail: reason.message }).pipe(
            Effect.andThen(fallback.consume(options))
          ))
      )
  }
  const budgetMs = Duration.toMillis(Duration.fromInputUnsafe(options.waitBudget ?? "15 seconds"))
  const prefix = options.keyPrefix ?? "discord:"
  const perSecond = Math.max(1, options.globalPerSecond ?? 50)
  const invalidLimit = Math.max(1, options.invalidRequestLimit ?? 5000)
  // A token bucket of capacity B refilled by (perSecond - B) per 1.2 s admits at most perSecond in
  // any 1.2 s: under the limit in every 1 s window even when sends are late by up to 200 ms
  // (timer lateness, network jitter). Sustained: 10 + 40/1.2 ≈ 43 requests in a second at 50.
  const burst = Math.max(1, Math.floor(perSecond / 5))
  const refillPerSecond = Math.max(1, perSecond - burst) / 1.2
  const burstWindow = Duration.millis((burst / refillPerSecond) * 1000)

  /** Route (method + template) → Discord's bucket hash, learned from X-RateLimit-Bucket. */
  const routeHashes = new Map<string, string>()
  const buckets = new Map<string, Bucket>()
  /** Identity → epoch ms until which a global 429 told us to pause. */
  const globalPause = new Map<string, number>()
  let lastSweep = 0
  // 429s with retry_after 0 must not spin: give up after this many attempts even within the budget.
  const maxAttempts = 10

  // Forgets buckets and pauses that hold nothing any more: memory only (the tests pin that nothing in
  // force is forgotten). How often it runs, or whether it runs, changes no answer.
  // Stryker disable next-line BlockStatement: memory only, see above
  const sweep = (now: number) => {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: memory only, see above
    if (now - lastSweep < 60_000) return
    lastSweep = now
    // Stryker disable next-line BlockStatement: memory only, see above
    for (const [key, bucket] of buckets) {
      if (bucket.pending === 0 && bucket.resetAt < now) buckets.delete(key)
    }
    for (const [key, until] of globalPause) if (until < now) globalPause.delete(key)
  }

  const bucketKey = (target: RouteTarget) =>
    `${target.identity}|${routeHashes.get(target.route) ?? target.route}|${target.major}`

  const bucketFor = (target: RouteTarget, now: number): Bucket => {
    // Stryker disable next-line all: memory only, see sweep
    sweep(now)
    const key = bucketKey(target)
    let bucket = buckets.get(key)
    if (bucket === undefined) {
      bucket = { lock: Semaphore.makeUnsafe(1), remaining: 1, resetAt: 0, pending: 0 }
      buckets.set(key, bucket)
    }
    return bucket
  }

  const waitUntil = (at: number, deadline: number, what: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (at <= now) return Effect.void
      if (at > deadline) return Effect.fail(tooLong(what, at - now))
      return Effect.sleep(Duration.millis(at - now))
    })

  // A token bucket of capacity L/2 refilled by L/2 per 10 minutes admits at most L in any 10 minutes.
  const invalidBucket = {
    key: `${prefix}invalid`,
    // Stryker disable next-line StringLiteral: Effect's fixed-window store also drains by window/limit per token, so both algorithms admit the same here
    algorithm: "token-bucket",
    onExceeded: "fail",
    limit: Math.max(1, Math.floor(invalidLimit / 2)),
    window: "10 minutes"
  } as const

  // Taking 0 tokens never exceeds the bucket, and the fallback store never fails: only `remaining` counts.
  const checkInvalid = limiter.consume({ ...invalidBucket, tokens: 0 }).pipe(
    Effect.matchEffect({
      onSuccess: (result) => {
        if (result.remaining >= 1) return Effect.void
        // Stryker disable next-line StringLiteral: log text
        return Effect.logError("Chat platform: invalid-request budget spent; refusing to send").pipe(
          Effect.andThen(Effect.fail(tooLong("too many refused requests", Duration.toMillis(result.resetAfter))))
        )
      },
      // Stryker disable next-line ArrowFunction: unreachable (see above)
      onFailure: () => Effect.void
    })
  )

  const recordInvalid = limiter.consume({ ...invalidBucket, tokens: 1 }).pipe(Effect.ignore)

  const consumeGlobal = (identity: string, deadline: number) =>
    limiter.consume({
      key: `${prefix}global:${identity}`,
      algorithm: "token-bucket",
      onExceeded: "delay",
      limit: burst,
      window: burstWindow
    }).pipe(
      Effect.matchEffect({
        // "delay" never fails on an exceeded bucket, and the fallback store never fails.
        // Stryker disable next-line ArrowFunction: unreachable (see above)
        onFailure: () => Effect.void,
        onSuccess: ({ delay }) =>
          Duration.isZero(delay)
            ? Effect.void
            : Effect.flatMap(Clock.currentTimeMillis, (now) => waitUntil(now + Duration.toMillis(delay), deadline, "global limit"))
      })
    )

  /** Takes the bucket's lock, waiting no longer than the deadline. */
  const withBucket = <A, E>(bucket: Bucket, deadline: number, effect: Effect.Effect<A, E>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.uninterruptibleMask((restore) => {
        // Stryker disable next-line UpdateOperator: `pending` only keeps the sweep off a bucket in use; a count that never returns to 0 keeps it off too (memory only)
        bucket.pending++
        return restore(bucket.lock.take(1)).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(Math.max(0, deadline - now)),
            orElse: () => Effect.fail(tooLong("route busy", Math.max(1000, bucket.resetAt - now)))
          }),
          Effect.flatMap(() => restore(effect).pipe(Effect.ensuring(bucket.lock.release(1)))),
          // Stryker disable next-line UpdateOperator,ArrowFunction: as for `pending++` above
          Effect.ensuring(Effect.sync(() => bucket.pending--))
        )
      }))

  const learn = (target: RouteTarget, bucket: Bucket, answer: Answer, now: number) => {
    const hash = answer.headers["x-ratelimit-bucket"]
    if (hash !== undefined) routeHashes.set(target.route, hash)
    const remaining = parseNumber(answer.headers["x-ratelimit-remaining"])
    const resetAfter = parseNumber(answer.headers["x-ratelimit-reset-after"])
    if (remaining !== undefined && resetAfter !== undefined) {
      bucket.remaining = remaining
      bucket.resetAt = now + Math.ceil(resetAfter * 1000)
    }
    // Share the state with the bucket other routes of the same hash use from now on.
    const key = bucketKey(target)
    const shared = buckets.get(key)
    if (shared === undefined) buckets.set(key, bucket)
    else {
      // (When `shared` is this bucket, this changes nothing.)
      shared.remaining = Math.min(shared.remaining, bucket.remaining)
      shared.resetAt = Math.max(shared.resetAt, bucket.resetAt)
    }
  }

  const attempt = <E>(target: RouteTarget, send: Effect.Effect<Answer, E>, deadline: number) =>
    Effect.gen(function*() {
      yield* checkInvalid
      yield* waitUntil(globalPause.get(target.identity) ?? 0, deadline, "global limit")
      const bucket = bucketFor(target, yield* Clock.currentTimeMillis)
      return yield* withBucket(
        bucket,
        deadline,
        Effect.gen(function*() {
          // (A reset already past is no wait: waitUntil returns at once.)
          if (bucket.remaining <= 0) {
            yield* waitUntil(bucket.resetAt, deadline, `bucket ${target.route}`)
          }
          yield* consumeGlobal(target.identity, deadline)
          const answer = yield* Effect.tapError(send, () => countUpstream("discord", target.route, undefined))
          yield* countUpstream("discord", target.route, answer.status)
          const after = yield* Clock.currentTimeMillis
          learn(target, bucket, answer, after)
          if (answer.status === 429) {
            const { global, retryAfterMs } = parse429(answer)
            if (global) globalPause.set(target.identity, Math.max(globalPause.get(target.identity) ?? 0, after + retryAfterMs))
            else {
              bucket.remaining = 0
              bucket.resetAt = Math.max(bucket.resetAt, after + retryAfterMs)
            }
            // Stryker disable next-line StringLiteral: log text
            yield* Effect.logWarning("Chat platform answered 429").pipe(
              // Stryker disable next-line ObjectLiteral: log annotations only
              Effect.annotateLogs({ route: target.route, global, retry_after_ms: retryAfterMs })
            )
          }
          // Discord does not count 429s of a shared resource (scope "shared") as invalid requests.
          if (
            answer.status === 401 || answer.status === 403 ||
            (answer.status === 429 && answer.headers["x-ratelimit-scope"] !== "shared")
          ) yield* recordInvalid
          return answer
        })
      )
    })

  const run = <E>(target: RouteTarget, send: Effect.Effect<Answer, E>, deadline?: number) =>
    Effect.gen(function*() {
      const until = deadline ?? (yield* Clock.currentTimeMillis) + budgetMs
      for (let attempts = 1; ; attempts++) {
        const answer = yield* attempt(target, send, until)
        if (answer.status !== 429) return answer
        const now = yield* Clock.currentTimeMillis
        if (now >= until || attempts >= maxAttempts) {
          return yield* Effect.fail(tooLong(`route ${target.route}`, parse429(answer).retryAfterMs))
        }
      }
    })

  return DiscordRateLimits.of({
    run,
    deadline: Effect.map(Clock.currentTimeMillis, (now) => now + budgetMs)
  })
})
