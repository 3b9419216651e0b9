/** The Authorization middleware: token (the first presented that resolves) → principal → the user's `/api` rate limit. */
import { Effect, Exit, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { ServiceUnavailable, Unauthorized } from "../domain/Errors.ts"
import type { TooManyRequests } from "../domain/Errors.ts"
import { TokenStore } from "../services/TokenStore.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { Authorization, CurrentPrincipal } from "./Middleware.ts"
import type { Principal } from "./Middleware.ts"
import { countRequest, makeFallbackLimiter } from "./RateLimit.ts"
import { accessTokensFrom } from "../domain/AccessToken.ts"

type Resolution = Exit.Exit<Principal, Unauthorized | TooManyRequests | ServiceUnavailable>

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const store = yield* TokenStore
    const limiter = yield* RateLimiter.RateLimiter
    // While the shared counter store is unreachable this instance counts in memory (http/RateLimit.ts).
    const fallback = yield* makeFallbackLimiter
    const settings = yield* HttpSettings
    const policy = { name: "api", limit: settings.rateLimitApiPerMinute, windowSeconds: 60 } as const
    // Both declared schemes run this; the first run's outcome is reused by the second.
    const memo = new WeakMap<object, Resolution>()

    const resolve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const cached = memo.get(request)
      if (cached !== undefined) return yield* cached
      const exit = yield* Effect.exit(Effect.gen(function*() {
        const tokens = accessTokensFrom(request.headers)
        if (tokens.length === 0) {
          return yield* Unauthorized.of("An access token is required (Authorization or X-Access-Token header).")
        }
        let principal: Principal | undefined
        for (const token of tokens) {
          principal = yield* store.resolveAccess(token).pipe(
            Effect.catchDefect(() => Effect.fail(ServiceUnavailable.of("Token storage is unreachable; retry later.", 5)))
          )
          if (principal !== undefined) break
        }
        if (principal === undefined) return yield* Unauthorized.of()
        yield* countRequest(limiter, policy, principal.userId, fallback)
        return principal
      }))
      memo.set(request, exit)
      return yield* exit
    })

    const run = <A, E, R>(httpEffect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(resolve, (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal))
    return Authorization.of({ bearer: (httpEffect) => run(httpEffect), accessToken: (httpEffect) => run(httpEffect) })
  })
)
