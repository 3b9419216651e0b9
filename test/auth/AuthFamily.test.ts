/**
 * A sign-in's family (AuthFamily.ts), issue #19: what is sealed for one sign-in opens for no other,
 * and the best-effort revocation at the platform never fails or holds up a revoke here.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { familyAad, verifierAad } from "../../src/services/auth/AuthFamily.ts"
import { Auth } from "../../src/services/auth/Auth.ts"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { Cipher } from "../../src/services/infra/Cipher.ts"
import { TokenStore } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import type { FakePlatform } from "./AuthFixtures.ts"
import { authLayer, makeFakePlatform, testKeyring } from "./AuthFixtures.ts"

const secret = Redacted.make("plat_at_secret")

describe("AuthFamily", () => {
  it.effect("a sealed verifier or platform token opens only for its own sign-in state or family and kind", () =>
    Effect.gen(function*() {
      const cipher = Cipher.make(testKeyring)
      const verifier = yield* cipher.encrypt(secret, verifierAad("state-hash-1"))
      assert.strictEqual(Redacted.value(yield* cipher.decrypt(verifier, verifierAad("state-hash-1"))), "plat_at_secret")
      assert.strictEqual((yield* Effect.flip(cipher.decrypt(verifier, verifierAad("state-hash-2"))))._tag, "CipherError")
      const access = yield* cipher.encrypt(secret, familyAad("fam-1", "platform_access"))
      assert.strictEqual((yield* Effect.flip(cipher.decrypt(access, familyAad("fam-2", "platform_access"))))._tag, "CipherError")
      assert.strictEqual((yield* Effect.flip(cipher.decrypt(access, familyAad("fam-1", "platform_refresh"))))._tag, "CipherError")
      assert.strictEqual((yield* Effect.flip(cipher.decrypt(verifier, familyAad("state-hash-1", "platform_access"))))._tag, "CipherError")
    }))

  const signedIn = (fake: FakePlatform) =>
    Effect.gen(function*() {
      const auth = yield* Auth
      const login = yield* auth.login({ redirectUri: "https://client.example/callback", state: "s", codeChallenge: undefined, codeChallengeMethod: undefined })
      const back = fake.approve(login.location)
      const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
      return yield* auth.exchange({ authorization: new URL(location).searchParams.get("code")!, codeVerifier: undefined })
    })

  const withRevoke = (revokeToken: FakePlatform["platform"]["revokeToken"]) => {
    const fake = makeFakePlatform()
    const failing: FakePlatform = { ...fake, platform: { ...fake.platform, revokeToken } }
    return { fake: failing, layer: authLayer(TokenStoreMemory, failing) }
  }

  it.effect("the platform refusing the revocation: the revoke here still succeeds and ends the family", () => {
    const { fake, layer } = withRevoke(() => Effect.fail(new PlatformRejected({ status: 503, message: "down" })))
    return Effect.gen(function*() {
      const auth = yield* Auth
      const t = yield* signedIn(fake)
      assert.deepStrictEqual(yield* auth.revoke(t.access_token), { success: true })
      assert.isUndefined(yield* (yield* TokenStore).resolveAccess(t.access_token))
      assert.strictEqual((yield* Effect.flip(auth.refresh(t.refresh_token)))._tag, "Unauthorized")
    }).pipe(Effect.provide(layer))
  })

  it.effect("the platform crashing or never answering the revocation: the revoke here ends within 10 s", () =>
    Effect.gen(function*() {
      for (const revokeToken of [() => Effect.die("boom"), () => Effect.never]) {
        const { fake, layer } = withRevoke(revokeToken)
        yield* Effect.gen(function*() {
          const auth = yield* Auth
          const t = yield* signedIn(fake)
          const fiber = yield* Effect.forkChild(auth.revoke(t.access_token))
          yield* TestClock.adjust("10 seconds")
          assert.deepStrictEqual(yield* Fiber.join(fiber), { success: true })
          assert.isUndefined(yield* (yield* TokenStore).resolveAccess(t.access_token))
        }).pipe(Effect.provide(layer))
      }
    }))
})
