/** The per-instance token cache: hits skip the store, expire with their TTL, and revocations here apply at once. */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Latch, Layer } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import type { RevocationFeed, RevocationSink } from "../../src/layers/auth/TokenStoreCached.ts"
import { applyRevocations, DROP_ALL, revocationPayload } from "../../src/layers/auth/TokenStoreListener.ts"
import { TokenStore } from "../../src/services/auth/TokenStore.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"

import { pairAt, platform, signedInFamily } from "./TokenFixtures.ts"

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
    const { familyId, at, ...first } = yield* signedInFamily()
    const pair = () => pairAt(at)

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

describe("with a revocation feed (other instances' revocations, sql/TokenStoreListener.ts)", () => {
  /** A family signed in on the memory store, with an access token. */
  const signedIn = Effect.map(signedInFamily(), (f) => ({ familyId: f.familyId, access: f.access.token }))

  it.effect("nothing kept before it listens or while it does not; a named family is dropped; emptied when back", () => {
    const reads = { n: 0 }
    return Effect.gen(function*() {
      const inner = yield* TokenStore
      let sink: RevocationSink | undefined
      const feed: RevocationFeed<never> = (s) => Effect.sync(() => void (sink = s))
      const cached = Context.get(
        yield* Layer.build(TokenStoreCached(5_000, feed).pipe(Layer.provide(Layer.succeed(TokenStore, inner)))),
        TokenStore
      )
      const one = yield* signedIn
      const reading = (effect: Effect.Effect<unknown, unknown>) =>
        Effect.gen(function*() {
          const before = reads.n
          yield* effect
          return reads.n - before
        })
      const resolve = (token: string) => cached.resolveAccess(token)

      // Start-up, before it listens: every lookup reads the store, none is kept.
      assert.strictEqual(yield* reading(Effect.all([resolve(one.access), resolve(one.access), cached.checkAccess(one.access), cached.checkAccess(one.access)])), 4)
      assert.strictEqual(yield* reading(Effect.all([cached.platformTokens(one.familyId), cached.platformTokens(one.familyId)])), 2)

      sink!.listening(true)
      assert.strictEqual(yield* reading(Effect.all([resolve(one.access), resolve(one.access), cached.checkAccess(one.access), cached.checkAccess(one.access)])), 2, "kept once listening")
      // Revoked by another instance (on the store itself): served from the cache until the notification.
      assert.isDefined(yield* inner.revokeFamily(one.familyId))
      assert.isDefined(yield* resolve(one.access), "no notification yet: the cached entry")
      sink!.families([randomUUID(), one.familyId])
      assert.isUndefined(yield* resolve(one.access))
      assert.isUndefined(yield* cached.checkAccess(one.access))

      // Everything dropped at once.
      const two = yield* signedIn
      yield* resolve(two.access)
      assert.strictEqual(yield* reading(resolve(two.access)), 0)
      sink!.all()
      assert.strictEqual(yield* reading(resolve(two.access)), 1, "emptied")

      // Listening lost: emptied, and nothing is kept until it is back.
      assert.strictEqual(yield* reading(resolve(two.access)), 0)
      sink!.listening(false)
      assert.strictEqual(yield* reading(Effect.all([resolve(two.access), resolve(two.access), cached.checkAccess(two.access), cached.familyOf(two.access)])), 4)
      assert.strictEqual(yield* reading(Effect.all([cached.platformTokens(two.familyId), cached.platformTokens(two.familyId)])), 2)
      sink!.listening(true)
      assert.strictEqual(yield* reading(Effect.all([resolve(two.access), resolve(two.access)])), 1, "kept again once back")
      // Back after an outage: what was kept before it is gone (a revocation sent meanwhile was not heard).
      sink!.listening(false)
      sink!.listening(true)
      assert.strictEqual(yield* reading(resolve(two.access)), 1)
    }).pipe(Effect.provide(counting(reads)))
  })

  it.effect("a lookup in flight while listening is lost (or the cache emptied) is not kept", () => {
    const reads = { n: 0 }
    return Effect.gen(function*() {
      const store = yield* TokenStore
      const gate = yield* Latch.make(true)
      const gated = TokenStore.of({ ...store, resolveAccess: (t) => Effect.andThen(gate.await, store.resolveAccess(t)) })
      let sink: RevocationSink | undefined
      const cached = Context.get(
        yield* Layer.build(TokenStoreCached(5_000, (s) => Effect.sync(() => void (sink = s))).pipe(Layer.provide(Layer.succeed(TokenStore, gated)))),
        TokenStore
      )
      sink!.listening(true)
      for (const event of [() => sink!.listening(false), () => sink!.all()]) {
        const { access } = yield* signedIn
        yield* gate.close
        const pending = yield* Effect.forkChild(cached.resolveAccess(access))
        yield* Effect.yieldNow
        // Lost and back (or emptied) while the read is at the store.
        event()
        sink!.listening(true)
        yield* gate.open
        assert.isDefined(yield* Fiber.join(pending))
        const before = reads.n
        yield* cached.resolveAccess(access)
        assert.strictEqual(reads.n - before, 1, "read again: the answer in flight was not kept")
      }
    }).pipe(Effect.provide(counting(reads)))
  })
})

describe("revocation payloads", () => {
  it("family ids, comma-separated; too long for one notification or not plain ids: drop everything", () => {
    assert.strictEqual(revocationPayload(["f1", "f2"]), "f1,f2")
    const many = Array.from({ length: 300 }, () => randomUUID())
    assert.isAbove(many.join(",").length, 8000)
    assert.strictEqual(revocationPayload(many), DROP_ALL)
    assert.strictEqual(revocationPayload(many.slice(0, 200)), many.slice(0, 200).join(","), "7,399 bytes fit")
    assert.strictEqual(revocationPayload([]), DROP_ALL)
    assert.strictEqual(revocationPayload(["a,b"]), DROP_ALL)
    assert.strictEqual(revocationPayload([""]), DROP_ALL)
    // One odd id among plain ones is enough to drop everything.
    assert.strictEqual(revocationPayload(["f1", "a,b"]), DROP_ALL)
    assert.strictEqual(revocationPayload(["f1", ""]), DROP_ALL)
    // The bound is PostgreSQL's (under 8000 bytes), counted in UTF-8 bytes, not characters.
    assert.strictEqual(revocationPayload(["x".repeat(7_999)]), "x".repeat(7_999))
    assert.strictEqual(revocationPayload(["x".repeat(8_000)]), DROP_ALL)
    assert.strictEqual(revocationPayload(["é".repeat(4_000)]), DROP_ALL, "8,000 bytes in 4,000 characters")
  })

  it("payloads heard together: their families in one drop, or everything when one is not a plain list", () => {
    const heard: Array<string> = []
    const sink: RevocationSink = {
      families: (ids) => void heard.push(`families ${ids.join(" ")}`),
      all: () => void heard.push("all"),
      listening: () => assert.fail("not a payload's to say")
    }
    applyRevocations(sink, ["f1"])
    applyRevocations(sink, ["f1,f2", "f3"])
    for (const odd of [DROP_ALL, "", "f1,,f2", "f1,"]) applyRevocations(sink, ["f4", odd, "f5"])
    applyRevocations(sink, [])
    assert.deepStrictEqual(heard, ["families f1", "families f1 f2 f3", "all", "all", "all", "all"])
  })
})
