/**
 * S4's hot path (issue #16, `POST /auth/idp/token/check`): the rate limit's family lookup and the
 * check share one kept check (no second store read, no second SHA-256); a kept check hands out one
 * answer object per seconds-left value, and the handler keeps that answer's encoding. These tests
 * pin that the answers are exactly those of the uncached store (valid, expiring, expired), and that
 * a revocation or a rotation ends them at once, in the service and over HTTP on a live app.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { TokenCheck } from "../../src/domain/auth/Token.ts"
import { makeDigestMemo, TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import type { Families } from "../../src/services/auth/AuthFamily.ts"
import { AuthSettings } from "../../src/services/auth/AuthSettings.ts"
import { makeTokenLifecycle } from "../../src/services/auth/AuthTokens.ts"
import { sha256Hex, TokenStore } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { pairAt, signedInFamily } from "../auth/TokenFixtures.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, signIn, TestApp } from "../utils/TestApp.ts"


const settings = AuthSettings.of({
  publicUrl: "http://127.0.0.1:9",
  allowedRedirectUris: [],
  accessTokenTtlSeconds: 3,
  refreshTokenTtlSeconds: 86_400,
  temporaryTokenTtlSeconds: 60,
  signInStateTtlSeconds: 600
})
// check() never revokes anything: a family helper that would fail loudly if it did.
const families = {
  encryptPlatform: () => Effect.die("not used"),
  revokeAtPlatform: () => Effect.die("not used"),
  revokeFamily: () => Effect.die("not used")
} as unknown as Families

/** The memory store, counting the reads that reach it. */
const counting = (reads: { check: number; family: number }) =>
  Layer.effect(TokenStore, Effect.map(Effect.service(TokenStore), (inner) =>
    TokenStore.of({
      ...inner,
      checkAccess: (t) => Effect.suspend(() => (reads.check++, inner.checkAccess(t))),
      familyOf: (t) => Effect.suspend(() => (reads.family++, inner.familyOf(t)))
    }))).pipe(Layer.provide(TokenStoreMemory))

describe("the digest memo shared by resolved and checked tokens", () => {
  it("keeps a token's digest until the later of its entries ends, never shortens it", () => {
    let hashed = 0
    const memo = makeDigestMemo((t) => (hashed++, sha256Hex(t)), 10)
    const token = "bmg_at_shared"
    const digest = memo.digest(token, 0)
    memo.remember(token, digest, 5_000, 0) // its check, kept 5 s
    memo.remember(token, digest, 3_000, 0) // its resolution, kept 3 s (say, the token expires then)
    assert.strictEqual(memo.digest(token, 4_999), digest)
    assert.strictEqual(hashed, 1, "the later end holds")
    memo.remember(token, digest, 8_000, 4_999)
    assert.strictEqual(memo.digest(token, 7_999), digest)
    assert.strictEqual(hashed, 1, "a later entry extends it")
    assert.strictEqual(memo.digest(token, 8_000), digest)
    assert.strictEqual(hashed, 2, "then it is hashed again")
  })
})

describe("the check over the cached store", () => {
  it.effect("answers as the uncached store at every second (valid, expiring, expired), one read, one answer object per second", () => {
    const reads = { check: 0, family: 0 }
    return Effect.gen(function*() {
      const inner = yield* TokenStore
      // The cache over that same store (its layer keeps nothing that needs a scope).
      const cached = yield* Effect.provide(Effect.service(TokenStore), TokenStoreCached(5_000).pipe(Layer.provide(Layer.succeed(TokenStore, inner))))
      const uncachedChecks = yield* makeTokenLifecycle(families).pipe(Effect.provideService(TokenStore, inner))
      const cachedChecks = yield* makeTokenLifecycle(families).pipe(Effect.provideService(TokenStore, cached))

      const { familyId, access } = yield* signedInFamily({ accessTtlSeconds: 3 }).pipe(Effect.provideService(TokenStore, inner))
      const header = `Bearer ${access.token}`

      // The rate limit's key first (as the /auth middleware asks), then the check: one store read.
      assert.strictEqual(yield* cached.familyOf(access.token), familyId)
      const before = reads.check
      const first = yield* cachedChecks.check(header)
      assert.strictEqual(reads.check, before, "the check reuses the family lookup's read")
      assert.strictEqual(reads.family, 0, "an access token's family comes from its check")
      assert.deepStrictEqual(first, yield* uncachedChecks.check(header))
      assert.strictEqual(first.expires_in, 3)
      assert.isTrue(first.is_valid)
      const counted = reads.check
      assert.strictEqual(yield* cachedChecks.check(header), first, "same second, same answer object")

      const seen: Array<typeof first> = [first]
      for (const step of ["1 second", "1 second", "500 millis", "500 millis", "1 second"] as const) {
        yield* TestClock.adjust(step)
        const answer = yield* cachedChecks.check(header)
        assert.deepStrictEqual(answer, yield* uncachedChecks.check(header), `after ${step}`)
        assert.strictEqual(yield* cachedChecks.check(header), answer)
        seen.push(answer)
      }
      assert.deepStrictEqual(seen.map((a) => [a.expires_in, a.is_valid]), [[3, true], [2, true], [1, true], [0, true], [0, false], [0, false]])
      assert.strictEqual(seen.at(-1)!.message, "The access token has expired; refresh it.")
      assert.strictEqual(reads.check - counted, 5, "only the uncached store's checks read (the kept check is 4 s old)")
      // An expired token keys no rate limit by family.
      assert.isUndefined(yield* cached.familyOf(access.token))
    }).pipe(Effect.provide(counting(reads)), Effect.provideService(AuthSettings, settings))
  })

  it.effect("a revocation or a rotation ends the kept answer at once", () =>
    Effect.gen(function*() {
      const store = yield* TokenStore
      const checks = yield* makeTokenLifecycle(families)
      const { familyId, at, ...first } = yield* signedInFamily()
      const pair = () => pairAt(at)
      assert.isTrue((yield* checks.check(first.access.token)).is_valid)
      assert.strictEqual(yield* store.familyOf(first.access.token), familyId)

      // Rotation revokes the previous access token: refused by the check and by the family lookup.
      const second = pair()
      assert.strictEqual((yield* store.rotateRefresh(first.refresh.token, second))._tag, "Rotated")
      const refused = yield* Effect.exit(checks.check(first.access.token))
      assert.isTrue(Exit.isFailure(refused))
      assert.include(JSON.stringify(refused), "The access token is unknown or revoked.")
      assert.isUndefined(yield* store.familyOf(first.access.token))

      // Revocation by the access token itself.
      assert.isTrue((yield* checks.check(second.access.token)).is_valid)
      assert.isDefined(yield* store.revokeByAccess(second.access.token))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(checks.check(second.access.token))))
      assert.isUndefined(yield* store.familyOf(second.access.token))
    }).pipe(
      Effect.provide(TokenStoreCached(5_000).pipe(Layer.provide(TokenStoreMemory))),
      Effect.provideService(AuthSettings, { ...settings, accessTokenTtlSeconds: 3600 })
    ))
})

/** The check's answer as the contract spells it: TokenCheck's fields in its order, JSON without spaces. */
const expected = (body: Record<string, unknown>) =>
  JSON.stringify(Schema.encodeSync(TokenCheck)({
    token_type: "Bearer",
    expires_in: body["expires_in"] as number,
    scope: "all",
    is_valid: true,
    issued_at: body["issued_at"] as string,
    expiration_date: body["expiration_date"] as string,
    message: "The access token is valid."
  }))

/** A check, with the time left on `expiresAt` just before it was sent and just after it was answered. */
const check = (token: string) =>
  Effect.gen(function*() {
    const sent = Date.now()
    const res = yield* raw({ token, method: "POST" }, "/auth/idp/token/check")
    const body = yield* Effect.promise(() => res.text())
    return { status: res.status, headers: res.headers, body, sent, answered: Date.now() }
  })
// A live app: the SQL token store behind the 5 s cache, as production runs it (PostgreSQL when
// TEST_DATABASE_URL is set, else PGlite); an API process: no job workers to start.
layer(TestApp.layer({ capabilities: { db: dbKinds.at(-1)! }, config: { role: "api" } }), { excludeTestServices: true, timeout: 120_000 })("token check over HTTP", (it) => {
  it.effect("repeated checks answer the schema's exact bytes and headers; refresh and revoke end them at once", () =>
    Effect.gen(function*() {
      const tokens = yield* signIn(ALICE_ID)
      const answers = []
      for (let i = 0; i < 4; i++) answers.push(yield* check(tokens.access_token))
      for (const a of answers) {
        assert.strictEqual(a.status, 200, a.body)
        assert.strictEqual(a.headers.get("content-type"), "application/json")
        assert.strictEqual(a.headers.get("cache-control"), "no-store")
        assert.strictEqual(a.headers.get("pragma"), "no-cache")
        assert.match(a.headers.get("ratelimit") ?? "", /^"auth";r=\d+;t=\d+$/)
        const body = JSON.parse(a.body) as Record<string, unknown>
        assert.strictEqual(a.body, expected(body))
        assert.strictEqual(a.headers.get("content-length"), String(Buffer.byteLength(a.body)))
        assert.strictEqual(body["issued_at"], JSON.parse(answers[0]!.body)["issued_at"])
        // The time left follows the clock (whole seconds, at the moment the server answered).
        const expiry = Date.parse(body["expiration_date"] as string)
        assert.isAtMost(body["expires_in"] as number, (expiry - a.sent) / 1000)
        assert.isAtLeast(body["expires_in"] as number, Math.floor((expiry - a.answered) / 1000))
      }

      // A refresh rotates the pair: the old access token's kept answer ends, the new one answers.
      const refreshed = yield* raw({ method: "POST", headers: { "x-refresh-token": tokens.refresh_token } }, "/auth/idp/token/refresh")
      const pair = (yield* json(refreshed)) as { access_token: string }
      assert.strictEqual(refreshed.status, 200)
      const old = yield* check(tokens.access_token)
      assert.strictEqual(old.status, 401, old.body)
      assert.include(old.body, "The access token is unknown or revoked.")
      assert.strictEqual(old.headers.get("cache-control"), "no-store")
      const fresh = yield* check(pair.access_token)
      assert.strictEqual(fresh.status, 200, fresh.body)
      assert.strictEqual(fresh.body, expected(JSON.parse(fresh.body)))

      // Revoking ends it at once too.
      const revoked = yield* raw({ token: pair.access_token, method: "POST" }, "/auth/idp/token/revoke")
      assert.deepStrictEqual(yield* json(revoked), { success: true })
      const after = yield* check(pair.access_token)
      assert.strictEqual(after.status, 401, after.body)
      assert.match(after.headers.get("www-authenticate") ?? "", /^Bearer/)
    }))

})
