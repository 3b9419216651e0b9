/**
 * Following Discord's rate limits like a well-behaved client: per-route buckets learned from the
 * `X-RateLimit-*` headers (requests to one bucket are sent one after another, except those whose order
 * does not matter, which go at once up to the bucket's known `remaining`; a bucket at remaining 0 waits
 * for its reset instead of drawing a 429), the global per-token budget as a sliding
 * log of send slots (DiscordGlobalBudget.ts: memory or Redis, so several instances share it), 429s
 * waited out within a wait budget, and invalid answers (401/403/429) kept well under 10,000 per 10
 * minutes, counted through Effect's `RateLimiter` (memory or Redis store).
 * The stateless arithmetic (429 parsing, budgets) is DiscordRateLimitRules.ts.
 */
import { Clock, Context, Duration, Effect, Layer, Semaphore } from "effect"
import { RateLimiter } from "effect/persistence"
import type { ServiceUnavailable } from "../../../domain/infra/Errors.ts"
import { dependencyFailed, dependencySucceeded } from "../../../services/infra/DependencyHealth.ts"
import { countUpstream } from "../../../services/infra/Metrics.ts"
import type { Answer, DiscordRateLimitsOptions, RouteTarget } from "./DiscordRateLimitRules.ts"
import { DiscordGlobalBudget, makeMemory } from "./DiscordGlobalBudget.ts"
import { limitsOf, maxAttempts, parse429, parseNumber, tooLong } from "./DiscordRateLimitRules.ts"

export type { Answer, DiscordRateLimitsOptions, RouteTarget } from "./DiscordRateLimitRules.ts"
export { tokenHash } from "./DiscordRateLimitRules.ts"

interface Bucket {
  readonly lock: Semaphore.Semaphore
  remaining: number
  resetAt: number
  pending: number
  /** Unordered requests sent and not yet answered: tokens of `remaining` already taken. */
  inFlight: number
}

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
  /**
   * Needs a `RateLimiterStore` (the invalid-request budget) and a `DiscordGlobalBudget` (the global
   * one): their memory layers, or their Redis layers to share the budgets between instances.
   */
  static readonly layer = (options: DiscordRateLimitsOptions = {}) =>
    Layer.effect(DiscordRateLimits, make(options))
}

/** The dependency name of the shared counter store in outage lines (as http/edge/RateLimit.ts). */
const STORE = "redis"

type ConsumeOptions = Parameters<RateLimiter.RateLimiter["consume"]>[0]

const make = Effect.fnUntraced(function*(options: DiscordRateLimitsOptions) {
  const shared = yield* RateLimiter.make
  // While the shared store (Redis) is unreachable, this instance counts in its own memory: the limits
  // hold per instance, never none (decisions.md "Rate limits"). The outage is logged once, not per call.
  const fallback = yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreMemory))
  const budget = yield* DiscordGlobalBudget
  const fallbackBudget = makeMemory()
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
  const { budgetMs, globalLimit, globalWindowMs, invalidBucket, prefix } = limitsOf(options)

  /** Route (method + template) → Discord's bucket hash, learned from X-RateLimit-Bucket. */
  const routeHashes = new Map<string, string>()
  const buckets = new Map<string, Bucket>()
  /** Identity → epoch ms until which a global 429 told us to pause. */
  const globalPause = new Map<string, number>()
  let lastSweep = 0

  // Forgets buckets and pauses that hold nothing any more: memory only (the tests pin that nothing in
  // force is forgotten). How often it runs, or whether it runs, changes no answer.
  // Stryker disable next-line BlockStatement: memory only, see above
  const sweep = (now: number) => {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: memory only, see above
    if (now - lastSweep < 60_000) return
    lastSweep = now
    // Stryker disable next-line BlockStatement: memory only, see above
    for (const [key, bucket] of buckets) {
      // Stryker disable next-line CallExpression: memory only, see above (not forgetting changes no answer)
      if (bucket.pending === 0 && bucket.resetAt < now) buckets.delete(key)
    }
    // Stryker disable next-line CallExpression: memory only, see above
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
      bucket = { lock: Semaphore.makeUnsafe(1), remaining: 1, resetAt: 0, pending: 0, inFlight: 0 }
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

  /** Takes the token's next global slot and waits for it; refuses at once when it lies past the deadline. */
  const consumeGlobal = (identity: string, deadline: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const key = `${prefix}global:${identity}`
      const maxWait = Math.max(0, deadline - now)
      return budget.reserve(key, globalLimit, globalWindowMs, maxWait).pipe(
        Effect.tap(() => dependencySucceeded(STORE)),
        // The store fails only when it is unreachable (its one reason is RateLimitStoreError).
        Effect.catchTag("RateLimiterError", (error) =>
          // Stryker disable next-line ObjectLiteral,StringLiteral: log annotations only
          dependencyFailed(STORE, { store: "chat platform rate limits", detail: error.reason.message }).pipe(
            Effect.andThen(fallbackBudget.reserve(key, globalLimit, globalWindowMs, maxWait))
          )),
        Effect.flatMap(({ reserved, waitMs }) => {
          if (!reserved) return Effect.fail(tooLong("global limit", waitMs))
          // Stryker disable next-line ConditionalExpression,EqualityOperator: a 0 ms sleep is the same wait (skipped for the hot path)
          return waitMs > 0 ? Effect.sleep(Duration.millis(waitMs)) : Effect.void
        })
      )
    })

  /**
   * Takes the bucket's lock, waiting no longer than the deadline, and runs `effect` with it; `effect`
   * may give the lock back before it ends (`release`, once; the end gives it back otherwise).
   */
  const withBucket = <A, E>(bucket: Bucket, deadline: number, effect: (release: Effect.Effect<void>) => Effect.Effect<A, E>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.uninterruptibleMask((restore) => {
        // Stryker disable next-line UpdateOperator: `pending` only keeps the sweep off a bucket in use; a count that never returns to 0 keeps it off too (memory only)
        bucket.pending++
        let held = true
        const release = Effect.suspend(() => {
          if (!held) return Effect.void
          held = false
          return bucket.lock.release(1)
        })
        return restore(bucket.lock.take(1)).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(Math.max(0, deadline - now)),
            orElse: () => Effect.fail(tooLong("route busy", Math.max(1000, bucket.resetAt - now)))
          }),
          Effect.flatMap(() => restore(effect(release)).pipe(Effect.ensuring(release))),
          // Stryker disable next-line UpdateOperator,ArrowFunction: as for `pending++` above
          Effect.ensuring(Effect.sync(() => bucket.pending--))
        )
      }))

  const learn = (target: RouteTarget, bucket: Bucket, answer: Answer, now: number, alongside: boolean) => {
    const hash = answer.headers["x-ratelimit-bucket"]
    if (hash !== undefined) routeHashes.set(target.route, hash)
    const remaining = parseNumber(answer.headers["x-ratelimit-remaining"])
    const resetAfter = parseNumber(answer.headers["x-ratelimit-reset-after"])
    if (remaining !== undefined && resetAfter !== undefined) {
      const resetAt = now + Math.ceil(resetAfter * 1000)
      if (alongside && now < bucket.resetAt) {
        // Answers of requests sent together arrive in any order: within the known window the lowest
        // `remaining` is the platform's latest count, and the later reset the safer one.
        bucket.remaining = Math.min(bucket.remaining, remaining)
        bucket.resetAt = Math.max(bucket.resetAt, resetAt)
      } else {
        bucket.remaining = remaining
        bucket.resetAt = resetAt
      }
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
      return yield* withBucket(bucket, deadline, (release) =>
        Effect.gen(function*() {
          // No token left: wait for the reset, again if answers of requests sent alongside moved it
          // later meanwhile (a 429 among them). A reset already past is no wait.
          while (bucket.remaining - bucket.inFlight <= 0 && (yield* Clock.currentTimeMillis) < bucket.resetAt) {
            yield* waitUntil(bucket.resetAt, deadline, `bucket ${target.route}`)
          }
          // Order does not matter and the window is still known (so, after the loop, a token is left):
          // take it, give the lock to the next request, and send alongside the others.
          if (target.unordered === true && (yield* Clock.currentTimeMillis) < bucket.resetAt) {
            return yield* Effect.uninterruptibleMask((restore) => {
              bucket.inFlight++
              return restore(Effect.andThen(release, sendOnce(target, bucket, send, deadline, true))).pipe(
                Effect.ensuring(Effect.sync(() => bucket.inFlight--))
              )
            })
          }
          return yield* sendOnce(target, bucket, send, deadline, false)
        }))
    })

  /** One request of the bucket: its global slot, the send, and what its answer teaches. */
  const sendOnce = <E>(target: RouteTarget, bucket: Bucket, send: Effect.Effect<Answer, E>, deadline: number, alongside: boolean) =>
    Effect.gen(function*() {
      yield* consumeGlobal(target.identity, deadline)
      const answer = yield* Effect.tapError(send, () => countUpstream("discord", target.route, undefined))
      yield* countUpstream("discord", target.route, answer.status)
      const after = yield* Clock.currentTimeMillis
      learn(target, bucket, answer, after, alongside)
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
