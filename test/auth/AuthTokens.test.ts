/**
 * The Auth service's tokens (the temporary token's exchange, refresh, check, revoke) on the in-memory
 * store, a counting fake platform and the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { Auth } from "../../src/services/auth/Auth.ts"
import { s256 } from "../../src/services/auth/Pkce.ts"
import { newSecret, TokenStore } from "../../src/services/auth/TokenStore.ts"
import { authLayer, makeFakePlatform } from "./AuthFixtures.ts"
import { CLIENT, failTag, run, signIn, signInRedirect } from "./AuthFlowFixtures.ts"

describe("Auth: temporary token", () => {
  it.effect("works once; a second use is 401 and kills what the first use got", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        const url = yield* signInRedirect(fake)
        const code = url.searchParams.get("code")!
        const tokens = yield* auth.exchange({ authorization: `Bearer ${code}`, codeVerifier: undefined })
        assert.match(tokens.access_token, /^bmg_at_[A-Za-z0-9_-]{43}$/)
        assert.match(tokens.refresh_token, /^bmg_rt_[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(tokens.token_type, "Bearer")
        assert.strictEqual(tokens.scope, "all")
        assert.strictEqual(tokens.expires_in, 3600)
        assert.strictEqual(new Date(tokens.expiration_date).getTime() - new Date(tokens.issued_at).getTime(), 3600_000)
        assert.match(tokens.issued_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        assert.isDefined(yield* store.resolveAccess(tokens.access_token))

        assert.strictEqual(yield* failTag(auth.exchange({ authorization: code, codeVerifier: undefined })), "Unauthorized")
        assert.isUndefined(yield* store.resolveAccess(tokens.access_token), "first-use access token dead")
        assert.strictEqual(yield* failTag(auth.refresh(tokens.refresh_token)), "Unauthorized", "first-use refresh token dead")
        assert.strictEqual(fake.calls.revokeToken, 1, "the platform token was revoked too")
      })))

  it.effect("expired after 60 s, unknown, or absent → 401", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const url = yield* signInRedirect(fake)
        yield* TestClock.adjust("61 seconds")
        assert.strictEqual(yield* failTag(auth.exchange({ authorization: url.searchParams.get("code")!, codeVerifier: undefined })), "Unauthorized")
        assert.strictEqual(yield* failTag(auth.exchange({ authorization: "bmg_tt_" + "A".repeat(43), codeVerifier: undefined })), "Unauthorized")
        assert.strictEqual(yield* failTag(auth.exchange({ authorization: undefined, codeVerifier: undefined })), "Unauthorized")
      })))

  it.effect("PKCE: a missing or wrong X-Code-Verifier → 401; the right one → tokens", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const verifier = newSecret()
        const missing = yield* signInRedirect(fake, { codeChallenge: s256(verifier) })
        assert.strictEqual(yield* failTag(auth.exchange({ authorization: missing.searchParams.get("code")!, codeVerifier: undefined })), "Unauthorized")
        const wrong = yield* signInRedirect(fake, { codeChallenge: s256(verifier) })
        assert.strictEqual(yield* failTag(auth.exchange({ authorization: wrong.searchParams.get("code")!, codeVerifier: newSecret() })), "Unauthorized")
        assert.strictEqual(
          yield* failTag(auth.exchange({ authorization: wrong.searchParams.get("code")!, codeVerifier: verifier })),
          "Unauthorized",
          "a code spent on a wrong verifier stays spent"
        )
        const right = yield* signInRedirect(fake, { codeChallenge: s256(verifier) })
        const tokens = yield* auth.exchange({ authorization: right.searchParams.get("code")!, codeVerifier: verifier })
        assert.match(tokens.access_token, /^bmg_at_/)
      })))
})

describe("Auth: refresh, check, revoke", () => {
  it.effect("refresh rotates; the old pair dies at once; reuse of the old refresh token after 10 s revokes the family", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        const first = yield* signIn(fake)
        const second = yield* auth.refresh(first.refresh_token)
        assert.notStrictEqual(second.access_token, first.access_token)
        assert.notStrictEqual(second.refresh_token, first.refresh_token)
        assert.strictEqual(second.message, "Token refreshed.")
        assert.isUndefined(yield* store.resolveAccess(first.access_token))
        assert.strictEqual(yield* failTag(auth.check(first.access_token)), "Unauthorized")
        assert.isDefined(yield* store.resolveAccess(second.access_token))

        // Within 10 s of its rotation: a client racing its own refreshes; refused, nothing revoked.
        yield* TestClock.adjust("9999 millis")
        assert.strictEqual(yield* failTag(auth.refresh(first.refresh_token)), "Unauthorized")
        assert.isDefined(yield* store.resolveAccess(second.access_token), "the winner's pair survives the race")
        assert.strictEqual(fake.calls.revokeToken, 0)
        // From 10 s on: a copied token; the whole family goes, here and at the platform.
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(yield* failTag(auth.refresh(first.refresh_token)), "Unauthorized")
        assert.isUndefined(yield* store.resolveAccess(second.access_token), "the whole family is revoked")
        assert.strictEqual(yield* failTag(auth.refresh(second.refresh_token)), "Unauthorized")
        assert.strictEqual(fake.calls.revokeToken, 1)
        assert.strictEqual(yield* failTag(auth.refresh(undefined)), "Unauthorized")
      })))

  it.effect("50 concurrent refreshes with one token → exactly one success", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const t = yield* signIn(fake)
        const results = yield* Effect.all(Array.from({ length: 50 }, () => failTag(auth.refresh(t.refresh_token))), {
          concurrency: "unbounded"
        })
        assert.strictEqual(results.filter((r) => r === "success").length, 1)
        assert.strictEqual(results.filter((r) => r === "Unauthorized").length, 49)
        assert.strictEqual(fake.calls.revokeToken, 0, "the losers revoked nothing")
      })))

  it.effect("check: live → is_valid true; expired → is_valid false, expires_in 0; unknown → 401", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const t = yield* signIn(fake)
        yield* TestClock.adjust("600 seconds")
        const live = yield* auth.check(`Bearer ${t.access_token}`)
        assert.isTrue(live.is_valid)
        assert.strictEqual(live.expires_in, 3000)
        assert.strictEqual(live.expiration_date, t.expiration_date)
        yield* TestClock.adjust("3001 seconds")
        const expired = yield* auth.check(t.access_token)
        assert.isFalse(expired.is_valid)
        assert.strictEqual(expired.expires_in, 0)
        assert.strictEqual(expired.issued_at, t.issued_at)
        assert.strictEqual(yield* failTag(auth.check("bmg_at_" + "x".repeat(43))), "Unauthorized")
        assert.strictEqual(yield* failTag(auth.check(t.refresh_token)), "Unauthorized")
        assert.strictEqual(yield* failTag(auth.check(undefined)), "Unauthorized")
      })))

  it.effect("revoke ends the family and the platform token; unknown or repeated → success false", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const t = yield* signIn(fake)
        assert.deepStrictEqual(yield* auth.revoke(t.access_token), { success: true })
        assert.strictEqual(fake.calls.revokeToken, 1)
        assert.strictEqual(fake.live.size, 0)
        assert.strictEqual(yield* failTag(auth.refresh(t.refresh_token)), "Unauthorized")
        assert.strictEqual(yield* failTag(auth.check(t.access_token)), "Unauthorized")
        assert.deepStrictEqual(yield* auth.revoke(t.access_token), { success: false })
        assert.deepStrictEqual(yield* auth.revoke("bmg_at_" + "y".repeat(43)), { success: false })
        assert.deepStrictEqual(yield* auth.revoke(undefined), { success: false })
      })))

  it.effect("storage unreachable → 503", () => {
    const fake = makeFakePlatform()
    const down = Effect.fail(ServiceUnavailable.of("down", 5))
    const broken = Layer.succeed(TokenStore, TokenStore.of({
      resolveAccess: () => down,
      familyOf: () => down,
      createSignInState: () => down,
      consumeSignInState: () => down,
      createFamily: () => down,
      consumeTemporary: () => down,
      issuePair: () => down,
      rotateRefresh: () => down,
      checkAccess: () => down,
      revokeByAccess: () => down,
      revokeFamily: () => down,
      platformTokens: () => down,
      claimPlatformRefresh: () => down,
      releasePlatformRefresh: () => down,
      replacePlatformTokens: () => down
    }))
    return Effect.gen(function*() {
      const auth = yield* Auth
      assert.strictEqual(yield* failTag(auth.revoke("bmg_at_" + "z".repeat(43))), "ServiceUnavailable")
      assert.strictEqual(yield* failTag(auth.refresh("bmg_rt_" + "z".repeat(43))), "ServiceUnavailable")
      assert.strictEqual(yield* failTag(auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })), "ServiceUnavailable")
    }).pipe(Effect.provide(authLayer(broken, fake)))
  })
})
