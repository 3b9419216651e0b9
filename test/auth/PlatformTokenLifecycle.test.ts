/**
 * The platform token of a sign-in, one gateway instance at a time: decrypted, refreshed when due
 * (once under concurrent requests), a refused refresh or a revoked sign-in is 401; a ciphertext no
 * key opens is "sign in again" (401), never a 500; lifetimes hold at a clock far from zero.
 * Several instances sharing one store: PlatformTokenAcrossInstances.test.ts; over HTTP:
 * PlatformTokenHttp.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { SettingsLive } from "../../src/layers/config/Settings.ts"
import { TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import { Auth } from "../../src/services/auth/Auth.ts"
import { AuthLive } from "../../src/services/auth/AuthLive.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import type { Keyring } from "../../src/services/infra/Cipher.ts"
import { TokenStore } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { makeFakePlatform, testConfig, testKeyring } from "./AuthFixtures.ts"
import type { FakePlatform } from "./AuthFixtures.ts"
import { run as runFlow, signIn as signInFlow } from "./AuthFlowFixtures.ts"

const CLIENT = "https://client.example/callback"

const failTag = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(self), (exit) => Exit.isFailure(exit) ? exit.cause.reasons.map((r) => r._tag === "Fail" ? r.error._tag : r._tag).join(",") : "success")

/** A gateway instance: its own Auth (own single flight and decrypted cache), optionally its own token cache and keys, over the shared store. */
const instance = (options: { readonly cacheMs?: number; readonly keyring?: Keyring } = {}) =>
  Effect.gen(function*() {
    let auth: Layer.Layer<Auth, never, TokenStore | Cipher | ChatPlatform | Layer.Success<ReturnType<typeof SettingsLive>>> = AuthLive
    if (options.cacheMs !== undefined) auth = auth.pipe(Layer.provide(TokenStoreCached(options.cacheMs)))
    if (options.keyring !== undefined) auth = auth.pipe(Layer.provide(Cipher.layer(options.keyring)))
    const context = yield* Layer.build(Layer.fresh(auth))
    return Context.get(context, Auth)
  })

/** The store, keys, platform and settings every instance shares; what they log is kept (CapturedLogs), not printed. */
const shared = <E>(store: Layer.Layer<TokenStore, E>, fake: FakePlatform) =>
  Layer.mergeAll(store, Cipher.layer(testKeyring), Layer.succeed(ChatPlatform, fake.platform), SettingsLive(testConfig())).pipe(
    Layer.provideMerge(CapturedLogs.layer)
  )

/** Signs in through `auth` (login → the platform approves → callback → exchange); the principal. */
const signIn = (auth: Auth["Service"], fake: FakePlatform) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const login = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
    const back = fake.approve(login.location)
    const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
    const tokens = yield* auth.exchange({ authorization: new URL(location).searchParams.get("code")!, codeVerifier: undefined })
    return { tokens, principal: (yield* store.resolveAccess(tokens.access_token))! }
  })

describe("one instance: the sign-in's platform token", () => {
  it.effect("decrypts the family's platform token", () =>
    runFlow((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        const t = yield* signInFlow(fake)
        const principal = (yield* store.resolveAccess(t.access_token))!
        const token = yield* auth.platformToken(principal)
        assert.strictEqual(Redacted.value(token), fake.issued[0])
        assert.strictEqual(fake.calls.refreshToken, 0)
      })))

  it.effect("an expired platform token is refreshed exactly once under 20 concurrent requests", () =>
    runFlow((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        fake.setExpiresIn(30) // inside the 60 s skew: due at once
        const t = yield* signInFlow(fake)
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
    runFlow((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        fake.setExpiresIn(30)
        const t = yield* signInFlow(fake)
        const principal = (yield* store.resolveAccess(t.access_token))!
        fake.refuseRefresh()
        assert.strictEqual(yield* failTag(auth.platformToken(principal)), "Unauthorized")
        assert.isUndefined(yield* store.resolveAccess(t.access_token), "the family is revoked")
      })))

  it.effect("a revoked sign-in has no platform token", () =>
    runFlow((fake) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        const t = yield* signInFlow(fake)
        const principal = (yield* store.resolveAccess(t.access_token))!
        yield* auth.revoke(t.access_token)
        assert.strictEqual(yield* failTag(auth.platformToken(principal)), "Unauthorized")
      })))
})

describe("a stored platform token that no key opens", () => {
  it.effect("moved to another sign-in (aad mismatch) → 401 sign in again, not 500", () => {
    const fake = makeFakePlatform()
    return Effect.gen(function*() {
      const auth = yield* instance()
      const store = yield* TokenStore
      const alice = yield* signIn(auth, fake)
      const other = yield* signIn(auth, fake)
      const stolen = (yield* store.platformTokens(other.principal.familyId))!
      const mine = (yield* store.platformTokens(alice.principal.familyId))!
      assert.isTrue(yield* store.replacePlatformTokens(alice.principal.familyId, mine.accessEnc, stolen))
      const exit = yield* Effect.exit(auth.platformToken(alice.principal))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = exit.cause.reasons.find((r) => r._tag === "Fail")
        assert.strictEqual(error?._tag === "Fail" ? error.error._tag : "none", "Unauthorized")
        assert.match(error?._tag === "Fail" ? error.error.problems[0]!.message : "", /sign in again/)
      }
      // The same when it is due: the refresh token does not open either.
      assert.strictEqual(yield* failTag(auth.renewPlatformToken(alice.principal, Redacted.make("whatever"))), "Unauthorized")
      assert.strictEqual(fake.calls.refreshToken, 0, "nothing unreadable is sent to the platform")
    }).pipe(Effect.provide(shared(TokenStoreMemory, fake)))
  })

  it.effect("the key that encrypted it removed from TOKEN_ENCRYPTION_KEY → 401 sign in again", () => {
    const fake = makeFakePlatform()
    const k1 = generateKey()
    const k2 = generateKey()
    return Effect.gen(function*() {
      const before = yield* instance({ keyring: parseKeyring(`k1:${k1}`) })
      const rotated = yield* instance({ keyring: parseKeyring(`k2:${k2},k1:${k1}`) })
      const removed = yield* instance({ keyring: parseKeyring(`k2:${k2}`) })
      const { principal } = yield* signIn(before, fake)
      assert.strictEqual(Redacted.value(yield* rotated.platformToken(principal)), fake.issued[0], "an old key still opens it")
      assert.strictEqual(yield* failTag(removed.platformToken(principal)), "Unauthorized")
    }).pipe(Effect.provide(shared(TokenStoreMemory, fake)))
  })
})

describe("lifetimes at a clock far from zero", () => {
  it.effect("access 3600 s, refresh 30 days, temporary 60 s, sign-in state 10 min, platform token by its expires_in", () => {
    const fake = makeFakePlatform()
    const t0 = Date.UTC(2031, 5, 15, 12, 0, 0)
    return Effect.gen(function*() {
      yield* TestClock.setTime(t0)
      const auth = yield* instance()
      const store = yield* TokenStore
      const { tokens, principal } = yield* signIn(auth, fake)
      assert.strictEqual(tokens.issued_at, new Date(t0).toISOString())
      assert.strictEqual(tokens.expiration_date, new Date(t0 + 3600_000).toISOString())
      assert.strictEqual(tokens.expires_in, 3600)
      assert.strictEqual(principal.accessExpiresAt.getTime(), t0 + 3600_000)

      yield* TestClock.adjust("3599 seconds")
      assert.strictEqual((yield* auth.check(tokens.access_token)).expires_in, 1)
      assert.isDefined(yield* store.resolveAccess(tokens.access_token))
      yield* TestClock.adjust("1 second")
      assert.isUndefined(yield* store.resolveAccess(tokens.access_token), "dead at exactly 3600 s")
      assert.isFalse((yield* auth.check(tokens.access_token)).is_valid)

      // The refresh token: alive until 30 days after its issue, not a millisecond longer.
      yield* TestClock.setTime(t0 + 30 * 86400_000 - 1)
      const next = yield* auth.refresh(tokens.refresh_token)
      assert.strictEqual(next.issued_at, new Date(t0 + 30 * 86400_000 - 1).toISOString())
      assert.strictEqual(next.expiration_date, new Date(t0 + 30 * 86400_000 - 1 + 3600_000).toISOString())
      yield* TestClock.setTime(t0 + 60 * 86400_000 - 1)
      assert.strictEqual(yield* failTag(auth.refresh(next.refresh_token)), "Unauthorized", "dead at exactly 30 days")

      // Temporary token and sign-in state, far from zero too.
      const start = t0 + 90 * 86400_000
      yield* TestClock.setTime(start)
      const login = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
      const back = fake.approve(login.location)
      yield* TestClock.setTime(start + 600_000)
      assert.strictEqual(yield* failTag(auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })), "BadRequest", "state dead at 10 min")
      const again = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
      const approved = fake.approve(again.location)
      const { location } = yield* auth.callback({ code: approved.code, state: approved.state, error: undefined, cookie: again.cookie.value })
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual(
        yield* failTag(auth.exchange({ authorization: new URL(location).searchParams.get("code")!, codeVerifier: undefined })),
        "Unauthorized",
        "temporary token dead at 60 s"
      )
    }).pipe(Effect.provide(shared(TokenStoreMemory, fake)))
  })

  it.effect("an expired platform token is refreshed before use, not one due later", () => {
    const fake = makeFakePlatform()
    const t0 = Date.UTC(2031, 5, 15, 12, 0, 0)
    return Effect.gen(function*() {
      yield* TestClock.setTime(t0)
      const auth = yield* instance()
      fake.setExpiresIn(3600)
      const { principal } = yield* signIn(auth, fake)
      // 61 s before its expiry it is used as it is; from 60 s before, it is refreshed first.
      yield* TestClock.setTime(t0 + 3600_000 - 61_000)
      assert.strictEqual(Redacted.value(yield* auth.platformToken(principal)), fake.issued[0])
      assert.strictEqual(fake.calls.refreshToken, 0)
      yield* TestClock.setTime(t0 + 3600_000 + 5_000)
      assert.strictEqual(Redacted.value(yield* auth.platformToken(principal)), fake.issued[2])
      assert.strictEqual(fake.calls.refreshToken, 1)
    }).pipe(Effect.provide(shared(TokenStoreMemory, fake)))
  })
})
