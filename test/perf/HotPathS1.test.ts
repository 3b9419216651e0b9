/**
 * S1's hot path (issue #16): a cached access token is looked up without hashing it again (the digest
 * of a token that resolved is kept as long as its cache entry, never for a token that did not), and
 * a revocation or the TTL ends that with the entry; route labels of /api paths are kept per path.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { makeDigestMemo, TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import { withGuildListMemo } from "../../src/layers/platform/discord/DiscordCache.ts"
import type { PlatformGuildSummary } from "../../src/services/platform/ChatPlatform.ts"
import { routeLabel } from "../../src/services/infra/Metrics.ts"
import { newToken, sha256Hex, TokenStore } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { signedInFamily } from "../auth/TokenFixtures.ts"

describe("the digest memo", () => {
  it("hashes a remembered token once until its entry ends; forgets revoked digests; stays bounded", () => {
    let hashed = 0
    const memo = makeDigestMemo((t) => (hashed++, sha256Hex(t)), 3)
    const token = "bmg_at_first"
    const digest = memo.digest(token, 0)
    assert.strictEqual(digest, sha256Hex(token))
    memo.remember(token, digest, 5_000, 0)
    for (let i = 0; i < 5; i++) assert.strictEqual(memo.digest(token, 4_999), digest)
    assert.strictEqual(hashed, 1, "hits reuse the digest")
    assert.strictEqual(memo.digest(token, 5_000), digest)
    assert.strictEqual(hashed, 2, "an ended entry is hashed again")
    assert.strictEqual(memo.size, 0, "and no longer kept")

    memo.remember(token, digest, 10_000, 5_000)
    memo.forget(new Set([digest]))
    assert.strictEqual(memo.size, 0, "a revoked digest's token is dropped at once")

    // Never more than the bound: expired ones swept first, then all.
    for (let i = 0; i < 10; i++) memo.remember(`t${i}`, sha256Hex(`t${i}`), 20_000, 6_000)
    assert.isAtMost(memo.size, 3)
  })
})


it.effect("TokenStoreCached with the memo: hits, expiry, and revocation answer as before", () => {
  const reads = { n: 0 }
  const counting = Layer.effect(TokenStore, Effect.map(Effect.service(TokenStore), (inner) =>
    TokenStore.of({ ...inner, resolveAccess: (t) => Effect.suspend(() => (reads.n++, inner.resolveAccess(t))) }))).pipe(
      Layer.provide(TokenStoreMemory)
    )
  return Effect.gen(function*() {
    const store = yield* TokenStore
    const { familyId, access } = yield* signedInFamily()

    for (let i = 0; i < 4; i++) assert.strictEqual((yield* store.resolveAccess(access.token))?.familyId, familyId)
    assert.strictEqual(reads.n, 1)
    const unknown = newToken("access")
    assert.isUndefined(yield* store.resolveAccess(unknown))
    assert.isUndefined(yield* store.resolveAccess(unknown))
    assert.strictEqual(reads.n, 3, "unknown tokens are never kept")

    yield* TestClock.adjust("6 seconds")
    assert.strictEqual((yield* store.resolveAccess(access.token))?.familyId, familyId)
    assert.strictEqual(reads.n, 4, "past the TTL the store is read again")

    assert.isDefined(yield* store.revokeByAccess(access.token))
    assert.isUndefined(yield* store.resolveAccess(access.token))
  }).pipe(Effect.provide(TokenStoreCached(5_000).pipe(Layer.provide(counting))))
})

describe("route labels of /api paths", () => {
  it("are the same label on every call, memo or not", () => {
    const path = "/api/v1/bots/100000000000000001/servers/300000000000000001/modules"
    for (let i = 0; i < 3; i++) assert.strictEqual(routeLabel(path, 200), "/api/v1/bots/:id/servers/:id/modules")
    assert.strictEqual(routeLabel(`${path}?page=2`, 200), "/api/v1/bots/:id/servers/:id/modules")
    assert.strictEqual(routeLabel(path, 404), "unmatched")
  })
})

describe("the server lists of a cached read (cachedGuildLists)", () => {
  const guild = (id: string) => ({ id, name: id, icon: null, owner: true, permissions: "0" })
  // Stands for the platform client's caches: a list object per lookup, kept 30 s from that lookup.
  const fakeReads = () => {
    const lists = new Map<string, { list: ReadonlyArray<PlatformGuildSummary>; at: number }>()
    let lookups = 0
    const read = (kind: string) => (token: Redacted.Redacted<string>) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const key = `${kind}:${Redacted.value(token)}`
        const kept = lists.get(key)
        if (kept !== undefined && now < kept.at + 30_000) return kept.list
        lookups++
        const list = [guild(`${kind}-${lookups}`)]
        lists.set(key, { list, at: now })
        return list
      })
    return { reads: { getBotGuilds: read("bot"), getCurrentUserGuilds: read("user") }, lookups: () => lookups }
  }

  it.effect("answers both lists only while both are fresh, never past the cache's own expiry", () =>
    Effect.gen(function*() {
      const { reads } = fakeReads()
      const memo = withGuildListMemo({ cacheTtl: { guildList: "30 seconds" } }, reads)
      const botToken = Redacted.make("bot-token")
      const userToken = Redacted.make("user-token")
      assert.isUndefined(yield* memo.cachedGuildLists!(botToken, userToken), "nothing read yet")
      const botList = yield* memo.getBotGuilds(botToken)
      assert.isUndefined(yield* memo.cachedGuildLists!(botToken, userToken), "the user's list is not read yet")
      const userList = yield* memo.getCurrentUserGuilds(userToken)
      const both = yield* memo.cachedGuildLists!(botToken, userToken)
      assert.strictEqual(both?.[0], botList)
      assert.strictEqual(both?.[1], userList)

      // 20 s later the same list is read through another token object (a reloaded bot registry):
      // it stays fresh until 30 s after its lookup, not 30 s after that read.
      yield* TestClock.adjust("20 seconds")
      const sameToken = Redacted.make("bot-token")
      assert.strictEqual(yield* memo.getBotGuilds(sameToken), botList)
      assert.strictEqual(yield* memo.getCurrentUserGuilds(userToken), userList)
      assert.isDefined(yield* memo.cachedGuildLists!(sameToken, userToken))
      yield* TestClock.adjust("10 seconds")
      assert.isUndefined(yield* memo.cachedGuildLists!(sameToken, userToken), "expired with the cache's entry")
      assert.isUndefined(yield* memo.cachedGuildLists!(botToken, userToken))

      // Read again (new lookups): fresh again, with the new lists.
      const botList2 = yield* memo.getBotGuilds(sameToken)
      const userList2 = yield* memo.getCurrentUserGuilds(userToken)
      assert.notStrictEqual(botList2, botList)
      const again = yield* memo.cachedGuildLists!(sameToken, userToken)
      assert.strictEqual(again?.[0], botList2)
      assert.strictEqual(again?.[1], userList2)
    }))

  it("keeps nothing when the caches only coalesce (a zero lifetime)", () => {
    const { reads } = fakeReads()
    assert.isUndefined(withGuildListMemo({ cacheTtl: { guildList: 0 } }, reads).cachedGuildLists)
  })
})
