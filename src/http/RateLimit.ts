/**
 * Counting a request against a limit of decisions.md, with the IETF RateLimit fields on the answer.
 * The counter store is Effect's RateLimiter (memory, or Redis shared by every instance). When the
 * store is unreachable the request is admitted and a warning logged: an outage of the counters
 * must not take the API down (README: "Rate limits").
 */
import { Duration, Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { TooManyRequests } from "../domain/Errors.ts"

export interface Policy {
  readonly name: "api" | "auth"
  readonly limit: number
  readonly windowSeconds: number
}

const setHeaders = (policy: Policy, remaining: number, resetSeconds: number, retryAfter?: number) =>
  HttpEffect.appendPreResponseHandler((_req, res) => {
    let out = HttpServerResponse.setHeaders(res, {
      "ratelimit-policy": `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`,
      ratelimit: `"${policy.name}";r=${Math.max(0, remaining)};t=${resetSeconds}`
    })
    if (retryAfter !== undefined) out = HttpServerResponse.setHeader(out, "retry-after", String(retryAfter))
    return Effect.succeed(out)
  })

export const countRequest = (
  limiter: RateLimiter.RateLimiter,
  policy: Policy,
  key: string
): Effect.Effect<void, TooManyRequests, HttpServerRequest.HttpServerRequest> =>
  limiter.consume({
    algorithm: "fixed-window",
    onExceeded: "fail",
    window: Duration.seconds(policy.windowSeconds),
    limit: policy.limit,
    key: `${policy.name}:${key}`
  }).pipe(
    Effect.matchEffect({
      onSuccess: (r) =>
        setHeaders(policy, r.remaining, Math.max(0, Math.ceil(Duration.toSeconds(r.resetAfter)))),
      onFailure: (error) => {
        const reason = error.reason
        if (reason._tag === "RateLimitExceeded") {
          const retryAfter = Math.max(1, Math.ceil(Duration.toSeconds(reason.retryAfter)))
          return setHeaders(policy, 0, retryAfter, retryAfter).pipe(
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
        return Effect.logWarning("rate-limit store unreachable; request admitted").pipe(
          Effect.annotateLogs({ policy: policy.name })
        )
      }
    })
  )
