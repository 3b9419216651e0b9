/**
 * The token store's test data: the signed-in user and the platform tokens a family stores, tokens
 * issued at an instant, and a family signed in at the clock's now (temporary token, then a pair).
 */
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { newToken, TokenStore } from "../../src/services/auth/TokenStore.ts"
import type { NewToken, TokenKind } from "../../src/services/auth/TokenStore.ts"

export const user = { id: "100000000000000001", username: "alice", discriminator: "0", globalName: null, avatar: null, locale: "en-US" }
export const platform = { accessEnc: "v1.k1.aaa.bbb", refreshEnc: "v1.k1.ccc.ddd", expiresAt: new Date(Date.now() + 3600_000) }

/** A new token of `kind` issued at `at`, live for `ttlSeconds`. */
export const tokenAt = (kind: TokenKind, at: Date, ttlSeconds: number): NewToken => ({
  token: newToken(kind),
  issuedAt: at,
  expiresAt: new Date(at.getTime() + ttlSeconds * 1000)
})

/** An access token (1 h, or `accessTtlSeconds`) and a refresh token (1 day) issued at `at`. */
export const pairAt = (at: Date, accessTtlSeconds = 3600) => ({
  access: tokenAt("access", at, accessTtlSeconds),
  refresh: tokenAt("refresh", at, 86_400)
})

/** A family signed in on the TokenStore in context at the clock's now: its temporary token and first pair. */
export const signedInFamily = (options: { readonly accessTtlSeconds?: number } = {}) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const at = new Date(yield* Clock.currentTimeMillis)
    const familyId = randomUUID()
    const temporary = tokenAt("temporary", at, 60)
    yield* store.createFamily({ familyId, user, platform, temporary, codeChallenge: undefined })
    const first = pairAt(at, options.accessTtlSeconds)
    yield* store.issuePair(familyId, first)
    return { familyId, at, temporary, ...first }
  })
