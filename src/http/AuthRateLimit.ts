/**
 * The AuthRateLimit middleware of every `/auth` endpoint (decisions.md "Rate limits"): 120 requests
 * per hour per client address, counted before the handler runs, so failed sign-in attempts count
 * too. The client address is the socket's peer; `X-Forwarded-For` is read only with TRUST_PROXY,
 * and then only its last entry (the one our proxy appended; earlier ones are the client's to forge).
 * Requires HttpSettings and RateLimiter (memory, or Redis shared by every instance).
 */
import { Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { HttpSettings } from "./HttpSettings.ts"
import { AuthRateLimit } from "./Middleware.ts"
import { countRequest } from "./RateLimit.ts"

/** The counting key of a request: its client address. */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]
    const last = forwarded?.split(",").map((s) => s.trim()).filter((s) => s.length > 0).at(-1)
    if (last !== undefined && last.length <= 64) return last
  }
  const peer = Option.orElse(request.peerAddress, () => request.remoteAddress)
  return Option.getOrElse(peer, () => "unknown")
}

export const AuthRateLimitLive = Layer.effect(
  AuthRateLimit,
  Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    const settings = yield* HttpSettings
    const policy = { name: "auth", limit: settings.rateLimitAuthPerHour, windowSeconds: 3600 } as const
    return AuthRateLimit.of((httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* countRequest(limiter, policy, clientAddress(request, settings.trustProxy))
        return yield* httpEffect
      })
    )
  })
)
