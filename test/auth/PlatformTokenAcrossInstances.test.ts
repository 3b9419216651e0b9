/**
 * The platform token of a sign-in (AuthPlatformToken.ts) when several gateway instances share one
 * store: two instances racing to refresh it make one refresh at the platform and both end with the
 * new token; a decrypted token one instance cached is dropped when the stored copy changes; and the
 * behaviours the mutation run of issue #19 found unpinned, where "another instance" is played by
 * writing to the shared store directly (a claim, a replacement, a revocation). One instance at a
 * time: PlatformTokenLifecycle.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Redacted } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import type { Principal } from "../../src/domain/auth/Principal.ts"
import { Auth } from "../../src/services/auth/Auth.ts"
import { AuthLive } from "../../src/services/auth/AuthLive.ts"
import { familyAad } from "../../src/services/auth/AuthFamily.ts"
import type { AuthSettings } from "../../src/services/auth/AuthSettings.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import type { Keyring } from "../../src/services/infra/Cipher.ts"
import { now, TokenStore } from "../../src/services/auth/TokenStore.ts"
import { SettingsLive } from "../../src/layers/config/Settings.ts"
import { TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import { TokenStoreSql } from "../../src/layers/auth/TokenStoreSql.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { testDb } from "../utils/Db.ts"
import type { FakePlatform } from "./AuthFixtures.ts"
import { authLayer, makeFakePlatform, testConfig, testKeyring } from "./AuthFixtures.ts"

const CLIENT = "https://client.example/callback"
const REVOKED = "The sign-in was revoked; sign in again."

const signIn = Effect.gen(function*() {
  const auth = yield* Auth
  const store = yield* TokenStore
  const login = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
  return { auth, store, login }
})

type Store = TokenStore["Service"]

/**
 * Signs alice in on an instance over a memory store (with `cached`, behind a token cache of an hour,
 * as deployed but longer); `shared` is the store itself, as another instance writes to it.
 */
const run = <A, E>(
  body: (fake: FakePlatform, principal: Principal, shared: Store) => Effect.Effect<A, E, Auth | TokenStore | Cipher | ChatPlatform | AuthSettings | Scope.Scope>,
  cached = false
) => {
  const fake = makeFakePlatform()
  // A platform token of 2 minutes: due (under a minute left) after 61 s.
  fake.setExpiresIn(120)
  return Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse("2031-03-04T05:06:07.000Z"))
    const inner = yield* Layer.build(TokenStoreMemory)
    const shared = Context.get(inner, TokenStore)
    const store = cached ? TokenStoreCached(3_600_000).pipe(Layer.provide(Layer.succeedContext(inner))) : Layer.succeedContext(inner)
    return yield* Effect.gen(function*() {
      const { auth, login, store } = yield* signIn
      const back = fake.approve(login.location)
      const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
      const tokens = yield* auth.exchange({ authorization: new URL(location).searchParams.get("code")!, codeVerifier: undefined })
      const principal = (yield* store.resolveAccess(tokens.access_token))!
      return yield* body(fake, principal, shared)
    }).pipe(Effect.provide(authLayer(store, fake)))
  })
}

const problemOf = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(self), (e) => {
    const error = e as unknown as { readonly _tag: string; readonly problems: ReadonlyArray<{ readonly message: string; readonly additionalProperties?: Record<string, unknown> }> }
    return { tag: error._tag, message: error.problems[0]?.message, retryAfter: error.problems[0]?.additionalProperties?.["retry_after"] }
  })

/** What another instance stores when it has refreshed: tokens the fake platform never issued. */
const otherInstanceTokens = (familyId: string, access: string) =>
  Effect.gen(function*() {
    const cipher = yield* Cipher
    return {
      accessEnc: yield* cipher.encrypt(Redacted.make(access), familyAad(familyId, "platform_access")),
      refreshEnc: yield* cipher.encrypt(Redacted.make(`${access}_refresh`), familyAad(familyId, "platform_refresh")),
      expiresAt: new Date((yield* now).getTime() + 3_600_000)
    }
  })

/** Becomes true when the forked call ends (either way). */
const forkWatched = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const state = { done: false }
    const fiber = yield* Effect.forkChild(Effect.exit(self).pipe(Effect.tap(() => Effect.sync(() => (state.done = true)))))
    return { state, fiber }
  })

describe("AuthPlatformToken: what mutation testing found unpinned", () => {
  it.effect("a revoked sign-in: both the token and its renewal answer 401 'sign in again'", () =>
    run((_, principal) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const token = yield* auth.platformToken(principal)
        yield* (yield* TokenStore).revokeFamily(principal.familyId)
        assert.deepStrictEqual(yield* problemOf(auth.platformToken(principal)), { tag: "Unauthorized", message: REVOKED, retryAfter: undefined })
        assert.deepStrictEqual(yield* problemOf(auth.renewPlatformToken(principal, token)), { tag: "Unauthorized", message: REVOKED, retryAfter: undefined })
      })))

  it.effect("a token is refreshed with exactly a minute left, not before; and again each time it is due", () =>
    run((fake, principal) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const first = Redacted.value(yield* auth.platformToken(principal))
        yield* TestClock.adjust("59 seconds")
        assert.strictEqual(Redacted.value(yield* auth.platformToken(principal)), first)
        assert.strictEqual(fake.calls.refreshToken, 0)
        yield* TestClock.adjust("1 second")
        const second = Redacted.value(yield* auth.platformToken(principal))
        assert.notStrictEqual(second, first)
        assert.strictEqual(fake.calls.refreshToken, 1)
        // The new token (2 minutes) is due in its turn: refreshed again, not the first refresh's answer.
        yield* TestClock.adjust("61 seconds")
        const third = Redacted.value(yield* auth.platformToken(principal))
        assert.notStrictEqual(third, second)
        assert.strictEqual(fake.calls.refreshToken, 2)
      })))

  it.effect("a stored refresh token no configured key opens: 401 'sign in again', not a 500", () =>
    run((fake, principal) =>
      Effect.gen(function*() {
        // Another instance whose only key is not the one that sealed this sign-in's tokens.
        const other = yield* Layer.build(Layer.fresh(AuthLive.pipe(Layer.provide(Cipher.layer(parseKeyring(generateKey())))))).pipe(
          Effect.map((context) => Context.get(context, Auth))
        )
        yield* TestClock.adjust("61 seconds")
        const problem = yield* problemOf(other.platformToken(principal))
        assert.strictEqual(problem.tag, "Unauthorized")
        assert.strictEqual(problem.message, "The stored chat-platform credentials cannot be read; sign in again.")
        assert.strictEqual(fake.calls.refreshToken, 0)
      })))

  for (const [label, cached] of [["memory store", false], ["behind a token cache", true]] as const) {
    it.effect(`${label}: the platform refuses a refresh that another instance has already done: its token is used, the sign-in goes on`, () =>
      run((fake, principal, shared) =>
        Effect.gen(function*() {
          const auth = yield* Auth
          const store = shared
          yield* TestClock.adjust("61 seconds")
          const stored = (yield* store.platformTokens(principal.familyId))!
          const theirs = yield* otherInstanceTokens(principal.familyId, "plat_at_other_instance")
          fake.setRefreshDelay(Effect.orDie(Effect.asVoid(store.replacePlatformTokens(principal.familyId, stored.accessEnc, theirs))))
          fake.refuseRefresh()
          assert.strictEqual(Redacted.value(yield* auth.platformToken(principal)), "plat_at_other_instance")
          fake.setRefreshDelay(Effect.void)
          assert.strictEqual(Redacted.value(yield* auth.platformToken(principal)), "plat_at_other_instance")
        }), cached))
  }

  for (const [label, cached] of [["memory store", false], ["behind a token cache", true]] as const) {
    it.effect(`${label}: a refresh whose result arrives after another instance's: the stored one is used`, () =>
      run((fake, principal, shared) =>
        Effect.gen(function*() {
          const auth = yield* Auth
          const store = shared
          yield* TestClock.adjust("61 seconds")
          const stored = (yield* store.platformTokens(principal.familyId))!
          const theirs = yield* otherInstanceTokens(principal.familyId, "plat_at_won_the_race")
          fake.setRefreshDelay(Effect.orDie(Effect.asVoid(store.replacePlatformTokens(principal.familyId, stored.accessEnc, theirs))))
          assert.strictEqual(Redacted.value(yield* auth.platformToken(principal)), "plat_at_won_the_race")
          assert.strictEqual(fake.calls.refreshToken, 1)
        }), cached))
  }

  it.effect("a sign-in revoked while its platform token is being refreshed: 401 'sign in again'", () =>
    run((fake, principal) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        yield* TestClock.adjust("61 seconds")
        fake.setRefreshDelay(Effect.orDie(Effect.asVoid(store.revokeFamily(principal.familyId))))
        assert.deepStrictEqual(yield* problemOf(auth.platformToken(principal)), { tag: "Unauthorized", message: REVOKED, retryAfter: undefined })
        assert.strictEqual(fake.calls.refreshToken, 1)
      })))

  it.effect("concurrent requests of one instance share its refresh: the second has the new token the moment it is stored", () =>
    run((fake, principal) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        yield* TestClock.adjust("61 seconds")
        // The platform takes 1.05 s to refresh (an instance waiting on the claim would look every 100 ms).
        fake.setRefreshDelay(Effect.sleep("1050 millis"))
        const first = yield* forkWatched(auth.platformToken(principal))
        yield* Effect.yieldNow
        const second = yield* forkWatched(auth.platformToken(principal))
        yield* TestClock.adjust("1050 millis")
        for (let i = 0; i < 5; i++) yield* Effect.yieldNow
        assert.isTrue(first.state.done)
        assert.isTrue(second.state.done)
        const [a, b] = [yield* Fiber.join(first.fiber), yield* Fiber.join(second.fiber)]
        assert.strictEqual(a._tag === "Success" ? Redacted.value(a.value) : a._tag, b._tag === "Success" ? Redacted.value(b.value) : b._tag)
        assert.strictEqual(a._tag, "Success")
        assert.strictEqual(fake.calls.refreshToken, 1)
      })))

  it.effect("the platform refuses the refresh of a sign-in revoked meanwhile: 401 'sign in again', not a 500", () =>
    run((fake, principal, shared) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        yield* TestClock.adjust("61 seconds")
        fake.setRefreshDelay(Effect.orDie(Effect.asVoid(shared.revokeFamily(principal.familyId))))
        fake.refuseRefresh()
        const problem = yield* problemOf(auth.platformToken(principal))
        assert.strictEqual(problem.tag, "Unauthorized")
        assert.strictEqual(problem.message, "The chat platform ended this sign-in; sign in again.")
      })))

  it.effect("a refresh that fails (a fault) releases its claim: the next request refreshes at once", () =>
    run((fake, principal) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        yield* TestClock.adjust("61 seconds")
        fake.setRefreshDelay(Effect.die("connection reset"))
        assert.isTrue((yield* Effect.exit(auth.platformToken(principal)))._tag === "Failure")
        fake.setRefreshDelay(Effect.void)
        const next = yield* forkWatched(auth.platformToken(principal))
        // Well within the 15 s claim: the claim of the failed refresh is gone.
        yield* TestClock.adjust("1 second")
        assert.isTrue(next.state.done)
        const exit = yield* Fiber.join(next.fiber)
        assert.strictEqual(exit._tag, "Success")
        assert.strictEqual(fake.calls.refreshToken, 1)
      })))

  it.effect("another instance's refresh is waited for 20 s, then 503 with Retry-After 5", () =>
    run((fake, principal) =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const store = yield* TokenStore
        yield* TestClock.adjust("61 seconds")
        const stored = (yield* store.platformTokens(principal.familyId))!
        // Another instance claims the refresh for an hour (and never finishes).
        assert.isTrue(yield* store.claimPlatformRefresh(principal.familyId, stored.accessEnc, new Date((yield* now).getTime() + 3_600_000)))
        const waiting = yield* forkWatched(auth.platformToken(principal))
        yield* TestClock.adjust("20 seconds")
        assert.isFalse(waiting.state.done)
        yield* TestClock.adjust("100 millis")
        assert.isTrue(waiting.state.done)
        const exit = yield* Fiber.join(waiting.fiber)
        assert.strictEqual(exit._tag, "Failure")
        const problem = yield* problemOf(exit)
        assert.deepStrictEqual(problem, {
          tag: "ServiceUnavailable",
          message: "The chat platform's token is being refreshed by another instance; retry.",
          retryAfter: 5
        })
        assert.strictEqual(fake.calls.refreshToken, 0)
      })))

  for (const [label, cached] of [["memory store", false], ["behind a token cache", true]] as const) {
    it.effect(`${label}: while waiting for another instance: its new token is taken as soon as stored; a revocation ends the wait with 401`, () =>
      run((fake, principal, shared) =>
        Effect.gen(function*() {
          const auth = yield* Auth
          const store = shared
          const rejected = yield* auth.platformToken(principal)
          const stored = (yield* store.platformTokens(principal.familyId))!
          assert.isTrue(yield* store.claimPlatformRefresh(principal.familyId, stored.accessEnc, new Date((yield* now).getTime() + 3_600_000)))
          // The platform refused `rejected` (401): renewal waits for the other instance's refresh.
          const renewing = yield* forkWatched(auth.renewPlatformToken(principal, rejected))
          yield* TestClock.adjust("1 second")
          assert.isFalse(renewing.state.done)
          const theirs = yield* otherInstanceTokens(principal.familyId, "plat_at_renewed_elsewhere")
          assert.isTrue(yield* store.replacePlatformTokens(principal.familyId, stored.accessEnc, theirs))
          yield* TestClock.adjust("100 millis")
          const exit = yield* Fiber.join(renewing.fiber)
          assert.strictEqual(exit._tag === "Success" ? Redacted.value(exit.value) : exit._tag, "plat_at_renewed_elsewhere")
          assert.strictEqual(fake.calls.refreshToken, 0)
          // Due again, another instance claims; the sign-in is revoked meanwhile.
          yield* TestClock.adjust("3541 seconds")
          assert.isTrue(yield* store.claimPlatformRefresh(principal.familyId, theirs.accessEnc, new Date((yield* now).getTime() + 3_600_000)))
          const waiting = yield* forkWatched(auth.platformToken(principal))
          yield* TestClock.adjust("1 second")
          assert.isFalse(waiting.state.done)
          yield* store.revokeFamily(principal.familyId)
          yield* TestClock.adjust("100 millis")
          const ended = yield* Fiber.join(waiting.fiber)
          assert.deepStrictEqual(yield* problemOf(ended), { tag: "Unauthorized", message: REVOKED, retryAfter: undefined })
        }), cached))
  }
})

// --- two real instances (two Auth services over one store) -----------------------------------------

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
const signInOn = (auth: Auth["Service"], fake: FakePlatform) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const login = yield* auth.login({ redirectUri: CLIENT, state: undefined, codeChallenge: undefined, codeChallengeMethod: undefined })
    const back = fake.approve(login.location)
    const { location } = yield* auth.callback({ code: back.code, state: back.state, error: undefined, cookie: login.cookie.value })
    const tokens = yield* auth.exchange({ authorization: new URL(location).searchParams.get("code")!, codeVerifier: undefined })
    return { tokens, principal: (yield* store.resolveAccess(tokens.access_token))! }
  })

/** 10 requests on each of two instances at once, for a platform token that is due. */
const race = (fake: FakePlatform, cacheMs?: number) =>
  Effect.gen(function*() {
    const a = yield* instance(cacheMs === undefined ? {} : { cacheMs })
    const b = yield* instance(cacheMs === undefined ? {} : { cacheMs })
    fake.setExpiresIn(30) // inside the 60 s skew: due at once
    const { principal } = yield* signInOn(a, fake)
    fake.setExpiresIn(604800)
    fake.setRefreshDelay(Effect.sleep("300 millis"))
    const tokens = yield* Effect.all(
      [...Array.from({ length: 10 }, () => a.platformToken(principal)), ...Array.from({ length: 10 }, () => b.platformToken(principal))],
      { concurrency: "unbounded" }
    )
    fake.setRefreshDelay(Effect.void)
    assert.strictEqual(fake.calls.refreshToken, 1, "one refresh at the platform")
    assert.deepStrictEqual(new Set(tokens.map(Redacted.value)), new Set([fake.issued[2]]), "every request of both instances has the new token")
    assert.isTrue(fake.live.has(fake.issued[2]!))
    // Afterwards both use the stored token: no further refresh.
    assert.strictEqual(Redacted.value(yield* b.platformToken(principal)), fake.issued[2])
    assert.strictEqual(Redacted.value(yield* a.platformToken(principal)), fake.issued[2])
    assert.strictEqual(fake.calls.refreshToken, 1)
    // Neither the old nor the new platform token in a line either instance logged.
    const logs = JSON.stringify(yield* CapturedLogs.use((c) => c.lines))
    for (const token of fake.issued) assert.notInclude(logs, token)
  })

describe("two instances racing to refresh one platform token", () => {
  const memoryFake = makeFakePlatform()
  layer(shared(TokenStoreMemory, memoryFake), { excludeTestServices: true, timeout: 30_000 })("memory store", (it) => {
    it.effect("one refresh upstream; both end with the working token", () => race(memoryFake))
  })

  const sqlFake = makeFakePlatform()
  layer(shared(TokenStoreSql.pipe(Layer.provideMerge(testDb("pglite"))), sqlFake), { excludeTestServices: true, timeout: 60_000 })(
    "SQL store, each instance with its own 5 s token cache (as deployed)",
    (it) => {
      it.effect("one refresh upstream; both end with the working token", () => race(sqlFake, 5_000))
    }
  )
})

describe("a decrypted token cached by one instance", () => {
  it.effect("is dropped when the stored copy changes (at once uncached; within the cache's TTL with it)", () => {
    const fake = makeFakePlatform()
    return Effect.gen(function*() {
      const a = yield* instance()
      const b = yield* instance()
      const c = yield* instance({ cacheMs: 5_000 })
      const { principal } = yield* signInOn(a, fake)
      const first = yield* b.platformToken(principal)
      assert.strictEqual(Redacted.value(yield* c.platformToken(principal)), Redacted.value(first))
      // The platform refused it on instance A (a 401): A renews it; the stored copy changes.
      const renewed = yield* a.renewPlatformToken(principal, first)
      assert.notStrictEqual(Redacted.value(renewed), Redacted.value(first))
      assert.strictEqual(Redacted.value(yield* b.platformToken(principal)), Redacted.value(renewed), "B drops its decrypted copy")
      yield* TestClock.adjust("5001 millis")
      assert.strictEqual(Redacted.value(yield* c.platformToken(principal)), Redacted.value(renewed), "C after its cache's TTL")
      // A second 401 on the old token elsewhere: the stored (new) one is used, no second refresh.
      assert.strictEqual(Redacted.value(yield* b.renewPlatformToken(principal, first)), Redacted.value(renewed))
      assert.strictEqual(fake.calls.refreshToken, 1)
    }).pipe(Effect.provide(shared(TokenStoreMemory, fake)))
  })
})
