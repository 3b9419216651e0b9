/**
 * Counting a request against a limit of decisions.md, with the IETF RateLimit fields on the answer.
 * The counter store is Effect's RateLimiter (memory, or Redis shared by every instance). When the
 * shared store is unreachable this instance counts alone, in memory (limits hold per instance; an
 * outage of the counters neither takes the API down nor admits everything: README "Rate limits").
 * The outage is logged once when it starts and once when it ends (services/infra/DependencyHealth.ts),
 * not once per request.
 */
import { Duration, Effect, Metric } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { TooManyRequests } from "../../domain/infra/Errors.ts"
import { dependencyFailed, dependencySucceeded } from "../../services/infra/DependencyHealth.ts"
import { rateLimitRejections } from "../../services/infra/Metrics.ts"

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
}
const fixedByPolicy = new WeakMap<Policy, Fixed>()
const fixedOf = (policy: Policy): Fixed => {
  let fixed = fixedByPolicy.get(policy)
  if (fixed === undefined) {
    fixed = { header: `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`, window: Duration.seconds(policy.windowSeconds) }
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

/** The in-memory counters of one instance, used while the shared store is unreachable. */
export const makeFallbackLimiter: Effect.Effect<RateLimiter.RateLimiter> = RateLimiter.make.pipe(
  Effect.provide(RateLimiter.layerStoreMemory)
)

const consume = (limiter: RateLimiter.RateLimiter, policy: Policy, key: string) =>
  limiter.consume({
    algorithm: "fixed-window",
    onExceeded: "fail",
    window: fixedOf(policy).window,
    limit: policy.limit,
    key: `${policy.name}:${key}`
  })

const resetSecondsOf = (r: RateLimiter.ConsumeResult) => Math.max(0, Math.ceil(Duration.toSeconds(r.resetAfter)))

const admitted = (policy: Policy, r: RateLimiter.ConsumeResult) => setHeaders(policy, r.remaining, resetSecondsOf(r))

/** The shared store answered: it is up (logs its recovery once), and the request's fields are set, in one step. */
const storeUp = dependencySucceeded(RATE_LIMIT_STORE)
const admittedByStore = (policy: Policy, r: RateLimiter.ConsumeResult) =>
  Effect.withFiber((fiber) => {
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, headersHandler(policy, r.remaining, resetSecondsOf(r)))
    return storeUp
  })

const refused = (policy: Policy, reason: RateLimiter.RateLimitExceeded) => {
  const retryAfter = Math.max(1, Math.ceil(Duration.toSeconds(reason.retryAfter)))
  return setHeaders(policy, 0, retryAfter, retryAfter).pipe(
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
}

/** Counts on `fallback` (memory, never unreachable) alone. */
const countAlone = (fallback: RateLimiter.RateLimiter, policy: Policy, key: string) =>
  consume(fallback, policy, key).pipe(
    Effect.matchEffect({
      onSuccess: (r) => admitted(policy, r),
      onFailure: (error) => error.reason._tag === "RateLimitExceeded" ? refused(policy, error.reason) : Effect.void
    })
  )

/** Counts a request on `limiter`; while its store is unreachable, on `fallback` (this instance's memory). */
export const countRequest = (
  limiter: RateLimiter.RateLimiter,
  policy: Policy,
  key: string,
  fallback: RateLimiter.RateLimiter
): Effect.Effect<void, TooManyRequests, HttpServerRequest.HttpServerRequest> =>
  consume(limiter, policy, key).pipe(
    Effect.matchEffect({
      onSuccess: (r) => admittedByStore(policy, r),
      onFailure: (error) => {
        const reason = error.reason
        if (reason._tag === "RateLimitExceeded") {
          return Effect.andThen(storeUp, refused(policy, reason))
        }
        return dependencyFailed(RATE_LIMIT_STORE, { store: "rate limits", policy: policy.name, reason: reason._tag, detail: reason.message }).pipe(
          Effect.andThen(countAlone(fallback, policy, key))
        )
      }
    })
  )
