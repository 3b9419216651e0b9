/**
 * A token store for the cache's tests (layers/auth/TokenStoreCached.ts): plain maps keyed by the raw
 * token, so it never hashes (a test can count the cache's own SHA-256s), a count of the reads that
 * reach it, and a pause point before and after each operation's store step (a read whose answer is
 * still in flight, a revocation committed but not yet returned). Changes made on `tables` directly are
 * those of another instance, that this one's cache does not hear of.
 */
import { Clock, Context, Effect, Layer } from "effect"
import type { Latch, Scope } from "effect"
import { createRequire, syncBuiltinESMExports } from "node:module"
import type { UserId } from "../../src/domain/infra/Ids.ts"
import { TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import type { RevocationFeed, RevocationSink } from "../../src/layers/auth/TokenStoreCached.ts"
import { newToken, TokenStore } from "../../src/services/auth/TokenStore.ts"
import type { PlatformTokensEnc, RotateResult, TokenStoreShape } from "../../src/services/auth/TokenStore.ts"

type Op = "resolveAccess" | "checkAccess" | "familyOf" | "platformTokens" | "revokeByAccess" | "revokeFamily" | "replacePlatformTokens" | "rotateRefresh"

export const makeFakeStore = () => {
  const tokens = new Map<string, { readonly familyId: string; readonly issuedAt: Date; readonly expiresAt: Date }>()
  const revoked = new Set<string>()
  const platform = new Map<string, PlatformTokensEnc>()
  const reads = { resolve: 0, check: 0, family: 0, platform: 0, fresh: 0 }
  /** While set, an operation waits on the latch before (or after) its store step. */
  const before: Partial<Record<Op, Latch.Latch>> = {}
  const after: Partial<Record<Op, Latch.Latch>> = {}
  /** Calls that reached the store, by operation (counted before any wait). */
  const arrived: Partial<Record<Op, number>> = {}
  /** What rotateRefresh answers (an unknown refresh token unless a test sets it). */
  const rotation: { next: RotateResult } = { next: { _tag: "Invalid" } }
  const op = <A>(name: Op, step: (now: number) => A) =>
    Effect.suspend(() => {
      arrived[name] = (arrived[name] ?? 0) + 1
      const b = before[name]
      const a = after[name]
      const run = Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const out = step(now)
        return a === undefined ? Effect.succeed(out) : Effect.as(a.await, out)
      })
      return b === undefined ? run : Effect.andThen(b.await, run)
    })
  const live = (token: string) => {
    const t = tokens.get(token)
    return t === undefined || revoked.has(t.familyId) ? undefined : t
  }
  const revoke = (familyId: string) => {
    if (revoked.has(familyId) || ![...tokens.values()].some((t) => t.familyId === familyId)) return undefined
    revoked.add(familyId)
    const p = platform.get(familyId)
    platform.delete(familyId)
    return { familyId, platform: p }
  }
  const unused = () => Effect.die("not used by the cache's tests")
  const store: TokenStoreShape = {
    resolveAccess: (token) =>
      op("resolveAccess", (now) => {
        reads.resolve++
        const t = live(token)
        return t === undefined || t.expiresAt.getTime() <= now
          ? undefined
          : { userId: "100000000000000001" as UserId, familyId: t.familyId, accessExpiresAt: t.expiresAt }
      }),
    checkAccess: (token) =>
      op("checkAccess", (now) => {
        reads.check++
        const t = live(token)
        return t === undefined ? undefined : { ...t, expired: t.expiresAt.getTime() <= now }
      }),
    familyOf: (token) =>
      op("familyOf", (now) => {
        reads.family++
        const t = live(token)
        return t !== undefined && t.expiresAt.getTime() > now ? t.familyId : undefined
      }),
    platformTokens: (familyId, options) =>
      op("platformTokens", () => {
        reads.platform++
        if (options?.fresh === true) reads.fresh++
        return revoked.has(familyId) ? undefined : platform.get(familyId)
      }),
    replacePlatformTokens: (familyId, previousAccessEnc, next) =>
      op("replacePlatformTokens", () => {
        if (platform.get(familyId)?.accessEnc !== previousAccessEnc) return false
        platform.set(familyId, next)
        return true
      }),
    revokeByAccess: (token) => op("revokeByAccess", () => (live(token) === undefined ? undefined : revoke(tokens.get(token)!.familyId))),
    revokeFamily: (familyId) => op("revokeFamily", () => revoke(familyId)),
    rotateRefresh: () => op("rotateRefresh", () => rotation.next),
    createSignInState: unused,
    consumeSignInState: unused,
    createFamily: unused,
    consumeTemporary: unused,
    issuePair: unused,
    claimPlatformRefresh: unused,
    releasePlatformRefresh: unused
  }
  /** A new access token of `familyId`, living `lifeMs` from `now`. */
  const issue = (familyId: string, now: number, lifeMs = 3600_000) => {
    const token = newToken("access")
    tokens.set(token, { familyId, issuedAt: new Date(now), expiresAt: new Date(now + lifeMs) })
    return token
  }
  return { store, tables: { tokens, revoked, platform }, reads, arrived, before, after, rotation, issue }
}
export type FakeStore = ReturnType<typeof makeFakeStore>

/** The cache over `fake`, with the sink its feed was handed when one is asked for (call `sink.listening(true)`). */
export const cachedOver = (fake: FakeStore, ttlMs: number, withFeed = false) =>
  Effect.gen(function*() {
    let sink: RevocationSink | undefined
    const feed: RevocationFeed<never> = (s) => Effect.sync(() => void (sink = s))
    const context: Context.Context<TokenStore> = yield* Layer.build(
      TokenStoreCached(ttlMs, withFeed ? feed : undefined).pipe(Layer.provide(Layer.succeed(TokenStore, TokenStore.of(fake.store))))
    )
    return { cached: Context.get(context, TokenStore), sink: () => sink! }
  }) as Effect.Effect<{ readonly cached: TokenStoreShape; readonly sink: () => RevocationSink }, never, Scope.Scope>

/** Lets forked fibers run until `reached` holds (a store step they wait in). */
export const until = (reached: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; !reached(); i++) {
      if (i > 1_000) return yield* Effect.die("the forked lookup never reached the store")
      yield* Effect.yieldNow
    }
  })

/**
 * Counts the SHA-256s of each value hashed while `effect` runs (node:crypto's createHash, patched for
 * that time): the cache's digest memo is what spares them, and what holds raw tokens.
 */
export const countingHashes = <A, E, R>(effect: (hashesOf: (value: string) => number) => Effect.Effect<A, E, R>) => {
  const crypto = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto")
  const original = crypto.createHash
  const seen = new Map<string, number>()
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      crypto.createHash = ((algorithm: string, options?: never) => {
        const hash = original(algorithm, options)
        const update = hash.update.bind(hash) as (value: string, encoding?: never) => typeof hash
        hash.update = ((value: string, encoding?: never) => {
          seen.set(String(value), (seen.get(String(value)) ?? 0) + 1)
          return update(value, encoding)
        }) as typeof hash.update
        return hash
      }) as typeof crypto.createHash
      syncBuiltinESMExports()
    }),
    () => effect((value) => seen.get(value) ?? 0),
    () =>
      Effect.sync(() => {
        crypto.createHash = original
        syncBuiltinESMExports()
      })
  )
}
