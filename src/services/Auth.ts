/**
 * Sign-in and the token lifecycle (decisions.md "Sign-in and tokens"; RFC 9700, RFC 6749 §4.1/§10,
 * RFC 7009, RFC 7636, RFC 8252 §7.3). The gateway is the client of the chat platform's OAuth2
 * (PKCE S256, scopes `identify guilds`) and the authorization server of its own tokens.
 * Requires TokenStore, Cipher, ChatPlatform, AppConfig.
 */
import { Context, Deferred, Duration, Effect, Exit, Layer, Redacted } from "effect"
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import { BadRequest, ServiceUnavailable, Unauthorized } from "../domain/Errors.ts"
import type { RequestTimeout } from "../domain/Errors.ts"
import type { Success, TokenCheck, TokenResponse } from "../domain/Token.ts"
import type { Principal } from "../domain/Principal.ts"
import { parseToken } from "../domain/AccessToken.ts"
import { AppConfig } from "../layers/config/AppConfig.ts"
import { ChatPlatform } from "./ChatPlatform.ts"
import type { PlatformTokens } from "./ChatPlatform.ts"
import { Cipher } from "./Cipher.ts"
import { makeRedirectAllowlist } from "./RedirectAllowlist.ts"
import { newSecret, newToken, now, sha256Hex, TokenStore } from "./TokenStore.ts"
import type { PlatformTokensEnc, RevokedFamily } from "./TokenStore.ts"

/** The sign-in cookie to set on the login answer. */
export interface SignInCookie {
  readonly name: string
  readonly value: string
  readonly options: {
    readonly httpOnly: true
    readonly sameSite: "lax"
    readonly path: "/"
    readonly secure: boolean
    readonly maxAge: Duration.Duration
  }
}

export type PlatformTokenError = Unauthorized | RequestTimeout | ServiceUnavailable

/** S256 (RFC 7636 §4.2). */
export const s256 = (verifier: string): string => createHash("sha256").update(verifier, "ascii").digest("base64url")

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/
const safeEqual = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
/** A platform token is refreshed when it has less than this left. */
const PLATFORM_SKEW_MS = 60_000

export const familyAad = (familyId: string, which: "platform_access" | "platform_refresh") => `family:${familyId}:${which}`
export const verifierAad = (stateHash: string) => `sign_in_state:${stateHash}:platform_verifier`

export class Auth extends Context.Service<Auth, {
  /** The cookie name: `__Host-bmg_signin` over https, `bmg_signin` over plain http (`__Host-` needs Secure). */
  readonly cookieName: string
  /** GET /auth/idp/login: the platform's authorize URL and the cookie binding this browser. */
  readonly login: (input: {
    readonly redirectUri: string | undefined
    readonly state: string | undefined
    readonly codeChallenge: string | undefined
    readonly codeChallengeMethod: "S256" | undefined
  }) => Effect.Effect<{ readonly location: string; readonly cookie: SignInCookie }, BadRequest | ServiceUnavailable>
  /** GET /auth/idp/callback: where to send the browser (the client's redirect_uri with `code` or `error`). */
  readonly callback: (input: {
    readonly code: string | undefined
    readonly state: string | undefined
    readonly error: string | undefined
    readonly cookie: string | undefined
  }) => Effect.Effect<{ readonly location: string }, BadRequest | ServiceUnavailable>
  /** POST /auth/idp/token. */
  readonly exchange: (input: {
    readonly authorization: string | undefined
    readonly codeVerifier: string | undefined
  }) => Effect.Effect<TokenResponse, Unauthorized | ServiceUnavailable>
  readonly check: (authorization: string | undefined) => Effect.Effect<TokenCheck, Unauthorized | ServiceUnavailable>
  readonly refresh: (refreshToken: string | undefined) => Effect.Effect<TokenResponse, Unauthorized | ServiceUnavailable>
  readonly revoke: (authorization: string | undefined) => Effect.Effect<Success, ServiceUnavailable>
  /**
   * The platform access token of the principal's sign-in, refreshed at the platform when (nearly)
   * expired: once per family even under concurrency (single flight here, compare-and-set in storage).
   */
  readonly platformToken: (principal: Principal) => Effect.Effect<Redacted.Redacted<string>, PlatformTokenError>
}>()("gateway/Auth") {
  static readonly layer = Layer.effect(
    Auth,
    Effect.gen(function*() {
      const store = yield* TokenStore
      const cipher = yield* Cipher
      const platform = yield* ChatPlatform
      const config = yield* AppConfig
      const allowlist = makeRedirectAllowlist(config.allowedRedirectUris)
      if (allowlist.invalid.length > 0) {
        yield* Effect.logWarning("ignored invalid ALLOWED_REDIRECT_URIS entries", { count: allowlist.invalid.length })
      }
      const secure = config.publicUrl.startsWith("https://")
      const cookieName = secure ? "__Host-bmg_signin" : "bmg_signin"
      const callbackUrl = `${config.publicUrl}/auth/idp/callback`
      const unauthorized = (message: string) => Unauthorized.of(message)

      const encryptPlatform = (familyId: string, tokens: PlatformTokens, at: Date) =>
        Effect.gen(function*() {
          return {
            accessEnc: yield* cipher.encrypt(tokens.access_token, familyAad(familyId, "platform_access")),
            refreshEnc: yield* cipher.encrypt(tokens.refresh_token, familyAad(familyId, "platform_refresh")),
            expiresAt: new Date(at.getTime() + tokens.expires_in * 1000)
          } satisfies PlatformTokensEnc
        })

      /** Best effort: the platform token of a revoked family is revoked there too; failures are only logged. */
      const revokeAtPlatform = (revoked: RevokedFamily | undefined) =>
        revoked?.platform === undefined ? Effect.void : cipher.decrypt(
          revoked.platform.accessEnc,
          familyAad(revoked.familyId, "platform_access")
        ).pipe(
          Effect.flatMap(platform.revokeToken),
          Effect.catchCause(() => Effect.logWarning("platform token revocation failed (best effort)")),
          Effect.timeout("10 seconds"),
          Effect.ignore
        )

      const revokeFamily = (familyId: string) => Effect.flatMap(store.revokeFamily(familyId), revokeAtPlatform)

      const mintPair = Effect.map(now, (issuedAt) => ({
        access: {
          token: newToken("access"),
          issuedAt,
          expiresAt: new Date(issuedAt.getTime() + config.accessTokenTtlSeconds * 1000)
        },
        refresh: {
          token: newToken("refresh"),
          issuedAt,
          expiresAt: new Date(issuedAt.getTime() + config.refreshTokenTtlSeconds * 1000)
        }
      }))
      type Pair = Effect.Success<typeof mintPair>
      const tokenResponse = (pair: Pair, message: string): TokenResponse => ({
        access_token: pair.access.token,
        token_type: "Bearer",
        expires_in: config.accessTokenTtlSeconds,
        refresh_token: pair.refresh.token,
        scope: "all",
        issued_at: pair.access.issuedAt.toISOString(),
        expiration_date: pair.access.expiresAt.toISOString(),
        message
      })

      const login: Auth["Service"]["login"] = (input) =>
        Effect.gen(function*() {
          const redirect = allowlist.match(input.redirectUri)
          if (redirect === undefined) {
            return yield* BadRequest.of(
              input.redirectUri === undefined
                ? "redirect_uri is required."
                : "redirect_uri is not on the allowlist (loopback URIs match on any port).",
              { path: "redirect_uri", in: "query" }
            )
          }
          if ((input.codeChallenge === undefined) !== (input.codeChallengeMethod === undefined)) {
            return yield* BadRequest.of("code_challenge and code_challenge_method=S256 go together.", {
              path: input.codeChallenge === undefined ? "code_challenge" : "code_challenge_method",
              in: "query"
            })
          }
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
            expiresAt: new Date(at.getTime() + config.signInStateTtlSeconds * 1000)
          })
          return {
            location: platform.authorizeUrl({ state, codeChallenge: s256(verifier), redirectUri: callbackUrl }),
            cookie: {
              name: cookieName,
              value: cookie,
              options: { httpOnly: true, sameSite: "lax", path: "/", secure, maxAge: Duration.seconds(config.signInStateTtlSeconds) }
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
            expiresAt: new Date(at.getTime() + config.temporaryTokenTtlSeconds * 1000)
          }
          return { familyId, user, tokens, temporary, at }
        })

      const callback: Auth["Service"]["callback"] = (input) =>
        Effect.gen(function*() {
          if (input.state === undefined || input.state.length === 0 || input.state.length > 512) {
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
            return yield* BadRequest.of(`The sign-in state ${why}; start the sign-in again.`)
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
                  platform: yield* encryptPlatform(done.familyId, done.tokens, done.at),
                  temporary: done.temporary,
                  codeChallenge: s.clientCodeChallenge
                })
                return done.temporary.token
              })
            ),
            Effect.map((code) => ({ code })),
            Effect.catchCause((cause) =>
              Effect.logWarning("sign-in failed after the callback", { failure: cause.reasons.map((r) => r._tag) }).pipe(
                Effect.as({ error: "server_error" })
              )
            )
          )
          return finish(outcome)
        })

      const exchange: Auth["Service"]["exchange"] = (input) =>
        Effect.gen(function*() {
          const token = parseToken(input.authorization)
          if (token === undefined) return yield* unauthorized("The temporary token (Authorization header) is required.")
          const consumed = yield* store.consumeTemporary(token)
          if (consumed._tag === "Invalid") return yield* unauthorized("The temporary token is unknown or expired.")
          if (consumed._tag === "Replayed") {
            // RFC 6749 §4.1.2 / RFC 9700 §4.2.4: a code used twice revokes what the first use got.
            yield* revokeFamily(consumed.familyId)
            return yield* unauthorized("The temporary token was already used; that sign-in is revoked.")
          }
          if (consumed.codeChallenge !== undefined) {
            const v = input.codeVerifier
            if (v === undefined || !VERIFIER.test(v) || !safeEqual(s256(v), consumed.codeChallenge)) {
              yield* revokeFamily(consumed.familyId)
              return yield* unauthorized("X-Code-Verifier is missing or does not match the code_challenge of the sign-in.")
            }
          }
          const pair = yield* mintPair
          yield* store.issuePair(consumed.familyId, pair)
          return tokenResponse(pair, "Signed in.")
        })

      const check: Auth["Service"]["check"] = (authorization) =>
        Effect.gen(function*() {
          const token = parseToken(authorization)
          if (token === undefined) return yield* unauthorized("The access token (Authorization header) is required.")
          const info = yield* store.checkAccess(token)
          if (info === undefined) return yield* unauthorized("The access token is unknown or revoked.")
          const at = yield* now
          const left = info.expired ? 0 : Math.max(0, Math.floor((info.expiresAt.getTime() - at.getTime()) / 1000))
          return {
            token_type: "Bearer" as const,
            expires_in: left,
            scope: "all",
            is_valid: !info.expired,
            issued_at: info.issuedAt.toISOString(),
            expiration_date: info.expiresAt.toISOString(),
            message: info.expired ? "The access token has expired; refresh it." : "The access token is valid."
          }
        })

      const refresh: Auth["Service"]["refresh"] = (header) =>
        Effect.gen(function*() {
          const token = parseToken(header)
          if (token === undefined) return yield* unauthorized("The refresh token (X-Refresh-Token header) is required.")
          const pair = yield* mintPair
          const result = yield* store.rotateRefresh(token, pair)
          if (result._tag === "Invalid") return yield* unauthorized("The refresh token is unknown, expired or revoked.")
          if (result._tag === "Reused") {
            yield* revokeAtPlatform(result.revoked)
            return yield* unauthorized("The refresh token was already used; that sign-in is revoked.")
          }
          return tokenResponse(pair, "Token refreshed.")
        })

      const revoke: Auth["Service"]["revoke"] = (authorization) =>
        Effect.gen(function*() {
          const token = parseToken(authorization)
          if (token === undefined) return { success: false }
          const revoked = yield* store.revokeByAccess(token)
          if (revoked === undefined) return { success: false }
          yield* revokeAtPlatform(revoked)
          return { success: true }
        })

      // --- platform token, refreshed once per family ------------------------------------------
      const inflight = new Map<string, Deferred.Deferred<Redacted.Redacted<string>, PlatformTokenError>>()
      // A ciphertext that no configured key opens (key removed): the user must sign in again.
      const platformDown = (): Effect.Effect<never, Unauthorized> =>
        Effect.fail(unauthorized("The stored chat-platform credentials cannot be read; sign in again."))

      const refreshAtPlatform = (familyId: string): Effect.Effect<Redacted.Redacted<string>, PlatformTokenError> =>
        Effect.gen(function*() {
          const current = yield* store.platformTokens(familyId)
          if (current === undefined) return yield* unauthorized("The sign-in was revoked; sign in again.")
          const at = yield* now
          if (current.expiresAt.getTime() - at.getTime() > PLATFORM_SKEW_MS) {
            return yield* cipher.decrypt(current.accessEnc, familyAad(familyId, "platform_access"))
          }
          const refreshToken = yield* cipher.decrypt(current.refreshEnc, familyAad(familyId, "platform_refresh"))
          const fresh = yield* platform.refreshToken(refreshToken).pipe(
            Effect.catchTag("PlatformRejected", () =>
              // The platform refused the grant (revoked by the user, or expired): the sign-in is over.
              revokeFamily(familyId).pipe(
                Effect.andThen(Effect.fail(unauthorized("The chat platform ended this sign-in; sign in again.")))
              ))
          )
          const enc = yield* encryptPlatform(familyId, fresh, yield* now)
          const replaced = yield* store.replacePlatformTokens(familyId, current.accessEnc, enc)
          if (!replaced) {
            // Another instance refreshed first: use what it stored.
            const stored = yield* store.platformTokens(familyId)
            if (stored === undefined) return yield* unauthorized("The sign-in was revoked; sign in again.")
            return yield* cipher.decrypt(stored.accessEnc, familyAad(familyId, "platform_access"))
          }
          return fresh.access_token
        }).pipe(Effect.catchTag("CipherError", platformDown))

      const decrypted = new Map<string, { readonly enc: string; readonly token: Redacted.Redacted<string> }>()
      const platformToken: Auth["Service"]["platformToken"] = (principal) =>
        Effect.gen(function*() {
          const current = yield* store.platformTokens(principal.familyId)
          if (current === undefined) return yield* unauthorized("The sign-in was revoked; sign in again.")
          const at = yield* now
          if (current.expiresAt.getTime() - at.getTime() > PLATFORM_SKEW_MS) {
            // A ciphertext (under its family's aad) always decrypts to the same token: decrypt it once.
            const known = decrypted.get(principal.familyId)
            if (known !== undefined && known.enc === current.accessEnc) return known.token
            const token = yield* cipher.decrypt(current.accessEnc, familyAad(principal.familyId, "platform_access")).pipe(
              Effect.catchTag("CipherError", platformDown)
            )
            if (decrypted.size >= 10_000) decrypted.clear()
            decrypted.set(principal.familyId, { enc: current.accessEnc, token })
            return token
          }
          const running = inflight.get(principal.familyId)
          if (running !== undefined) return yield* Deferred.await(running)
          const deferred = Deferred.makeUnsafe<Redacted.Redacted<string>, PlatformTokenError>()
          inflight.set(principal.familyId, deferred)
          return yield* refreshAtPlatform(principal.familyId).pipe(
            Effect.onExit((exit) =>
              Effect.sync(() => {
                inflight.delete(principal.familyId)
                Deferred.doneUnsafe(deferred, Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.failCause(exit.cause))
              })
            )
          )
        })

      return Auth.of({ cookieName, login, callback, exchange, check, refresh, revoke, platformToken })
    })
  )
}
