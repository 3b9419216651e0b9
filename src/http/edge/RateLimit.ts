/**
 * Counting a request against a limit of decisions.md, with the IETF RateLimit fields on the answer.
 * The counter store is Effect's RateLimiter (memory, or Redis shared by every instance). When the
 * shared store is unreachable this instance counts alone, in memory, on from the count the store
 * last gave it, and carries those counts back before the store counts again (http/edge/RateLimitFallback.ts:
 * an outage of the counters neither takes the API down nor admits everything, nor restarts a
 * window: README "Rate limits").
 * The outage is logged once when it starts and once when it ends (services/infra/DependencyHealth.ts),
 * not once per request.
 */
import { Clock, Duration, Effect, Metric } from "effect"
import type { Fiber } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { TooManyRequests } from "../../domain/infra/Errors.ts"
import { dependencyFailed, dependencySucceeded } from "../../services/infra/DependencyHealth.ts"
import { rateLimitRejections } from "../../services/infra/Metrics.ts"
import { RateLimitCarry } from "../../services/infra/RateLimitCarry.ts"
import { makeFallback } from "./RateLimitFallback.ts"
import type { RateLimitFallback } from "./RateLimitFallback.ts"

/** The dependency name of the counter store in outage lines (the memory store never fails). */
export const RATE_LIMIT_STORE = "redis"

export interface Policy {
  readonly name: "api" | "auth"
  readonly limit: number
  readonly windowSeconds: number
}

// What a policy's requests share never changes: its RateLimit-Policy value and its window, made
// once per policy object, not per request.
interface Fixed {
  readonly header: string
  readonly window: Duration.Duration
  /** What one request adds to a window (ms): the store's own arithmetic, for counting in memory. */
  readonly refillMillis: number
}
const fixedByPolicy = new WeakMap<Policy, Fixed>()
const fixedOf = (policy: Policy): Fixed => {
  let fixed = fixedByPolicy.get(policy)
  // Stryker disable next-line ConditionalExpression: equivalent, a memo (made again, the same values)
  if (fixed === undefined) {
    fixed = { header: `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`, window: Duration.seconds(policy.windowSeconds), refillMillis: policy.windowSeconds * 1000 / policy.limit }
    // Stryker disable next-line CallExpression: equivalent, a memo (made again, the same values)
    fixedByPolicy.set(policy, fixed)
  }
  return fixed
}

/** The pre-response handler that writes a counted request's RateLimit fields (and Retry-After on a refusal). */
const headersHandler = (policy: Policy, remaining: number, resetSeconds: number, retryAfter?: number): HttpEffect.PreResponseHandler => {
  const header = fixedOf(policy).header
  const value = `"${policy.name}";r=${Math.max(0, remaining)};t=${resetSeconds}`
  return (_req, res) => {
    // Two `setHeader`s, not `setHeaders`: same headers in the same order, without its record merge
    // (~2 µs a call, on every counted request).
    let out = HttpServerResponse.setHeader(HttpServerResponse.setHeader(res, "ratelimit-policy", header), "ratelimit", value)
    if (retryAfter !== undefined) out = HttpServerResponse.setHeader(out, "retry-after", String(retryAfter))
    return Effect.succeed(out)
  }
}

const setHeaders = (policy: Policy, remaining: number, resetSeconds: number, retryAfter?: number) =>
  HttpEffect.appendPreResponseHandler(headersHandler(policy, remaining, resetSeconds, retryAfter))

/** The in-memory counters of one instance, kept while the shared store answers, used while it cannot. */
export const makeFallbackLimiter: Effect.Effect<RateLimitFallback> = Effect.gen(function*() {
  return makeFallback(yield* RateLimitCarry)
})

const consume = (limiter: RateLimiter.RateLimiter, policy: Policy, key: string) =>
  limiter.consume({
    algorithm: "fixed-window",
    onExceeded: "fail",
    window: fixedOf(policy).window,
    limit: policy.limit,
    key
  })

const resetSecondsOf = (r: RateLimiter.ConsumeResult) => Math.max(0, Math.ceil(Duration.toSeconds(r.resetAfter)))

const nowOf = (fiber: Fiber.Fiber<unknown, unknown>) => fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()

/**
 * The shared store answered: it is up (logs its recovery once), this instance keeps its count, and
 * the request's fields are set, in one step.
 */
const storeUp = dependencySucceeded(RATE_LIMIT_STORE)
const admittedByStore = (policy: Policy, key: string, r: RateLimiter.ConsumeResult, fallback: RateLimitFallback) =>
  Effect.withFiber((fiber) => {
    fallback.observe(key, policy.limit - r.remaining, Duration.toMillis(r.resetAfter), nowOf(fiber))
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, headersHandler(policy, r.remaining, resetSecondsOf(r)))
    return storeUp
  })

const refused = (policy: Policy, retryAfter: number) =>
  setHeaders(policy, 0, retryAfter, retryAfter).pipe(
    Effect.andThen(Metric.update(Metric.withAttributes(rateLimitRejections, { limit: policy.name }), 1)),
    Effect.andThen(
      Effect.fail(
        TooManyRequests.of(
          `Rate limit of ${policy.limit} requests per ${policy.windowSeconds} s exceeded; retry after ${retryAfter} s.`,
          retryAfter
        )
      )
    )
  )

/** The shared store refused: the window is full there (this instance keeps that too). */
const refusedByStore = (policy: Policy, key: string, reason: RateLimiter.RateLimitExceeded, fallback: RateLimitFallback) =>
  Effect.withFiber((fiber) => {
    const retryAfterMillis = Duration.toMillis(reason.retryAfter)
    fallback.observe(key, policy.limit, retryAfterMillis, nowOf(fiber))
    return Effect.andThen(storeUp, refused(policy, Math.max(1, Math.ceil(retryAfterMillis / 1000))))
  })

/** Counts in this instance's memory alone (the shared store is unreachable), from what it counted last. */
const countAlone = (fallback: RateLimitFallback, policy: Policy, key: string) =>
  Effect.withFiber((fiber) => {
    const counted = fallback.consume(key, policy.limit, fixedOf(policy).refillMillis, nowOf(fiber))
    const seconds = Math.ceil(counted.ttlMillis / 1000)
    return counted.admitted ? setHeaders(policy, policy.limit - counted.count, seconds) : refused(policy, Math.max(1, seconds))
  })

const storeDown = (policy: Policy, reason: string, detail: string) =>
  dependencyFailed(RATE_LIMIT_STORE, { store: "rate limits", policy: policy.name, reason, detail })

/** Counts on the shared store; while it is unreachable, in this instance's memory. */
const countShared = (limiter: RateLimiter.RateLimiter, policy: Policy, key: string, fallback: RateLimitFallback) =>
  consume(limiter, policy, key).pipe(
    Effect.matchEffect({
      onSuccess: (r) => admittedByStore(policy, key, r, fallback),
      onFailure: (error) => {
        const reason = error.reason
        if (reason._tag === "RateLimitExceeded") return refusedByStore(policy, key, reason, fallback)
        return Effect.andThen(storeDown(policy, reason._tag, reason.message), countAlone(fallback, policy, key))
      }
    })
  )

/**
 * Counts a request on `limiter`; while its store is unreachable, on `fallback` (this instance's
 * memory). Counts made in memory are carried into the store before it counts again.
 */
export const countRequest = (
  limiter: RateLimiter.RateLimiter,
  policy: Policy,
  key: string,
  fallback: RateLimitFallback
): Effect.Effect<void, TooManyRequests, HttpServerRequest.HttpServerRequest> => {
  const counterKey = `${policy.name}:${key}`
  return Effect.suspend(() =>
    fallback.mustCarry()
      ? Effect.matchEffect(fallback.carryPending, {
        onSuccess: () => countShared(limiter, policy, counterKey, fallback),
        onFailure: (error) => Effect.andThen(storeDown(policy, error._tag, error.message), countAlone(fallback, policy, counterKey))
      })
      : countShared(limiter, policy, counterKey, fallback)
  )
}
