/**
 * A short per-instance cache in front of a TokenStore, so that hot authenticated reads skip the
 * database: resolved access tokens, token checks and a family's platform tokens are kept for `ttlMs`
 * (a few seconds; an access token never past its own expiry). Only found entries are kept. Every
 * revocation, rotation or platform-token replacement made through this instance drops the family's
 * entries at once (also from lookups still in flight). One made by another instance is heard through
 * `revocations` (on PostgreSQL: LISTEN/NOTIFY, sql/TokenStoreListener.ts) and applies here within
 * milliseconds; while that feed is not listening the cache answers nothing and keeps nothing, and it
 * starts again empty. Without a feed the instance is the only one on its database (the embedded one).
 */
import { Clock, Effect, Layer } from "effect"
import type { Scope } from "effect"
import type { Principal } from "../../domain/auth/Principal.ts"
import { lookupCounter, lookupMetrics } from "../../services/infra/Metrics.ts"
import { sha256Hex, TokenStore } from "../../services/auth/TokenStore.ts"
import type { PlatformTokensEnc, TokenInfo } from "../../services/auth/TokenStore.ts"

interface Entry<A> {
  readonly value: A
  readonly familyId: string
  readonly until: number
}

/** The prefix of every access token (services/auth/TokenStore.ts `newToken("access")`). */
const ACCESS_PREFIX = "bmg_at_"

/** Beyond this many entries a map is swept of expired ones (and cleared if that is not enough). */
const MAX_ENTRIES = 50_000

/**
 * The digests of access tokens that resolved or whose check found them, by the token as presented,
 * each until its (latest) cache entry ends: a hot read or check skips the SHA-256 (~1 µs idle,
 * several on a loaded instance; S4 hashed twice, for its rate-limit key and for the check). The raw
 * token is held no longer than the cache already keeps it; only tokens found in storage are
 * remembered, so guessed tokens never fill it; `forget` drops the tokens of revoked digests at once.
 */
export const makeDigestMemo = (hash: (token: string) => string, maxEntries: number) => {
  const digests = new Map<string, { readonly hash: string; readonly until: number }>()
  return {
    digest: (token: string, now: number): string => {
      const d = digests.get(token)
      if (d !== undefined) {
        if (d.until > now) return d.hash
        digests.delete(token)
      }
      return hash(token)
    },
    remember: (token: string, digest: string, until: number, now: number) => {
      const known = digests.get(token)
      // A token kept by two entries (resolved and checked) is remembered until the later one ends.
      if (known !== undefined && known.until >= until) return
      if (known === undefined && digests.size >= maxEntries) {
        for (const [k, d] of digests) if (d.until <= now) digests.delete(k)
        if (digests.size >= maxEntries) digests.clear()
      }
      digests.set(token, { hash: digest, until })
    },
    forget: (dropped: ReadonlySet<string>) => {
      for (const [t, d] of digests) if (dropped.has(d.hash)) digests.delete(t)
    },
    clear: () => digests.clear(),
    get size() {
      return digests.size
    }
  }
}

/**
 * A kept token check: the two answers it can give (live, or expired since), made once, so that a
 * hit hands out the same object until the entry ends (an answer built from it can be kept by it:
 * services/auth/AuthTokens.ts). Frozen: nobody can change what another request is handed.
 */
interface Checked {
  readonly familyId: string
  readonly expiresAt: Date
  readonly live: TokenInfo
  readonly expired: TokenInfo
}
const checkedOf = (info: TokenInfo): Checked => {
  const { expiresAt, familyId, issuedAt } = info
  return {
    familyId,
    expiresAt,
    live: Object.freeze({ familyId, issuedAt, expiresAt, expired: false }),
    expired: Object.freeze({ familyId, issuedAt, expiresAt, expired: true })
  }
}

/** What the cache hears of revocations committed by any instance (sql/TokenStoreListener.ts reports them). */
export interface RevocationSink {
  /** These families' tokens were ended (revoked, rotated, platform tokens replaced): drop their entries. */
  readonly families: (familyIds: ReadonlyArray<string>) => void
  /** Drop every entry (a notification too large to name its families, or one not understood). */
  readonly all: () => void
  /**
   * Whether every revocation from now on will be heard. `false`: the cache answers nothing and keeps
   * nothing. Either way it is emptied, and no lookup started before is kept.
   */
  readonly listening: (on: boolean) => void
}

/** Reports to the sink for as long as the scope lasts (forking what it needs); the layer waits for it to return. */
export type RevocationFeed<R> = (sink: RevocationSink) => Effect.Effect<void, never, Scope.Scope | R>

export const TokenStoreCached = <R = never>(ttlMs: number, revocations?: RevocationFeed<R>): Layer.Layer<TokenStore, never, TokenStore | R> =>
  Layer.effect(
    TokenStore,
    Effect.gen(function*() {
      const inner = yield* TokenStore
      const access = new Map<string, Entry<Principal>>()
      const checks = new Map<string, Entry<Checked>>()
      const platform = new Map<string, Entry<PlatformTokensEnc>>()
      // Lookups started before a family's invalidation (or before the whole cache was emptied) must
      // not store what they read.
      let epoch = 0
      const invalidatedAt = new Map<string, number>()
      let clearedAt = 0
      // Only a cache that hears every revocation may answer: at once without a feed, else once it listens.
      let listening = revocations === undefined

      const digests = makeDigestMemo(sha256Hex, MAX_ENTRIES)
      const clear = () => {
        epoch += 1
        clearedAt = epoch
        access.clear()
        checks.clear()
        platform.clear()
        invalidatedAt.clear()
        digests.clear()
      }
      const invalidateFamilies = (familyIds: ReadonlySet<string>) => {
        // Past this many, emptying everything keeps the in-flight guarantee that forgetting the oldest would not.
        if (invalidatedAt.size + familyIds.size > MAX_ENTRIES) return clear()
        epoch += 1
        for (const familyId of familyIds) {
          invalidatedAt.set(familyId, epoch)
          platform.delete(familyId)
        }
        // One pass over the entries for a whole batch of families.
        const dropped = new Set<string>()
        for (const map of [access, checks] as const) {
          for (const [k, e] of map as Map<string, Entry<unknown>>) {
            if (familyIds.has(e.familyId)) {
              map.delete(k)
              dropped.add(k)
            }
          }
        }
        // A revoked token's raw form is not kept past its entry.
        if (dropped.size > 0) digests.forget(dropped)
      }
      const invalidate = (familyId: string) => invalidateFamilies(new Set([familyId]))
      /** Stores `entry` unless its family was invalidated, or the cache emptied or off, since `startedAt`; whether it did. */
      const put = <A>(map: Map<string, Entry<A>>, key: string, entry: Entry<A>, startedAt: number, now: number): boolean => {
        if (!listening || clearedAt > startedAt || (invalidatedAt.get(entry.familyId) ?? 0) > startedAt) return false
        if (map.size >= MAX_ENTRIES) {
          for (const [k, e] of map) if (e.until <= now) map.delete(k)
          if (map.size >= MAX_ENTRIES) map.clear()
        }
        map.set(key, entry)
        return true
      }
      if (revocations !== undefined) {
        yield* revocations({
          families: (familyIds) => invalidateFamilies(new Set(familyIds)),
          all: clear,
          listening: (on) => {
            clear()
            listening = on
          }
        })
      }

      const count = { access: lookupCounter("tokens.access"), check: lookupCounter("tokens.check"), platform: lookupCounter("tokens.platform") }
      // The same hit series, updated without an Effect on the one-step hit paths.
      const hits = {
        access: lookupMetrics("tokens.access").hit,
        check: lookupMetrics("tokens.check").hit,
        platform: lookupMetrics("tokens.platform").hit
      }
      const hit = <A>(map: Map<string, Entry<A>>, key: string, now: number): A | undefined => {
        const e = map.get(key)
        if (e === undefined) return undefined
        if (e.until > now) return e.value
        map.delete(key)
        return undefined
      }
      /** A check read from the store, kept (with its digest) unless its family was invalidated meanwhile. */
      const keepCheck = (token: string, key: string, info: TokenInfo, startedAt: number, now: number) => {
        const until = now + ttlMs
        if (put(checks, key, { value: checkedOf(info), familyId: info.familyId, until }, startedAt, now)) {
          digests.remember(token, key, until, now)
        }
      }

      return TokenStore.of({
        ...inner,
        // Hits answer in one step (no Effect per lookup), with the same hit count as a miss's path.
        resolveAccess: (token) =>
          Effect.withFiber((fiber) => {
            const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
            const key = digests.digest(token, now)
            const cached = hit(access, key, now)
            if (cached !== undefined) {
              hits.access.updateUnsafe(1, fiber.context)
              return Effect.succeed(cached)
            }
            const startedAt = epoch
            return Effect.map(Effect.andThen(count.access(false), inner.resolveAccess(token)), (p) => {
              if (p !== undefined) {
                const until = Math.min(now + ttlMs, p.accessExpiresAt.getTime())
                if (put(access, key, { value: p, familyId: p.familyId, until }, startedAt, now)) digests.remember(token, key, until, now)
              }
              return p
            })
          }),
        checkAccess: (token) =>
          Effect.withFiber((fiber) => {
            const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
            const key = digests.digest(token, now)
            const cached = hit(checks, key, now)
            if (cached !== undefined) {
              hits.check.updateUnsafe(1, fiber.context)
              return Effect.succeed(cached.expiresAt.getTime() <= now ? cached.expired : cached.live)
            }
            const startedAt = epoch
            return Effect.map(Effect.andThen(count.check(false), inner.checkAccess(token)), (info) => {
              if (info !== undefined) keepCheck(token, key, info, startedAt, now)
              return info
            })
          }),
        familyOf: (token) =>
          Effect.withFiber((fiber) => {
            const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
            // A token resolved or checked here moments ago: its family is known (unless it expired since).
            const key = digests.digest(token, now)
            const resolved = hit(access, key, now)
            if (resolved !== undefined) return Effect.succeed(resolved.familyId)
            const checked = hit(checks, key, now)
            if (checked !== undefined) return Effect.succeed(checked.expiresAt.getTime() > now ? checked.familyId : undefined)
            if (!token.startsWith(ACCESS_PREFIX)) return inner.familyOf(token)
            // An access token (the rate-limit key of /token/check and /token/revoke): its check gives the
            // family too (a live access token's row, unless expired) and is kept for the handler's
            // checkAccess that follows, so the request reads the store once. An access-prefixed token is
            // only ever stored as kind `access`: when the check finds none, neither would familyOf.
            const startedAt = epoch
            return Effect.map(Effect.andThen(count.check(false), inner.checkAccess(token)), (info) => {
              if (info === undefined) return undefined
              keepCheck(token, key, info, startedAt, now)
              return info.expiresAt.getTime() > now ? info.familyId : undefined
            })
          }),
        platformTokens: (familyId, options) =>
          Effect.withFiber((fiber) => {
            const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
            const cached = options?.fresh === true ? undefined : hit(platform, familyId, now)
            if (cached !== undefined) {
              hits.platform.updateUnsafe(1, fiber.context)
              return Effect.succeed(cached)
            }
            const startedAt = epoch
            // A `fresh` read is no lookup of the cache: not counted.
            const read = inner.platformTokens(familyId, options)
            return Effect.map(options?.fresh === true ? read : Effect.andThen(count.platform(false), read), (tokens) => {
              if (tokens !== undefined) put(platform, familyId, { value: tokens, familyId, until: now + ttlMs }, startedAt, now)
              return tokens
            })
          }),
        replacePlatformTokens: (familyId, previousAccessEnc, next) =>
          Effect.sync(() => invalidate(familyId)).pipe(
            Effect.andThen(inner.replacePlatformTokens(familyId, previousAccessEnc, next)),
            Effect.ensuring(Effect.sync(() => invalidate(familyId)))
          ),
        rotateRefresh: (refreshToken, next) =>
          Effect.map(inner.rotateRefresh(refreshToken, next), (r) => {
            if (r._tag !== "Invalid") invalidate(r.familyId)
            return r
          }),
        revokeByAccess: (token) =>
          Effect.withFiber((fiber) => {
            const key = digests.digest(token, fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
            const known = access.get(key)?.familyId ?? checks.get(key)?.familyId
            if (known !== undefined) invalidate(known)
            return Effect.map(inner.revokeByAccess(token), (r) => {
              if (r !== undefined) invalidate(r.familyId)
              return r
            })
          }),
        revokeFamily: (familyId) =>
          Effect.sync(() => invalidate(familyId)).pipe(
            Effect.andThen(inner.revokeFamily(familyId)),
            Effect.ensuring(Effect.sync(() => invalidate(familyId)))
          )
      })
    })
  )
