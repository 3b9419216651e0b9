/**
 * The token cache's memory (layers/auth/TokenStoreCached.ts): its maps are bounded (expired entries
 * swept first, then emptied), so are the families it remembers as invalidated, and its digest memo
 * holds a raw token no longer than an entry keeps it: never past a revocation or an emptying, and
 * only for what was kept. The bound is the layer's own (50,000): the tests fill it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { makeDigestMemo } from "../../src/layers/auth/TokenStoreCached.ts"
import { sha256Hex } from "../../src/services/auth/TokenStore.ts"
import { cachedOver, countingHashes, makeFakeStore } from "./TokenStoreFixtures.ts"

const MAX_ENTRIES = 50_000

/** A memo over a counting SHA-256. */
const memoOf = (maxEntries: number) => {
  const hashed = new Map<string, number>()
  const memo = makeDigestMemo((t) => (hashed.set(t, (hashed.get(t) ?? 0) + 1), sha256Hex(t)), maxEntries)
  /** Looks `token` up at `now`: whether that hashed it. */
  const hashes = (token: string, now: number) => {
    const before = hashed.get(token) ?? 0
    assert.strictEqual(memo.digest(token, now), sha256Hex(token))
    return (hashed.get(token) ?? 0) > before
  }
  return { memo, hashes, remember: (t: string, until: number, now: number) => memo.remember(t, sha256Hex(t), until, now) }
}

describe("the digest memo", () => {
  it("an ended digest is dropped when it is next looked up", () => {
    const { hashes, memo, remember } = memoOf(10)
    remember("a", 100, 0)
    assert.isFalse(hashes("a", 99))
    assert.isTrue(hashes("a", 100))
    assert.strictEqual(memo.size, 0)
  })

  it("full: a new token sweeps the ended digests first, and empties it only if that is not enough", () => {
    const { hashes, memo, remember } = memoOf(2)
    remember("a", 100, 0)
    remember("b", 200, 0)
    remember("c", 300, 100) // "a" ends at 100: swept, "b" stays
    assert.strictEqual(memo.size, 2)
    assert.deepStrictEqual([hashes("b", 100), hashes("c", 100)], [false, false])
    remember("d", 400, 100) // nothing ended: emptied
    assert.strictEqual(memo.size, 1)
    assert.deepStrictEqual([hashes("b", 100), hashes("d", 100)], [true, false])
  })

  it("an ended digest is only swept when the memo is full (not once per new token)", () => {
    const { memo, remember } = memoOf(3)
    remember("a", 100, 0)
    remember("b", 300, 150)
    assert.strictEqual(memo.size, 2)
  })

  it("full: a token already remembered is extended without a sweep or an emptying", () => {
    const { hashes, memo, remember } = memoOf(2)
    remember("a", 100, 0)
    remember("b", 200, 0)
    remember("a", 500, 0)
    assert.strictEqual(memo.size, 2)
    assert.deepStrictEqual([hashes("a", 400), hashes("b", 0)], [false, false])
  })

  it("forget drops the tokens of the digests named, only those; clear drops all", () => {
    const { hashes, memo, remember } = memoOf(10)
    remember("a", 100, 0)
    remember("b", 100, 0)
    memo.forget(new Set([sha256Hex("a"), sha256Hex("unknown")]))
    assert.strictEqual(memo.size, 1)
    assert.deepStrictEqual([hashes("a", 0), hashes("b", 0)], [true, false])
    memo.clear()
    assert.strictEqual(memo.size, 0)
  })
})

describe("the digest memo in the cache", () => {
  it.effect("a kept token is hashed once; a token not kept, revoked or emptied is hashed again", () =>
    countingHashes((hashesOf) =>
      Effect.gen(function*() {
        const fake = makeFakeStore()
        const { cached, sink } = yield* cachedOver(fake, 5_000, true)
        const familyId = randomUUID()
        const resolved = fake.issue(familyId, 0)
        const checked = fake.issue(familyId, 0)
        // Not listening: nothing is kept, so no raw token is remembered either.
        yield* Effect.all([cached.resolveAccess(resolved), cached.resolveAccess(resolved), cached.checkAccess(checked), cached.checkAccess(checked)])
        assert.deepStrictEqual([hashesOf(resolved), hashesOf(checked)], [2, 2])
        sink().listening(true)
        yield* Effect.all([cached.resolveAccess(resolved), cached.resolveAccess(resolved), cached.checkAccess(checked), cached.checkAccess(checked)])
        assert.deepStrictEqual([hashesOf(resolved), hashesOf(checked)], [3, 3], "hits skip the SHA-256")
        // Revoked here: the raw tokens are forgotten with their entries.
        yield* cached.revokeFamily(familyId)
        yield* Effect.all([cached.resolveAccess(resolved), cached.checkAccess(checked)])
        assert.deepStrictEqual([hashesOf(resolved), hashesOf(checked)], [4, 4])
        // Emptied (a notification naming no families): forgotten too.
        const other = fake.issue(randomUUID(), 0)
        yield* Effect.all([cached.resolveAccess(other), cached.resolveAccess(other)])
        sink().all()
        yield* cached.resolveAccess(other)
        assert.strictEqual(hashesOf(other), 2)
      })
    ))

  it.effect("emptied, the cache reads checks and platform tokens again too", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached, sink } = yield* cachedOver(fake, 5_000, true)
      sink().listening(true)
      const familyId = randomUUID()
      const token = fake.issue(familyId, 0)
      fake.tables.platform.set(familyId, { accessEnc: "v1.k1.a.b", refreshEnc: "v1.k1.c.d", expiresAt: new Date(86_400_000) })
      for (let i = 0; i < 2; i++) yield* Effect.all([cached.checkAccess(token), cached.platformTokens(familyId)])
      assert.deepStrictEqual([fake.reads.check, fake.reads.platform], [1, 1])
      sink().all()
      yield* Effect.all([cached.checkAccess(token), cached.platformTokens(familyId)])
      assert.deepStrictEqual([fake.reads.check, fake.reads.platform], [2, 2])
    }))
})

describe("bounds", () => {
  it.effect("a full map sweeps its ended entries first, is emptied only when none ended, and keeps no unknown family", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const fill = (prefix: string, n: number) =>
        Effect.gen(function*() {
          for (let i = 0; i < n; i++) {
            const familyId = `${prefix}-${i}`
            fake.tables.platform.set(familyId, { accessEnc: familyId, refreshEnc: familyId, expiresAt: new Date(86_400_000) })
            yield* cached.platformTokens(familyId)
          }
        })
      /** Whether the platform tokens of `familyId` are still kept (read from the store if not). */
      const kept = (familyId: string) =>
        Effect.gen(function*() {
          const reads = fake.reads.platform
          assert.isDefined(yield* cached.platformTokens(familyId))
          return fake.reads.platform === reads
        })

      yield* fill("early", 10) // kept until 5,000
      yield* TestClock.adjust(1_000)
      yield* fill("late", MAX_ENTRIES - 11) // kept until 6,000: 49,999 entries
      // Families the store does not know (guessed ids) take no room.
      assert.isUndefined(yield* cached.platformTokens("unknown"))
      yield* fill("last", 1) // the 50,000th entry: nothing swept, nothing emptied
      assert.isTrue(yield* kept("late-0"))
      assert.isTrue(yield* kept("early-0"))

      // At 5,000 the early entries end: the next entry sweeps them and the rest stays.
      yield* TestClock.adjust(4_000)
      yield* fill("next", 1)
      assert.isTrue(yield* kept("late-0"))
      assert.isTrue(yield* kept("late-1"))

      // Full again with no entry ended: the next one empties it.
      yield* fill("more", 9)
      assert.isTrue(yield* kept("late-2"))
      yield* fill("over", 1)
      assert.isFalse(yield* kept("late-3"))
      assert.isTrue(yield* kept("over-0"))
    }))

  it.effect("past 50,000 families invalidated since the last emptying, the next invalidation empties the cache", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached, sink } = yield* cachedOver(fake, 5_000, true)
      sink().listening(true)
      const token = fake.issue(randomUUID(), 0)
      const kept = Effect.gen(function*() {
        const reads = fake.reads.resolve
        assert.isDefined(yield* cached.resolveAccess(token))
        return fake.reads.resolve === reads
      })
      yield* cached.resolveAccess(token)
      sink().families(Array.from({ length: MAX_ENTRIES }, () => randomUUID()))
      assert.isTrue(yield* kept, "exactly 50,000: other families stay")
      // A request naming no family (a refresh token or an access token the store does not know)
      // invalidates nothing, so it cannot empty the cache either.
      const pair = { access: { token: "bmg_at_next", issuedAt: new Date(0), expiresAt: new Date(1) }, refresh: { token: "bmg_rt_next", issuedAt: new Date(0), expiresAt: new Date(1) } }
      assert.strictEqual((yield* cached.rotateRefresh("bmg_rt_unknown", pair))._tag, "Invalid")
      assert.isUndefined(yield* cached.revokeByAccess("bmg_at_unknown"))
      assert.isTrue(yield* kept)
      sink().families([randomUUID()])
      assert.isFalse(yield* kept, "one more: emptied")
      // Emptying starts the count again.
      sink().families([randomUUID()])
      assert.isTrue(yield* kept)
    }))
})
