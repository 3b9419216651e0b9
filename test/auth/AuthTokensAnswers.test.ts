/**
 * The gateway's own tokens (AuthTokens.ts), issue #19: what a client reads in each answer, the
 * refusals' messages included (they are the 401 envelope's text), at a clock far from zero.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Unauthorized } from "../../src/domain/infra/Errors.ts"
import { Auth } from "../../src/services/auth/Auth.ts"
import { s256 } from "../../src/services/auth/Pkce.ts"
import { newSecret } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import type { FakePlatform } from "./AuthFixtures.ts"
import { authLayer, makeFakePlatform } from "./AuthFixtures.ts"

const temporaryCode = (fake: FakePlatform, codeChallenge?: string) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const login = yield* auth.login({ redirectUri: "https://client.example/callback", state: "s", codeChallenge, codeChallengeMethod: codeChallenge === undefined ? undefined : "S256" })
    const back = fake.approve(login.location)
    const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
    return new URL(location).searchParams.get("code")!
  })

const messageOf = <A, R>(self: Effect.Effect<A, unknown, R>) =>
  Effect.map(Effect.flip(self), (e) => {
    const error = e as Unauthorized
    assert.strictEqual(error._tag, "Unauthorized")
    return error.problems[0]?.message
  })

const run = <A, E>(body: (fake: FakePlatform) => Effect.Effect<A, E, Auth>) => {
  const fake = makeFakePlatform()
  return Effect.gen(function*() {
    // Far from the epoch: expiry arithmetic must not lean on a clock at zero.
    yield* TestClock.setTime(Date.parse("2031-03-04T05:06:07.000Z"))
    return yield* body(fake)
  }).pipe(Effect.provide(authLayer(TokenStoreMemory, fake)))
}

describe("AuthTokens: what the client reads", () => {
  it.effect("exchange: the pair, and each refusal's message", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        assert.strictEqual(yield* messageOf(auth.exchange({ authorization: undefined, codeVerifier: undefined })), "The temporary token (Authorization header) is required.")
        assert.strictEqual(yield* messageOf(auth.exchange({ authorization: "bmg_tt_" + "A".repeat(43), codeVerifier: undefined })), "The temporary token is unknown or expired.")
        const code = yield* temporaryCode(fake)
        const tokens = yield* auth.exchange({ authorization: `Bearer ${code}`, codeVerifier: undefined })
        assert.strictEqual(tokens.message, "Signed in.")
        assert.strictEqual(tokens.issued_at, "2031-03-04T05:06:07.000Z")
        assert.strictEqual(tokens.expiration_date, "2031-03-04T06:06:07.000Z")
        assert.strictEqual(yield* messageOf(auth.exchange({ authorization: code, codeVerifier: undefined })), "The temporary token was already used; that sign-in is revoked.")
        // What the first use got is revoked.
        assert.strictEqual(yield* messageOf(auth.check(tokens.access_token)), "The access token is unknown or revoked.")
        const verifier = newSecret()
        const pkce = yield* temporaryCode(fake, s256(verifier))
        assert.strictEqual(yield* messageOf(auth.exchange({ authorization: pkce, codeVerifier: newSecret() })), "X-Code-Verifier is missing or does not match the code_challenge of the sign-in.")
      })))

  it.effect("check and refresh: messages, lifetimes, and the refusals", () =>
    run((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const t = yield* auth.exchange({ authorization: yield* temporaryCode(fake), codeVerifier: undefined })
        assert.strictEqual(yield* messageOf(auth.check(undefined)), "The access token (Authorization header) is required.")
        yield* TestClock.adjust("1500 millis")
        const live = yield* auth.check(t.access_token)
        assert.deepStrictEqual({ ...live }, {
          token_type: "Bearer",
          expires_in: 3598,
          scope: "all",
          is_valid: true,
          issued_at: "2031-03-04T05:06:07.000Z",
          expiration_date: "2031-03-04T06:06:07.000Z",
          message: "The access token is valid."
        })
        yield* TestClock.adjust("3600 seconds")
        const expired = yield* auth.check(t.access_token)
        assert.strictEqual(expired.message, "The access token has expired; refresh it.")
        assert.strictEqual(expired.expires_in, 0)
        // The refresh token outlives the access token.
        assert.strictEqual(yield* messageOf(auth.refresh(undefined)), "The refresh token (X-Refresh-Token header) is required.")
        const second = yield* auth.refresh(t.refresh_token)
        assert.strictEqual(second.message, "Token refreshed.")
        assert.strictEqual(second.token_type, "Bearer")
        assert.strictEqual(second.scope, "all")
        assert.strictEqual(new Date(second.expiration_date).getTime() - new Date(second.issued_at).getTime(), 3_600_000)
        assert.strictEqual(yield* messageOf(auth.refresh(t.refresh_token)), "The refresh token was rotated moments ago by a concurrent refresh; use the pair that refresh returned.")
        yield* TestClock.adjust("11 seconds")
        assert.strictEqual(yield* messageOf(auth.refresh(t.refresh_token)), "The refresh token was already used; that sign-in is revoked.")
        assert.strictEqual(yield* messageOf(auth.refresh(second.refresh_token)), "The refresh token is unknown, expired or revoked.")
      })))
})
