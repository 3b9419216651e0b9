/**
 * The TokenStore contract: sign-in states, temporary tokens, access/refresh pairs and their rotation
 * (the race grace, reuse revoking the family), revocation and the platform tokens, on every layer.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Layer } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { newSecret, newToken, REFRESH_RACE_GRACE_MS, TokenStore } from "../../src/services/auth/TokenStore.ts"
import type { NewToken, TokenKind } from "../../src/services/auth/TokenStore.ts"

const user = { id: "100000000000000001", username: "alice", discriminator: "0", globalName: null, avatar: null, locale: "en-US" }
const token = (kind: TokenKind, ttlSeconds = 3600): NewToken => {
  const issuedAt = new Date()
  return { token: newToken(kind), issuedAt, expiresAt: new Date(issuedAt.getTime() + ttlSeconds * 1000) }
}
const platform = { accessEnc: "v1.k1.aaa.bbb", refreshEnc: "v1.k1.ccc.ddd", expiresAt: new Date(Date.now() + 3600_000) }

/** A family with a temporary token, already exchanged for a pair. */
const family = (codeChallenge?: string) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const familyId = randomUUID()
    const temporary = token("temporary", 60)
    yield* store.createFamily({ familyId, user, platform, temporary, codeChallenge })
    return { familyId, temporary }
  })
const signedIn = Effect.gen(function*() {
  const store = yield* TokenStore
  const { familyId } = yield* family()
  const pair = { access: token("access"), refresh: token("refresh", 86400) }
  yield* store.issuePair(familyId, pair)
  return { familyId, ...pair }
})

export const tokenStoreContract = (name: string, storeLayer: Layer.Layer<TokenStore, unknown>) =>
  layer(storeLayer, { excludeTestServices: true })(`TokenStore contract (${name})`, (it) => {
    it.effect("tokens have the prefixes and 256 random bits in base64url", () =>
      Effect.sync(() => {
        assert.match(newToken("access"), /^bmg_at_[A-Za-z0-9_-]{43}$/)
        assert.match(newToken("refresh"), /^bmg_rt_[A-Za-z0-9_-]{43}$/)
        assert.match(newToken("temporary"), /^bmg_tt_[A-Za-z0-9_-]{43}$/)
      }))

    it.effect("resolves a live access token, not an unknown, expired or revoked one", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        const p = yield* store.resolveAccess(s.access.token)
        assert.strictEqual(p?.familyId, s.familyId)
        assert.strictEqual(p?.userId, user.id)
        assert.isUndefined(yield* store.resolveAccess(newToken("access")))
        assert.isUndefined(yield* store.resolveAccess(s.refresh.token), "a refresh token is not an access token")
        const expired = token("access", -1)
        yield* store.issuePair(s.familyId, { access: expired, refresh: token("refresh") })
        assert.isUndefined(yield* store.resolveAccess(expired.token))
        yield* store.revokeFamily(s.familyId)
        assert.isUndefined(yield* store.resolveAccess(s.access.token))
      }))

    it.effect("a sign-in state is used once, only with its cookie, only before it expires", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const make = (ttl: number) => {
          const state = newSecret()
          const cookie = newSecret()
          return store.createSignInState({
            state,
            cookie,
            redirectUri: "https://client.example/callback",
            clientState: "xyz",
            clientCodeChallenge: undefined,
            platformVerifierEnc: "v1.k1.n.c",
            expiresAt: new Date(Date.now() + ttl * 1000)
          }).pipe(Effect.as({ state, cookie }))
        }
        const a = yield* make(600)
        const wrong = yield* store.consumeSignInState(a.state, newSecret())
        assert.deepStrictEqual(wrong, { _tag: "Refused", reason: "cookie" })
        const none = yield* store.consumeSignInState(a.state, undefined)
        assert.deepStrictEqual(none, { _tag: "Refused", reason: "cookie" })
        const ok = yield* store.consumeSignInState(a.state, a.cookie)
        assert.strictEqual(ok._tag, "Consumed")
        if (ok._tag === "Consumed") {
          assert.strictEqual(ok.state.redirectUri, "https://client.example/callback")
          assert.strictEqual(ok.state.clientState, "xyz")
          assert.isUndefined(ok.state.clientCodeChallenge)
        }
        assert.deepStrictEqual(yield* store.consumeSignInState(a.state, a.cookie), { _tag: "Refused", reason: "used" })
        assert.deepStrictEqual(yield* store.consumeSignInState(newSecret(), a.cookie), { _tag: "Refused", reason: "unknown" })
        const b = yield* make(-1)
        assert.deepStrictEqual(yield* store.consumeSignInState(b.state, b.cookie), { _tag: "Refused", reason: "expired" })
      }))

    it.effect("a temporary token is consumed once; a second use is reported as a replay", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const { familyId, temporary } = yield* family("challenge-value")
        const first = yield* store.consumeTemporary(temporary.token)
        assert.deepStrictEqual(first, { _tag: "Consumed", familyId, codeChallenge: "challenge-value" })
        assert.deepStrictEqual(yield* store.consumeTemporary(temporary.token), { _tag: "Replayed", familyId })
        assert.deepStrictEqual(yield* store.consumeTemporary(newToken("temporary")), { _tag: "Invalid" })
        const store2 = yield* TokenStore
        const expiredFamily = randomUUID()
        const expired = token("temporary", -1)
        yield* store2.createFamily({ familyId: expiredFamily, user, platform, temporary: expired, codeChallenge: undefined })
        assert.deepStrictEqual(yield* store.consumeTemporary(expired.token), { _tag: "Invalid" })
      }))

    it.effect("rotation: a new pair, the old pair dead at once; reuse within 10 s is a race, later it revokes the family", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        const next = { access: token("access"), refresh: token("refresh", 86400) }
        const r = yield* store.rotateRefresh(s.refresh.token, next)
        assert.deepStrictEqual(r, { _tag: "Rotated", familyId: s.familyId })
        assert.isUndefined(yield* store.resolveAccess(s.access.token), "previous access token dead")
        assert.isUndefined(yield* store.checkAccess(s.access.token), "previous access token revoked")
        assert.isDefined(yield* store.resolveAccess(next.access.token))
        const raced = yield* store.rotateRefresh(s.refresh.token, { access: token("access"), refresh: token("refresh") })
        assert.deepStrictEqual(raced, { _tag: "Raced", familyId: s.familyId })
        assert.isDefined(yield* store.resolveAccess(next.access.token), "a race revokes nothing")
        // The same reuse 10 s after the rotation (the clock moved on; the rotation's time is stored).
        const reuse = yield* Effect.gen(function*() {
          yield* TestClock.setTime(Date.now() + REFRESH_RACE_GRACE_MS + 1_000)
          return yield* store.rotateRefresh(s.refresh.token, { access: token("access"), refresh: token("refresh") })
        }).pipe(Effect.provide(TestClock.layer()))
        assert.strictEqual(reuse._tag, "Reused")
        if (reuse._tag === "Reused") assert.strictEqual(reuse.revoked?.platform?.accessEnc, platform.accessEnc)
        assert.isUndefined(yield* store.resolveAccess(next.access.token), "family revoked")
        const after = yield* store.rotateRefresh(next.refresh.token, { access: token("access"), refresh: token("refresh") })
        assert.deepStrictEqual(after, { _tag: "Invalid" })
        assert.deepStrictEqual(
          yield* store.rotateRefresh(newToken("refresh"), { access: token("access"), refresh: token("refresh") }),
          { _tag: "Invalid" }
        )
      }))

    it.effect("an expired refresh token does not rotate", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const { familyId } = yield* family()
        const refresh = token("refresh", -1)
        yield* store.issuePair(familyId, { access: token("access"), refresh })
        const r = yield* store.rotateRefresh(refresh.token, { access: token("access"), refresh: token("refresh") })
        assert.deepStrictEqual(r, { _tag: "Invalid" })
      }))

    it.effect("50 concurrent rotations of one refresh token: exactly one succeeds", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        const results = yield* Effect.all(
          Array.from({ length: 50 }, () =>
            store.rotateRefresh(s.refresh.token, { access: token("access"), refresh: token("refresh") })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r._tag === "Rotated").length, 1)
        assert.strictEqual(results.filter((r) => r._tag === "Raced").length, 49, "the losers raced: nothing revoked")
      }), 30_000)

    it.effect("check: live, expired (known), unknown, revoked", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        const live = yield* store.checkAccess(s.access.token)
        assert.strictEqual(live?.expired, false)
        const expired = token("access", -5)
        yield* store.issuePair(s.familyId, { access: expired, refresh: token("refresh") })
        assert.strictEqual((yield* store.checkAccess(expired.token))?.expired, true)
        assert.isUndefined(yield* store.checkAccess(newToken("access")))
        assert.isUndefined(yield* store.checkAccess(s.refresh.token))
        yield* store.revokeFamily(s.familyId)
        assert.isUndefined(yield* store.checkAccess(s.access.token))
      }))

    it.effect("revoke by access token: once, with the platform tokens; then nothing", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        const revoked = yield* store.revokeByAccess(s.access.token)
        assert.strictEqual(revoked?.familyId, s.familyId)
        assert.deepStrictEqual(revoked?.platform, platform)
        assert.isUndefined(yield* store.revokeByAccess(s.access.token))
        assert.isUndefined(yield* store.revokeByAccess(newToken("access")))
        const r = yield* store.rotateRefresh(s.refresh.token, { access: token("access"), refresh: token("refresh") })
        assert.deepStrictEqual(r, { _tag: "Invalid" }, "the refresh token of a revoked family is dead")
        assert.isUndefined(yield* store.platformTokens(s.familyId))
      }))

    it.effect("familyOf: a live token of any kind; not an unknown, expired or revoked one", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        assert.strictEqual(yield* store.familyOf(s.access.token), s.familyId)
        assert.strictEqual(yield* store.familyOf(s.refresh.token), s.familyId)
        assert.isUndefined(yield* store.familyOf(newToken("refresh")))
        const expired = token("access", -1)
        yield* store.issuePair(s.familyId, { access: expired, refresh: token("refresh") })
        assert.isUndefined(yield* store.familyOf(expired.token))
        yield* store.revokeFamily(s.familyId)
        assert.isUndefined(yield* store.familyOf(s.refresh.token))
      }))

    it.effect("platform refresh claim: one holder at a time, only on the current tokens; released or ended by a replacement", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        const until = new Date(Date.now() + 15_000)
        assert.isFalse(yield* store.claimPlatformRefresh(s.familyId, "v1.k1.other.enc", until), "not on stale tokens")
        assert.isTrue(yield* store.claimPlatformRefresh(s.familyId, platform.accessEnc, until))
        assert.isFalse(yield* store.claimPlatformRefresh(s.familyId, platform.accessEnc, new Date(Date.now() + 15_000)), "held")
        yield* store.releasePlatformRefresh(s.familyId, new Date(until.getTime() + 1))
        assert.isFalse(yield* store.claimPlatformRefresh(s.familyId, platform.accessEnc, until), "another's release does not end it")
        yield* store.releasePlatformRefresh(s.familyId, until)
        const second = new Date(Date.now() + 15_000)
        assert.isTrue(yield* store.claimPlatformRefresh(s.familyId, platform.accessEnc, second), "released")
        const next = { accessEnc: "v1.k1.claimed.a", refreshEnc: "v1.k1.claimed.r", expiresAt: new Date(Date.now() + 7200_000) }
        assert.isTrue(yield* store.replacePlatformTokens(s.familyId, platform.accessEnc, next))
        assert.isTrue(yield* store.claimPlatformRefresh(s.familyId, next.accessEnc, new Date(Date.now() + 15_000)), "the replacement ended the claim")
        const expiredClaim = yield* signedIn
        assert.isTrue(yield* store.claimPlatformRefresh(expiredClaim.familyId, platform.accessEnc, new Date(Date.now() - 1)))
        assert.isTrue(yield* store.claimPlatformRefresh(expiredClaim.familyId, platform.accessEnc, until), "an expired claim is free")
        yield* store.revokeFamily(expiredClaim.familyId)
        assert.isFalse(yield* store.claimPlatformRefresh(expiredClaim.familyId, platform.accessEnc, new Date(Date.now() + 60_000)), "not on a revoked family")
      }))

    it.effect("platform tokens: compare-and-set replacement", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const s = yield* signedIn
        const next = { accessEnc: "v1.k1.new.a", refreshEnc: "v1.k1.new.r", expiresAt: new Date(Date.now() + 7200_000) }
        assert.isTrue(yield* store.replacePlatformTokens(s.familyId, platform.accessEnc, next))
        assert.isFalse(yield* store.replacePlatformTokens(s.familyId, platform.accessEnc, platform))
        assert.deepStrictEqual(yield* store.platformTokens(s.familyId), next)
      }))
  })
