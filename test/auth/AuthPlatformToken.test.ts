/**
 * The Auth service's platform token of a sign-in on the in-memory store, a counting fake platform and
 * the TestClock: decrypted, refreshed once under concurrent requests, refused, revoked. (Across
 * instances and keys: PlatformToken.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { Auth } from "../../src/services/auth/Auth.ts"
import { TokenStore } from "../../src/services/auth/TokenStore.ts"
import { failTag, run, signIn } from "./AuthFlowFixtures.ts"

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
