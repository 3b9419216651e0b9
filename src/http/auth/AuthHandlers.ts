/**
 * The "auth" group: sign-in redirects and the token endpoints. The work is in services/auth/Auth.ts;
 * here are the HTTP parts: the sign-in cookie, `Referrer-Policy: no-referrer` on the redirect that
 * carries the temporary token, and `Cache-Control: no-store` on every token answer.
 * Requires Auth and HttpSettings (and, for the group's middleware, AuthRateLimit: http/edge/AuthRateLimit.ts).
 */
import { Effect, Schema } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { TokenCheck } from "../../domain/auth/Token.ts"
import { Auth } from "../../services/auth/Auth.ts"
import { Api } from "../contract/Api.ts"
import { HttpSettings } from "../edge/HttpSettings.ts"

const isLoopback = (host: string) => /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(host)

const noStore = HttpEffect.appendPreResponseHandler((_req, res) =>
  Effect.succeed(HttpServerResponse.setHeader(HttpServerResponse.setHeader(res, "cache-control", "no-store"), "pragma", "no-cache"))
)

const encodeCheck = Schema.encodeSync(TokenCheck)

/**
 * The check's answer, encoded once per answer object: the service hands out the same frozen answer
 * while the token's kept check and its seconds left stay the same (services/auth/AuthTokens.ts), so a
 * repeated check skips the schema encoding and `JSON.stringify`. The bytes and headers are those
 * HttpApiBuilder would build (JSON of the encoded value, 200, `application/json`):
 * test/perf/HotPathAuthCheck.test.ts pins them.
 */
const checkAnswers = new WeakMap<TokenCheck, HttpServerResponse.HttpServerResponse>()
const checkAnswer = (check: TokenCheck) => {
  let answer = checkAnswers.get(check)
  if (answer === undefined) {
    answer = HttpServerResponse.text(JSON.stringify(encodeCheck(check)), { status: 200, contentType: "application/json" })
    // Only a frozen answer cannot change under its kept encoding.
    if (Object.isFrozen(check)) checkAnswers.set(check, answer)
  }
  return answer
}

export const AuthHandlers = HttpApiBuilder.group(
  Api,
  "auth",
  Effect.fn(function*(handlers) {
    const auth = yield* Auth
    const { publicUrl } = yield* HttpSettings
    const publicHost = new URL(publicUrl).host
    return handlers.handleAll({
      login: ({ query, request }) =>
        Effect.gen(function*() {
          yield* noStore
          // The query as sent: the service names every problem in one 400 (Api.ts).
          const input = {
            redirectUri: query.redirect_uri,
            state: query.state,
            codeChallenge: query.code_challenge,
            codeChallengeMethod: query.code_challenge_method
          }
          // The sign-in cookie must be set on the host the platform calls back (PUBLIC_URL): a browser
          // that opened the login on another loopback name of this server (localhost vs 127.0.0.1) is
          // sent there first. Only between loopback names, so no proxy set-up can loop; and only a
          // login that would start (a refused one is a 400 here, never a redirect: decisions.md).
          const host = request.headers["host"]
          if (host !== undefined && host !== publicHost && isLoopback(host) && isLoopback(publicHost)) {
            yield* auth.checkLogin(input)
            const url = new URL(request.url, publicUrl)
            return HttpServerResponse.redirect(`${publicUrl}${url.pathname}${url.search}`, { status: 307 })
          }
          const { location, cookie } = yield* auth.login(input)
          return HttpServerResponse.setCookieUnsafe(
            HttpServerResponse.redirect(location, { status: 307 }),
            cookie.name,
            cookie.value,
            cookie.options
          )
        }),
      callback: ({ query, request }) =>
        Effect.gen(function*() {
          yield* noStore
          const { location } = yield* auth.callback({
            code: query.code,
            state: query.state,
            error: query.error,
            cookie: request.cookies[auth.cookieName]
          })
          const response = HttpServerResponse.redirect(location, {
            status: 302,
            headers: { "referrer-policy": "no-referrer" }
          })
          // The state is used up: the cookie has no purpose left.
          return HttpServerResponse.expireCookieUnsafe(response, auth.cookieName, {
            httpOnly: true,
            sameSite: "lax",
            path: "/",
            secure: auth.cookieName.startsWith("__Host-")
          })
        }),
      token: ({ headers }) =>
        Effect.andThen(noStore, auth.exchange({ authorization: headers.authorization, codeVerifier: headers["x-code-verifier"] })),
      check: ({ headers }) => Effect.andThen(noStore, Effect.map(auth.check(headers.authorization), checkAnswer)),
      refresh: ({ headers }) => Effect.andThen(noStore, auth.refresh(headers["x-refresh-token"])),
      revoke: ({ headers }) => Effect.andThen(noStore, auth.revoke(headers.authorization))
    })
  })
)
