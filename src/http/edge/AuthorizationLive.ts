/** The Authorization middleware: token (the first presented that resolves) → principal → the user's `/api` rate limit. */
import { Effect, Exit, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import type { TooManyRequests } from "../../domain/infra/Errors.ts"
import { TokenStore } from "../../services/auth/TokenStore.ts"
import { HttpSettings } from "./HttpSettings.ts"
import { Authorization, CurrentPrincipal } from "../contract/Middleware.ts"
import type { Principal } from "../contract/Middleware.ts"
import { countRequest, makeFallbackLimiter } from "./RateLimit.ts"
import { accessTokensFrom } from "../../domain/auth/AccessToken.ts"

type Resolution = Exit.Exit<Principal, Unauthorized | TooManyRequests | ServiceUnavailable>

const unreachable = () => Effect.fail(ServiceUnavailable.of("Token storage is unreachable; retry later.", 5))

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const store = yield* TokenStore
    const limiter = yield* RateLimiter.RateLimiter
    // While the shared counter store is unreachable this instance counts in memory (http/edge/RateLimit.ts).
    const fallback = yield* makeFallbackLimiter
    const settings = yield* HttpSettings
    const policy = { name: "api", limit: settings.rateLimitApiPerMinute, windowSeconds: 60 } as const

    const resolve = (token: string) => Effect.catchDefect(store.resolveAccess(token), unreachable)
    /** The first of `tokens` (from `i`) that resolves to a principal. */
    const firstResolved = (tokens: ReadonlyArray<string>, i: number): Effect.Effect<Principal | undefined, ServiceUnavailable> =>
      i >= tokens.length
        ? Effect.undefined
        : Effect.flatMap(
          resolve(tokens[i]!),
          (principal) => principal !== undefined ? Effect.succeed(principal) : firstResolved(tokens, i + 1)
        )

    const authenticate = (
      request: HttpServerRequest.HttpServerRequest
    ): Effect.Effect<Principal, Unauthorized | TooManyRequests | ServiceUnavailable, HttpServerRequest.HttpServerRequest> => {
      const tokens = accessTokensFrom(request.headers)
      if (tokens.length === 0) {
        return Effect.fail(Unauthorized.of("An access token is required (Authorization or X-Access-Token header)."))
      }
      // One token (the usual request) needs no walk over the candidates.
      return Effect.flatMap(tokens.length === 1 ? resolve(tokens[0]!) : firstResolved(tokens, 0), (principal): Effect.Effect<Principal, Unauthorized | TooManyRequests, HttpServerRequest.HttpServerRequest> =>
        principal === undefined
          ? Effect.fail(Unauthorized.of())
          : Effect.as(countRequest(limiter, policy, principal.userId, fallback), principal))
    }

    // Both declared schemes run this, `bearer` first; the second runs only when the first failed, and
    // reuses that outcome (the request is counted once). A success needs no memo: nothing runs after it.
    const failed = new WeakMap<object, Resolution>()
    const first = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.tapCause(authenticate(request), (cause) => Effect.sync(() => failed.set(request, Exit.failCause(cause) as Resolution)))

    const bearer = <A, E, R>(httpEffect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.flatMap(first(request), (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)))
    const accessToken = <A, E, R>(httpEffect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.flatMap(failed.get(request) ?? first(request), (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)))
    return Authorization.of({ bearer, accessToken })
  })
)
