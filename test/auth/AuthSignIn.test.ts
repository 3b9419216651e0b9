/** The Auth service's sign-in (login, then the platform's callback) on the in-memory store, a counting fake platform and the TestClock. */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { Auth } from "../../src/services/auth/Auth.ts"
import { s256 } from "../../src/services/auth/Pkce.ts"
import { newSecret } from "../../src/services/auth/TokenStore.ts"
import { testConfig } from "./AuthFixtures.ts"
import { CLIENT, failTag, run, signInRedirect } from "./AuthFlowFixtures.ts"

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
