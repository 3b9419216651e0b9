/** The per-instance token cache: hits skip the store, expire with their TTL, and revocations here apply at once. */
import { assert, it } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { TokenStoreCached } from "../../src/layers/cache/TokenStoreCached.ts"
import { newToken, TokenStore } from "../../src/services/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"

const user = { id: "100000000000000001", username: "alice", discriminator: "0", globalName: null, avatar: null, locale: "en-US" }
const platform = { accessEnc: "v1.k1.aaa.bbb", refreshEnc: "v1.k1.ccc.ddd", expiresAt: new Date(Date.now() + 3600_000) }

/** The memory store with a count of the reads that reach it. */
const counting = (reads: { n: number }) =>
  Layer.effect(TokenStore, Effect.map(Effect.service(TokenStore), (inner) =>
    TokenStore.of({
      ...inner,
      resolveAccess: (t) => Effect.suspend(() => (reads.n++, inner.resolveAccess(t))),
      checkAccess: (t) => Effect.suspend(() => (reads.n++, inner.checkAccess(t))),
      platformTokens: (f) => Effect.suspend(() => (reads.n++, inner.platformTokens(f)))
    }))).pipe(Layer.provide(TokenStoreMemory))

it.effect("hits skip the store until the TTL; revoke and rotate through it apply at once", () => {
  const reads = { n: 0 }
  return Effect.gen(function*() {
    const store = yield* TokenStore
    const at = new Date(yield* Clock.currentTimeMillis)
    const pair = () => ({
      access: { token: newToken("access"), issuedAt: at, expiresAt: new Date(at.getTime() + 3600_000) },
      refresh: { token: newToken("refresh"), issuedAt: at, expiresAt: new Date(at.getTime() + 86400_000) }
    })
    const familyId = randomUUID()
    const temporary = { token: newToken("temporary"), issuedAt: at, expiresAt: new Date(at.getTime() + 60_000) }
    yield* store.createFamily({ familyId, user, platform, temporary, codeChallenge: undefined })
    const first = pair()
    yield* store.issuePair(familyId, first)

    for (let i = 0; i < 3; i++) {
      assert.strictEqual((yield* store.resolveAccess(first.access.token))?.familyId, familyId)
      assert.strictEqual((yield* store.checkAccess(first.access.token))?.expired, false)
      assert.deepStrictEqual(yield* store.platformTokens(familyId), platform)
    }
    assert.strictEqual(reads.n, 3, "one read each, then hits")
    yield* TestClock.adjust("6 seconds")
    yield* store.resolveAccess(first.access.token)
    assert.strictEqual(reads.n, 4, "expired entries are read again")

    // Rotation revokes the previous access token: no stale hit.
    const second = pair()
    assert.strictEqual((yield* store.rotateRefresh(first.refresh.token, second))._tag, "Rotated")
    assert.isUndefined(yield* store.resolveAccess(first.access.token))
    assert.isUndefined(yield* store.checkAccess(first.access.token))
    // Platform tokens replaced: the next read sees the new ones.
    const next = { ...platform, accessEnc: "v1.k1.new.a" }
    assert.isTrue(yield* store.replacePlatformTokens(familyId, platform.accessEnc, next))
    assert.deepStrictEqual(yield* store.platformTokens(familyId), next)
    // Revocation by access token ends the cached principal at once.
    assert.isDefined(yield* store.resolveAccess(second.access.token))
    assert.isDefined(yield* store.revokeByAccess(second.access.token))
    assert.isUndefined(yield* store.resolveAccess(second.access.token))
    assert.isUndefined(yield* store.platformTokens(familyId))
  }).pipe(Effect.provide(TokenStoreCached(5_000).pipe(Layer.provide(counting(reads)))))
})
