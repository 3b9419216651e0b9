/**
 * The gateway's own tokens (POST /auth/idp/token, GET …/check, POST …/refresh, POST …/revoke):
 * the temporary token of a sign-in is exchanged once for an access and refresh pair; refresh
 * rotates the pair; revoke ends the family here and, best effort, at the platform (RFC 6749 §4.1.2,
 * RFC 7009, RFC 7636, RFC 9700 §4.2.4 and §4.14.2).
 */
import { Clock, Effect } from "effect"
import { Unauthorized } from "../../domain/infra/Errors.ts"
import { parseToken } from "../../domain/auth/AccessToken.ts"
import type { TokenCheck, TokenResponse } from "../../domain/auth/Token.ts"
import type { Auth } from "./Auth.ts"
import type { Families } from "./AuthFamily.ts"
import { AuthSettings } from "./AuthSettings.ts"
import { verifierMatches } from "./Pkce.ts"
import { newToken, now, TokenStore } from "./TokenStore.ts"
import type { NewToken, TokenInfo } from "./TokenStore.ts"

type Shape = Auth["Service"]

interface Pair {
  readonly access: NewToken
  readonly refresh: NewToken
}

export const makeTokenLifecycle = (families: Families) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const settings = yield* AuthSettings
    const unauthorized = (message: string) => Unauthorized.of(message)

    const mintPair: Effect.Effect<Pair> = Effect.map(now, (issuedAt) => ({
      access: {
        token: newToken("access"),
        issuedAt,
        expiresAt: new Date(issuedAt.getTime() + settings.accessTokenTtlSeconds * 1000)
      },
      refresh: {
        token: newToken("refresh"),
        issuedAt,
        expiresAt: new Date(issuedAt.getTime() + settings.refreshTokenTtlSeconds * 1000)
      }
    }))
    const tokenResponse = (pair: Pair, message: string): TokenResponse => ({
      access_token: pair.access.token,
      token_type: "Bearer",
      expires_in: settings.accessTokenTtlSeconds,
      refresh_token: pair.refresh.token,
      scope: "all",
      issued_at: pair.access.issuedAt.toISOString(),
      expiration_date: pair.access.expiresAt.toISOString(),
      message
    })

    const exchange: Shape["exchange"] = (input) =>
      Effect.gen(function*() {
        const token = parseToken(input.authorization)
        if (token === undefined) return yield* unauthorized("The temporary token (Authorization header) is required.")
        const consumed = yield* store.consumeTemporary(token)
        if (consumed._tag === "Invalid") return yield* unauthorized("The temporary token is unknown or expired.")
        if (consumed._tag === "Replayed") {
          // RFC 6749 §4.1.2 / RFC 9700 §4.2.4: a code used twice revokes what the first use got.
          yield* families.revokeFamily(consumed.familyId)
          return yield* unauthorized("The temporary token was already used; that sign-in is revoked.")
        }
        if (consumed.codeChallenge !== undefined && !verifierMatches(input.codeVerifier, consumed.codeChallenge)) {
          yield* families.revokeFamily(consumed.familyId)
          return yield* unauthorized("X-Code-Verifier is missing or does not match the code_challenge of the sign-in.")
        }
        const pair = yield* mintPair
        yield* store.issuePair(consumed.familyId, pair)
        return tokenResponse(pair, "Signed in.")
      })

    // A check's answer is decided by the stored times and the whole seconds left: kept per TokenInfo
    // object (the cached store hands out one per kept check: layers/auth/TokenStoreCached.ts) for
    // as long as the seconds left stay the same, so a repeated check builds no new answer and the
    // handler can keep its encoding by it (handlers/Auth.ts). A revocation or rotation ends the
    // entry, and with it the object: the next check reads the store and answers anew.
    const checkAnswers = new WeakMap<TokenInfo, { readonly left: number; readonly answer: TokenCheck }>()
    const checkAnswer = (info: TokenInfo, at: number): TokenCheck => {
      const left = info.expired ? 0 : Math.max(0, Math.floor((info.expiresAt.getTime() - at) / 1000))
      const known = checkAnswers.get(info)
      if (known !== undefined && known.left === left) return known.answer
      const answer: TokenCheck = Object.freeze({
        token_type: "Bearer" as const,
        expires_in: left,
        scope: "all",
        is_valid: !info.expired,
        issued_at: info.issuedAt.toISOString(),
        expiration_date: info.expiresAt.toISOString(),
        message: info.expired ? "The access token has expired; refresh it." : "The access token is valid."
      })
      checkAnswers.set(info, { left, answer })
      return answer
    }

    // No Effect.gen: the hot path (a cached check) is one lookup and one clock read.
    const check: Shape["check"] = (authorization) => {
      const token = parseToken(authorization)
      if (token === undefined) return Effect.fail(unauthorized("The access token (Authorization header) is required."))
      return Effect.flatMap(store.checkAccess(token), (info) =>
        info === undefined
          ? Effect.fail(unauthorized("The access token is unknown or revoked."))
          : Effect.map(Clock.currentTimeMillis, (at) => checkAnswer(info, at)))
    }

    const refresh: Shape["refresh"] = (header) =>
      Effect.gen(function*() {
        const token = parseToken(header)
        if (token === undefined) return yield* unauthorized("The refresh token (X-Refresh-Token header) is required.")
        const pair = yield* mintPair
        const result = yield* store.rotateRefresh(token, pair)
        if (result._tag === "Invalid") return yield* unauthorized("The refresh token is unknown, expired or revoked.")
        if (result._tag === "Raced") {
          // Another refresh with this token won a moment ago: the pair it returned stays valid.
          return yield* unauthorized("The refresh token was rotated moments ago by a concurrent refresh; use the pair that refresh returned.")
        }
        if (result._tag === "Reused") {
          // The store has revoked the family (TokenStore.fromStorage); the platform's token goes too.
          yield* families.revokeAtPlatform(result.revoked)
          return yield* unauthorized("The refresh token was already used; that sign-in is revoked.")
        }
        return tokenResponse(pair, "Token refreshed.")
      })

    const revoke: Shape["revoke"] = (authorization) =>
      Effect.gen(function*() {
        const token = parseToken(authorization)
        if (token === undefined) return { success: false }
        const revoked = yield* store.revokeByAccess(token)
        if (revoked === undefined) return { success: false }
        yield* families.revokeAtPlatform(revoked)
        return { success: true }
      })

    return { exchange, check, refresh, revoke }
  })
