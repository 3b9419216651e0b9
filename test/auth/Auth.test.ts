/** The Auth service on the in-memory store, a counting fake platform and the TestClock. */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { ServiceUnavailable } from "../../src/domain/Errors.ts"
import { Auth } from "../../src/services/Auth.ts"
import { s256 } from "../../src/services/Pkce.ts"
import { newSecret, TokenStore } from "../../src/services/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { authLayer, makeFakePlatform, testConfig } from "./AuthFixtures.ts"
import type { FakePlatform } from "./AuthFixtures.ts"

const CLIENT = "https://client.example/callback"

const failTag = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(self), (exit) => Exit.isFailure(exit) ? exit.cause.reasons.map((r) => r._tag === "Fail" ? r.error._tag : r._tag).join(",") : "success")

/** login → the platform approves → callback: the client's redirect URL. */
const signInRedirect = (fake: FakePlatform, options: { readonly codeChallenge?: string; readonly state?: string } = {}) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const login = yield* auth.login({
      redirectUri: CLIENT,
      state: options.state,
      codeChallenge: options.codeChallenge,
      codeChallengeMethod: options.codeChallenge === undefined ? undefined : "S256"
    })
    const back = fake.approve(login.location)
    const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
    return new URL(location)
  })
const signIn = (fake: FakePlatform) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const url = yield* signInRedirect(fake)
    return yield* auth.exchange({ authorization: url.searchParams.get("code")!, codeVerifier: undefined })
  })

const run = <A, E>(
  body: (fake: FakePlatform) => Effect.Effect<A, E, Auth | TokenStore>,
  config = testConfig()
) => {
  const fake = makeFakePlatform()
  return body(fake).pipe(Effect.provide(authLayer(TokenStoreMemory, fake, config)))
}

describe("Auth: login", () => {
  it.effect("redirects to the platform with PKCE S256, its own callback, and a one-use state; sets the cookie", () =>
    run(() =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const { location, cookie } = yield* auth.login({ redirectUri: CLIENT, state: "abc", codeChallenge: undefined, codeChallengeMethod: undefined })
        const url = new URL(location)
        assert.strictEqual(url.searchParams.get("redirect_uri"), "https://gateway.test/auth/idp/callback")
        assert.strictEqual(url.searchParams.get("code_challenge_method"), "S256")
        assert.match(url.searchParams.get("code_challenge")!, /^[A-Za-z0-9_-]{43}$/)
        assert.match(url.searchParams.get("state")!, /^[A-Za-z0-9_-]{43}$/)
        assert.notStrictEqual(url.searchParams.get("state"), "abc", "the client's state never goes to the platform")
        assert.strictEqual(cookie.name, "__Host-bmg_signin")
        assert.deepStrictEqual({ ...cookie.options, maxAge: Duration.toSeconds(cookie.options.maxAge) }, {
          httpOnly: true,
          sameSite: "lax",
          path: "/",
          secure: true,
          maxAge: 600
        })
        assert.notStrictEqual(cookie.value, url.searchParams.get("state"))
      })))

  it.effect("over plain http the cookie is not Secure, so not __Host- prefixed", () =>
    run(() =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const { cookie } = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
        assert.strictEqual(cookie.name, "bmg_signin")
        assert.isFalse(cookie.options.secure)
      }), testConfig({ publicUrl: "http://127.0.0.1:8080" })))

  it.effect("missing or unlisted redirect_uri, or half a PKCE pair → 400", () =>
    run(() =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const login = (redirectUri: string | undefined, codeChallenge?: string) =>
          failTag(auth.login({ redirectUri, state: undefined, codeChallenge, codeChallengeMethod: undefined }))
        assert.strictEqual(yield* login(undefined), "BadRequest")
        assert.strictEqual(yield* login("https://evil.example/callback"), "BadRequest")
        assert.strictEqual(yield* login("http://good@evil/callback"), "BadRequest")
        assert.strictEqual(yield* login(CLIENT, s256(newSecret())), "BadRequest")
        assert.strictEqual(yield* login("http://127.0.0.1:61234/cb"), "success")
      })))
})

describe("Auth: callback", () => {
  it.effect("refuses missing, unknown, replayed, expired and other-browser states without calling the platform", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const start = () => auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
        const cb = (state: string | undefined, cookie: string | undefined, code = "whatever") =>
          failTag(auth.callback({ code, state, error: undefined, cookie }))

        const a = yield* start()
        const back = fake.approve(a.location)
        assert.strictEqual(yield* cb(undefined, a.cookie.value), "BadRequest", "missing state")
        assert.strictEqual(yield* cb(newSecret(), a.cookie.value), "BadRequest", "unknown state")
        assert.strictEqual(yield* cb(back.state, undefined), "BadRequest", "no cookie")
        const other = yield* start()
        assert.strictEqual(yield* cb(back.state, other.cookie.value), "BadRequest", "another browser's cookie")
        assert.strictEqual(fake.calls.exchangeCode, 0)

        assert.strictEqual(yield* cb(back.state, a.cookie.value, back.code), "success")
        assert.strictEqual(fake.calls.exchangeCode, 1)
        assert.strictEqual(yield* cb(back.state, a.cookie.value, back.code), "BadRequest", "replayed state")

        const late = yield* start()
        const lateBack = fake.approve(late.location)
        yield* TestClock.adjust("601 seconds")
        assert.strictEqual(yield* cb(lateBack.state, late.cookie.value, lateBack.code), "BadRequest", "expired state")
        assert.strictEqual(fake.calls.exchangeCode, 1, "the platform's token endpoint was called only for the good state")
      })))

  it.effect("success: 302 target is the client's redirect_uri with a temporary token and the client's state", () =>
    run((fake) =>
      Effect.gen(function*() {
        const url = yield* signInRedirect(fake, { state: "client-state-ü/=?&" })
        assert.strictEqual(url.origin + url.pathname, CLIENT)
        assert.match(url.searchParams.get("code")!, /^bmg_tt_[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(url.searchParams.get("state"), "client-state-ü/=?&")
        assert.isNull(url.searchParams.get("error"))
      })))

  it.effect("denial → error=access_denied; a platform failure → error=server_error; state kept", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const a = yield* auth.login({ redirectUri: CLIENT, state: "s1", codeChallenge: undefined, codeChallengeMethod: undefined })
        const back = fake.approve(a.location)
        const denied = new URL((yield* auth.callback({ code: undefined, state: back.state, error: "access_denied", cookie: a.cookie.value })).location)
        assert.strictEqual(denied.searchParams.get("error"), "access_denied")
        assert.strictEqual(denied.searchParams.get("state"), "s1")
        assert.isNull(denied.searchParams.get("code"))

        const b = yield* auth.login({ redirectUri: CLIENT, state: "s2", codeChallenge: undefined, codeChallengeMethod: undefined })
        const backB = fake.approve(b.location)
        const failed = new URL((yield* auth.callback({ code: "not-a-code", state: backB.state, error: undefined, cookie: b.cookie.value })).location)
        assert.strictEqual(failed.searchParams.get("error"), "server_error")
        assert.strictEqual(failed.searchParams.get("state"), "s2")

        const c = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
        const backC = fake.approve(c.location)
        const odd = new URL((yield* auth.callback({ code: undefined, state: backC.state, error: "<script>", cookie: c.cookie.value })).location)
        assert.strictEqual(odd.searchParams.get("error"), "server_error")
        assert.isNull(odd.searchParams.get("state"))
      })))
})

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
    const down = Effect.fail(ServiceUnavailable.of("down"))
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

describe("Auth: platform token", () => {
  it.effect("decrypts the family's platform token", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        const t = yield* signIn(fake)
        const principal = (yield* store.resolveAccess(t.access_token))!
        const token = yield* auth.platformToken(principal)
        assert.strictEqual(Redacted.value(token), fake.issued[0])
        assert.strictEqual(fake.calls.refreshToken, 0)
      })))

  it.effect("an expired platform token is refreshed exactly once under 20 concurrent requests", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        fake.setExpiresIn(30) // inside the 60 s skew: due at once
        const t = yield* signIn(fake)
        fake.setExpiresIn(604800)
        fake.setRefreshDelay(Effect.sleep("1 second"))
        const principal = (yield* store.resolveAccess(t.access_token))!
        const fiber = yield* Effect.forkChild(
          Effect.all(Array.from({ length: 20 }, () => auth.platformToken(principal)), { concurrency: "unbounded" })
        )
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        yield* TestClock.adjust("2 seconds")
        const tokens = yield* Fiber.join(fiber)
        assert.strictEqual(fake.calls.refreshToken, 1)
        assert.strictEqual(new Set(tokens.map(Redacted.value)).size, 1)
        assert.strictEqual(Redacted.value(tokens[0]!), fake.issued[2], "the refreshed token")
        fake.setRefreshDelay(Effect.void)
        const again = yield* auth.platformToken(principal)
        assert.strictEqual(Redacted.value(again), fake.issued[2])
        assert.strictEqual(fake.calls.refreshToken, 1, "the stored refreshed token is used afterwards")
      })))

  it.effect("a platform that refuses the refresh ends the sign-in (401)", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        fake.setExpiresIn(30)
        const t = yield* signIn(fake)
        const principal = (yield* store.resolveAccess(t.access_token))!
        fake.refuseRefresh()
        assert.strictEqual(yield* failTag(auth.platformToken(principal)), "Unauthorized")
        assert.isUndefined(yield* store.resolveAccess(t.access_token), "the family is revoked")
      })))

  it.effect("a revoked sign-in has no platform token", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        const t = yield* signIn(fake)
        const principal = (yield* store.resolveAccess(t.access_token))!
        yield* auth.revoke(t.access_token)
        assert.strictEqual(yield* failTag(auth.platformToken(principal)), "Unauthorized")
      })))
})
