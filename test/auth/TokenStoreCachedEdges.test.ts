/**
 * The token cache (layers/auth/TokenStoreCached.ts) on the edges its other tests leave open: what
 * it counts in `cache_lookups_total`, its answers at the exact millisecond a token or an entry ends,
 * `fresh` platform-token reads, and that a revocation or a replacement through this instance ends
 * what it keeps even when the store answers nothing or a lookup is in flight across the call.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Latch, Metric } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { lookupMetrics } from "../../src/services/infra/Metrics.ts"
import type { PlatformTokensEnc } from "../../src/services/auth/TokenStore.ts"
import { cachedOver, makeFakeStore, until } from "./TokenStoreFixtures.ts"

const tokensOf = (tag: string): PlatformTokensEnc => ({ accessEnc: `v1.k1.${tag}.a`, refreshEnc: `v1.k1.${tag}.r`, expiresAt: new Date(86_400_000) })

/** The six `tokens.*` series of cache_lookups_total, read now. */
const lookups = Effect.gen(function*() {
  const out: Record<string, number> = {}
  for (const cache of ["tokens.access", "tokens.check", "tokens.platform"]) {
    const { hit, miss } = lookupMetrics(cache)
    out[`${cache} hit`] = Number((yield* Metric.value(hit)).count)
    out[`${cache} miss`] = Number((yield* Metric.value(miss)).count)
  }
  return out
})
/** What `effect` added to each series (only the series it changed). */
const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = yield* lookups
    yield* effect
    const after = yield* lookups
    return Object.fromEntries(Object.entries(after).filter(([k, v]) => v !== before[k]).map(([k, v]) => [k, v - before[k]!]))
  })

describe("cache_lookups_total, by cache tokens.access, tokens.check and tokens.platform", () => {
  it.effect("a miss and a hit of each; a family lookup of an access token is a check; a fresh read is no lookup", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      const token = fake.issue(familyId, 0)
      fake.tables.platform.set(familyId, tokensOf("one"))

      assert.deepStrictEqual(yield* counted(cached.resolveAccess(token)), { "tokens.access miss": 1 })
      assert.deepStrictEqual(yield* counted(cached.resolveAccess(token)), { "tokens.access hit": 1 })
      assert.deepStrictEqual(yield* counted(cached.checkAccess(token)), { "tokens.check miss": 1 })
      assert.deepStrictEqual(yield* counted(cached.checkAccess(token)), { "tokens.check hit": 1 })
      // The rate limit's key of an access token not seen yet: the check is read (and kept for the handler).
      const other = fake.issue(familyId, 0)
      assert.deepStrictEqual(yield* counted(cached.familyOf(other)), { "tokens.check miss": 1 })
      assert.deepStrictEqual(yield* counted(cached.checkAccess(other)), { "tokens.check hit": 1 })
      assert.deepStrictEqual(yield* counted(cached.platformTokens(familyId)), { "tokens.platform miss": 1 })
      assert.deepStrictEqual(yield* counted(cached.platformTokens(familyId)), { "tokens.platform hit": 1 })
      assert.deepStrictEqual(yield* counted(cached.platformTokens(familyId, { fresh: true })), {})
      assert.deepStrictEqual(yield* counted(cached.platformTokens(familyId, { fresh: false })), { "tokens.platform hit": 1 })
    }))

  it.effect("a fresh read goes past the kept tokens to the store, and its answer is kept", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      fake.issue(familyId, 0)
      fake.tables.platform.set(familyId, tokensOf("old"))
      assert.deepStrictEqual(yield* cached.platformTokens(familyId), tokensOf("old"))
      // Another instance refreshed them: the kept ones answer a plain read, a fresh read sees the new ones.
      fake.tables.platform.set(familyId, tokensOf("new"))
      assert.deepStrictEqual(yield* cached.platformTokens(familyId), tokensOf("old"))
      assert.strictEqual(fake.reads.platform, 1)
      assert.deepStrictEqual(yield* cached.platformTokens(familyId, { fresh: true }), tokensOf("new"))
      assert.strictEqual(fake.reads.fresh, 1)
      assert.deepStrictEqual(yield* cached.platformTokens(familyId), tokensOf("new"))
      assert.strictEqual(fake.reads.platform, 2, "the fresh answer is kept")
    }))
})

describe("the exact millisecond an entry or a token ends", () => {
  it.effect("a resolved token is kept for the TTL: a hit until its last millisecond, read again at its end", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const token = fake.issue(randomUUID(), 0)
      yield* cached.resolveAccess(token)
      yield* TestClock.adjust(4_999)
      assert.isDefined(yield* cached.resolveAccess(token))
      assert.strictEqual(fake.reads.resolve, 1)
      yield* TestClock.adjust(1)
      assert.isDefined(yield* cached.resolveAccess(token))
      assert.strictEqual(fake.reads.resolve, 2, "the entry ends at now + TTL")
    }))

  it.effect("the family of a kept check: known while the token lives, none from the millisecond it expires", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      const token = fake.issue(familyId, 0, 3_000)
      assert.isFalse((yield* cached.checkAccess(token))!.expired)
      yield* TestClock.adjust(2_999)
      assert.strictEqual(yield* cached.familyOf(token), familyId)
      yield* TestClock.adjust(1)
      assert.isUndefined(yield* cached.familyOf(token), "expired: it keys no rate limit by family")
      assert.isTrue((yield* cached.checkAccess(token))!.expired)
      assert.deepStrictEqual([fake.reads.check, fake.reads.family], [1, 0], "all from the kept check")
    }))

  it.effect("the family of an access token not seen yet, at the millisecond it expires: none, and its check is kept", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      const token = fake.issue(familyId, 0, 3_000)
      const live = fake.issue(familyId, 0, 3_001)
      yield* TestClock.adjust(3_000)
      assert.isUndefined(yield* cached.familyOf(token))
      assert.strictEqual(yield* cached.familyOf(live), familyId, "one millisecond left")
      assert.isTrue((yield* cached.checkAccess(token))!.expired)
      assert.isFalse((yield* cached.checkAccess(live))!.expired)
      assert.deepStrictEqual([fake.reads.check, fake.reads.family], [2, 0])
    }))

  it.effect("the family of a token resolved or checked moments ago is answered without a read", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      const resolved = fake.issue(familyId, 0)
      const checked = fake.issue(familyId, 0)
      yield* cached.resolveAccess(resolved)
      yield* cached.checkAccess(checked)
      assert.strictEqual(yield* cached.familyOf(resolved), familyId)
      assert.strictEqual(yield* cached.familyOf(checked), familyId)
      assert.deepStrictEqual([fake.reads.resolve, fake.reads.check, fake.reads.family], [1, 1, 0])
    }))
})

describe("revocations through this instance", () => {
  it.effect("revoking by an access token the store no longer knows still ends what the cache kept of its family", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      // One token only resolved, one only checked; each family revoked on the store behind the cache's back.
      for (const kept of ["resolved", "checked"] as const) {
        const familyId = randomUUID()
        const token = fake.issue(familyId, 0)
        const sibling = fake.issue(familyId, 0)
        yield* kept === "resolved" ? cached.resolveAccess(token) : cached.checkAccess(token)
        yield* cached.resolveAccess(sibling)
        fake.tables.revoked.add(familyId)
        assert.isUndefined(yield* cached.revokeByAccess(token), "already revoked")
        assert.isUndefined(yield* cached.resolveAccess(token), kept)
        assert.isUndefined(yield* cached.checkAccess(token), kept)
        assert.isUndefined(yield* cached.resolveAccess(sibling), `${kept}: its family's other token`)
      }
    }))

  it.effect("revoking by a token never looked up here ends its family's kept tokens; other families keep theirs", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      const otherFamily = randomUUID()
      const kept = fake.issue(familyId, 0)
      const other = fake.issue(otherFamily, 0)
      fake.tables.platform.set(familyId, tokensOf("one"))
      fake.tables.platform.set(otherFamily, tokensOf("two"))
      yield* Effect.all([cached.resolveAccess(kept), cached.checkAccess(kept), cached.platformTokens(familyId)])
      yield* Effect.all([cached.resolveAccess(other), cached.checkAccess(other), cached.platformTokens(otherFamily)])
      assert.strictEqual((yield* cached.revokeByAccess(fake.issue(familyId, 0)))?.familyId, familyId)
      assert.isUndefined(yield* cached.resolveAccess(kept))
      assert.isUndefined(yield* cached.checkAccess(kept))
      assert.isUndefined(yield* cached.platformTokens(familyId))
      const reads = { ...fake.reads }
      assert.isDefined(yield* cached.resolveAccess(other))
      assert.isDefined(yield* cached.checkAccess(other))
      assert.isDefined(yield* cached.platformTokens(otherFamily))
      assert.deepStrictEqual(fake.reads, reads, "another family's entries stay")
    }))

  it.effect("once the store has revoked a family, nothing of it is answered from the cache, even before the call returns", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      const token = fake.issue(familyId, 0)
      yield* Effect.all([cached.resolveAccess(token), cached.checkAccess(token)])
      // Committed at the store, its answer still on the way back.
      const answer = yield* Latch.make(false)
      fake.after.revokeFamily = answer
      const revoking = yield* Effect.forkChild(cached.revokeFamily(familyId))
      yield* until(() => fake.tables.revoked.has(familyId))
      assert.isUndefined(yield* cached.resolveAccess(token))
      assert.isUndefined(yield* cached.checkAccess(token))
      yield* answer.open
      assert.isDefined(yield* Fiber.join(revoking))
    }))

  it.effect("what was read while a revocation was at the store is not answered after it", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      const token = fake.issue(familyId, 0)
      // The revocation waits to reach the store; a request reads the token meanwhile (still live).
      const reach = yield* Latch.make(false)
      fake.before.revokeFamily = reach
      const revoking = yield* Effect.forkChild(cached.revokeFamily(familyId))
      yield* until(() => fake.arrived.revokeFamily === 1)
      assert.isDefined(yield* cached.resolveAccess(token))
      assert.isFalse((yield* cached.checkAccess(token))!.expired)
      yield* reach.open
      yield* Fiber.join(revoking)
      assert.isUndefined(yield* cached.resolveAccess(token))
      assert.isUndefined(yield* cached.checkAccess(token))
    }))

  it.effect("replaced platform tokens: the old ones are never answered once the store holds the new ones", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached } = yield* cachedOver(fake, 5_000)
      const familyId = randomUUID()
      fake.issue(familyId, 0)
      fake.tables.platform.set(familyId, tokensOf("old"))
      yield* cached.platformTokens(familyId)
      // Stored, the answer still on the way back: a read meanwhile sees the new ones.
      const answer = yield* Latch.make(false)
      fake.after.replacePlatformTokens = answer
      const replacing = yield* Effect.forkChild(cached.replacePlatformTokens(familyId, tokensOf("old").accessEnc, tokensOf("new")))
      yield* until(() => fake.tables.platform.get(familyId)?.accessEnc === tokensOf("new").accessEnc)
      assert.deepStrictEqual(yield* cached.platformTokens(familyId), tokensOf("new"))
      yield* answer.open
      assert.isTrue(yield* Fiber.join(replacing))
      delete fake.after.replacePlatformTokens

      // Not yet at the store: a read meanwhile gets the current ones, which end with the replacement.
      const reach = yield* Latch.make(false)
      fake.before.replacePlatformTokens = reach
      const again = yield* Effect.forkChild(cached.replacePlatformTokens(familyId, tokensOf("new").accessEnc, tokensOf("third")))
      yield* until(() => fake.arrived.replacePlatformTokens === 2)
      assert.deepStrictEqual(yield* cached.platformTokens(familyId), tokensOf("new"))
      yield* reach.open
      assert.isTrue(yield* Fiber.join(again))
      assert.deepStrictEqual(yield* cached.platformTokens(familyId), tokensOf("third"))
    }))

  it.effect("a lookup that read the store before a revocation here or one heard from another instance does not keep it", () =>
    Effect.gen(function*() {
      const fake = makeFakeStore()
      const { cached, sink } = yield* cachedOver(fake, 5_000, true)
      sink().listening(true)
      const revokers = [
        (familyId: string) => cached.revokeFamily(familyId),
        // Another instance: the store itself, then its notification.
        (familyId: string) => Effect.sync(() => (fake.tables.revoked.add(familyId), sink().families([randomUUID(), familyId])))
      ]
      for (const [i, revoke] of revokers.entries()) {
        const familyId = randomUUID()
        const token = fake.issue(familyId, 0)
        const answer = yield* Latch.make(false)
        fake.after.resolveAccess = answer
        const reads = fake.reads.resolve
        const pending = yield* Effect.forkChild(cached.resolveAccess(token))
        yield* until(() => fake.reads.resolve > reads)
        yield* revoke(familyId)
        yield* answer.open
        delete fake.after.resolveAccess
        assert.isDefined(yield* Fiber.join(pending), "read before the revocation")
        assert.isUndefined(yield* cached.resolveAccess(token), `revoker ${i}: not kept`)
        assert.strictEqual(fake.reads.resolve, reads + 2)
      }
    }))
})
