/**
 * The AuthRateLimit middleware of every `/auth` endpoint (decisions.md "Rate limits"): 120 requests
 * per hour, counted before the handler runs, so failed sign-in attempts count too. The key: for
 * check, refresh and revoke presenting a valid gateway token, the token's family (its sign-in), so
 * junk from one address cannot lock the signed-in users behind it out of refresh; otherwise the
 * client address. The client address is the socket's peer; `X-Forwarded-For` is read only with
 * TRUST_PROXY, and then only its last entry (the one our proxy appended; earlier ones are the
 * client's to forge).
 * Requires HttpSettings, TokenStore and RateLimiter (memory, or Redis shared by every instance).
 */
import { Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { parseToken } from "../../domain/auth/AccessToken.ts"
import { TokenStore } from "../../services/auth/TokenStore.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { AuthRateLimit } from "../contract/Middleware.ts"
import { countRequest, makeFallbackLimiter } from "./RateLimit.ts"

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

/** The gateway token a request to check, refresh or revoke presents (the header its endpoint reads). */
export const presentedToken = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const path = request.url.split("?", 1)[0]!
  if (path === "/auth/idp/token/refresh") return parseToken(request.headers["x-refresh-token"])
  if (path === "/auth/idp/token/check" || path === "/auth/idp/token/revoke") return parseToken(request.headers["authorization"])
  return undefined
}

export const AuthRateLimitLive = Layer.effect(
  AuthRateLimit,
  Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    const fallback = yield* makeFallbackLimiter
    const settings = yield* HttpSettings
    const store = yield* TokenStore
    const policy = { name: "auth", limit: settings.rateLimitAuthPerHour, windowSeconds: 3600 } as const
    // A store that cannot answer leaves the request counted by address (the handler then answers 503).
    const familyOf = (token: string) => store.familyOf(token).pipe(Effect.orElseSucceed(() => undefined))
    const byAddress = (request: HttpServerRequest.HttpServerRequest) => `ip:${clientAddress(request, settings.trustProxy)}`
    // No Effect.gen: every /auth request passes here (S4's path).
    return AuthRateLimit.of((httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const token = presentedToken(request)
        const counted = token === undefined
          ? countRequest(limiter, policy, byAddress(request), fallback)
          : Effect.flatMap(familyOf(token), (family) =>
            countRequest(limiter, policy, family === undefined ? byAddress(request) : `family:${family}`, fallback))
        return Effect.andThen(counted, httpEffect)
      })
    )
  })
)
