/**
 * Sign-in through the chat platform (GET /auth/idp/login and /auth/idp/callback): the gateway is
 * the platform's OAuth2 client (PKCE S256, scopes `identify guilds`; RFC 9700, RFC 6749 §4.1/§10,
 * RFC 8252 §7.3). A sign-in state binds the browser (cookie) and the client's redirect_uri; the
 * callback ends with a one-use temporary token that the client exchanges (AuthTokens.ts).
 */
import { Duration, Effect, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { BadRequest } from "../../domain/infra/Errors.ts"
import type { Problem } from "../../domain/infra/Errors.ts"
import { codePoints } from "../../domain/infra/Text.ts"
import type { Auth, LoginQuery } from "./Auth.ts"
import { verifierAad } from "./AuthFamily.ts"
import type { Families } from "./AuthFamily.ts"
import { AuthSettings } from "./AuthSettings.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import { Cipher } from "../infra/Cipher.ts"
import { s256 } from "./Pkce.ts"
import { makeRedirectAllowlist } from "./RedirectAllowlist.ts"
import { newSecret, newToken, now, sha256Hex, TokenStore } from "./TokenStore.ts"

type Shape = Auth["Service"]

/**
 * The client's `state` is returned as sent: at most this many characters (code points, decisions.md
 * "Errors"). The rules here are the ones the OpenAPI document states for the login (http/contract/Api.ts).
 */
const MAX_STATE = 512
/** The longest sign-in state the callback looks up (ours are 43 characters). */
const MAX_CALLBACK_STATE = 512
/** BASE64URL(SHA-256(verifier)) without padding (RFC 7636 §4.2). */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
const problem = (path: string, message: string): Problem => ({ message, additionalProperties: { path, in: "query" } })

export const makeSignIn = (families: Families) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const cipher = yield* Cipher
    const platform = yield* ChatPlatform
    const settings = yield* AuthSettings
    const allowlist = makeRedirectAllowlist(settings.allowedRedirectUris)
    // Stryker disable next-line all: whether a warning is logged (start-up refuses such entries before this runs: AppConfig)
    if (allowlist.invalid.length > 0) {
      // Stryker disable next-line all: log text and annotations
      yield* Effect.logWarning("ignored invalid ALLOWED_REDIRECT_URIS entries", { count: allowlist.invalid.length })
    }
    const secure = settings.publicUrl.startsWith("https://")
    const cookieName = secure ? "__Host-bmg_signin" : "bmg_signin"
    const callbackUrl = `${settings.publicUrl}/auth/idp/callback`

    /** Every problem of a login's query, in one 400 (decisions.md "Errors"); the redirect when there is none. */
    const checkLogin = (input: LoginQuery) =>
      Effect.suspend(() => {
        const problems: Array<Problem> = []
        const redirect = allowlist.match(input.redirectUri)
        if (redirect === undefined) {
          problems.push(problem(
            "redirect_uri",
            input.redirectUri === undefined
              ? "redirect_uri is required."
              : "redirect_uri is not on the allowlist (loopback URIs match on any port)."
          ))
        }
        if (input.state !== undefined) {
          if (codePoints(input.state) > MAX_STATE) {
            problems.push(problem("state", `state must be at most ${MAX_STATE} characters.`))
          } else if (input.state.includes("\u0000")) {
            problems.push(problem("state", "state must not contain U+0000 (the null character), which cannot be stored."))
          }
        }
        if (input.codeChallenge !== undefined && !S256_CHALLENGE.test(input.codeChallenge)) {
          problems.push(problem("code_challenge", "code_challenge must be the S256 challenge: 43 base64url characters (RFC 7636 §4.2)."))
        }
        if (input.codeChallengeMethod !== undefined && input.codeChallengeMethod !== "S256") {
          problems.push(problem("code_challenge_method", "code_challenge_method must be S256 (RFC 7636 §4.2), the only method accepted."))
        }
        if ((input.codeChallenge === undefined) !== (input.codeChallengeMethod === undefined)) {
          problems.push(problem(
            input.codeChallenge === undefined ? "code_challenge" : "code_challenge_method",
            "code_challenge and code_challenge_method=S256 go together."
          ))
        }
        // Stryker disable next-line ConditionalExpression: redirect is undefined only with its problem pushed above; the test narrows its type
        return problems.length > 0 || redirect === undefined ? Effect.fail(BadRequest.many(problems)) : Effect.succeed(redirect)
      })

    const login: Shape["login"] = (input) =>
      Effect.gen(function*() {
        // Every problem in one answer, before anything is stored.
        const redirect = yield* checkLogin(input)
        const state = newSecret()
        const cookie = newSecret()
        const verifier = newSecret()
        const at = yield* now
        yield* store.createSignInState({
          state,
          cookie,
          redirectUri: redirect.href,
          clientState: input.state,
          clientCodeChallenge: input.codeChallenge,
          platformVerifierEnc: yield* cipher.encrypt(Redacted.make(verifier), verifierAad(sha256Hex(state))),
          expiresAt: new Date(at.getTime() + settings.signInStateTtlSeconds * 1000)
        })
        return {
          location: platform.authorizeUrl({ state, codeChallenge: s256(verifier), redirectUri: callbackUrl }),
          cookie: {
            name: cookieName,
            value: cookie,
            options: { httpOnly: true, sameSite: "lax", path: "/", secure, maxAge: Duration.seconds(settings.signInStateTtlSeconds) }
          }
        }
      })

    // After the state is consumed every failure goes back to the client as `error=server_error`.
    const completeSignIn = (code: string, verifierEnc: string, stateHash: string) =>
      Effect.gen(function*() {
        const verifier = yield* cipher.decrypt(verifierEnc, verifierAad(stateHash))
        const tokens = yield* platform.exchangeCode({
          code,
          codeVerifier: Redacted.value(verifier),
          redirectUri: callbackUrl
        })
        const user = yield* platform.getCurrentUser(tokens.access_token)
        const familyId = randomUUID()
        const at = yield* now
        const temporary = {
          token: newToken("temporary"),
          issuedAt: at,
          expiresAt: new Date(at.getTime() + settings.temporaryTokenTtlSeconds * 1000)
        }
        return { familyId, user, tokens, temporary, at }
      })

    const callback: Shape["callback"] = (input) =>
      Effect.gen(function*() {
        if (input.state === undefined || input.state.length === 0 || codePoints(input.state) > MAX_CALLBACK_STATE) {
          return yield* BadRequest.of("The sign-in state is missing.", { path: "state", in: "query" })
        }
        const result = yield* store.consumeSignInState(input.state, input.cookie)
        if (result._tag === "Refused") {
          const why = {
            unknown: "is unknown",
            used: "was already used",
            expired: "has expired",
            cookie: "does not belong to this browser (sign-in cookie missing or different)"
          }[result.reason]
          return yield* BadRequest.of(`The sign-in state ${why}; start the sign-in again.`, { path: "state", in: "query" })
        }
        const s = result.state
        const target = new URL(s.redirectUri)
        const finish = (params: Record<string, string>) => {
          for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v)
          if (s.clientState !== undefined) target.searchParams.set("state", s.clientState)
          return { location: target.href }
        }
        if (input.error !== undefined) {
          return finish({ error: input.error === "access_denied" ? "access_denied" : "server_error" })
        }
        if (input.code === undefined || input.code.length === 0) return finish({ error: "server_error" })
        const outcome = yield* completeSignIn(input.code, s.platformVerifierEnc, s.stateHash).pipe(
          Effect.flatMap((done) =>
            Effect.gen(function*() {
              yield* store.createFamily({
                familyId: done.familyId,
                user: {
                  id: done.user.id,
                  username: done.user.username,
                  discriminator: done.user.discriminator,
                  globalName: done.user.global_name ?? null,
                  avatar: done.user.avatar,
                  locale: done.user.locale ?? "en-US"
                },
                platform: yield* families.encryptPlatform(done.familyId, done.tokens, done.at),
                temporary: done.temporary,
                codeChallenge: s.clientCodeChallenge
              })
              return done.temporary.token
            })
          ),
          Effect.map((code) => ({ code })),
          Effect.catchCause((cause) =>
            // Stryker disable next-line StringLiteral,ObjectLiteral,ArrowFunction: log text and annotations
            Effect.logWarning("sign-in failed after the callback", { failure: cause.reasons.map((r) => r._tag) }).pipe(
              Effect.as({ error: "server_error" })
            )
          )
        )
        return finish(outcome)
      })

    return { cookieName, checkLogin: (input: LoginQuery) => Effect.asVoid(checkLogin(input)), login, callback }
  })
