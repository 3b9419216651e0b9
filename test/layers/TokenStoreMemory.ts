/**
 * A deterministic in-memory TokenStore with the semantics of the SQL one (same suite in
 * test/contracts/TokenStore.contract.ts). Every operation is one synchronous step, hence atomic. Time comes
 * from Effect's Clock. Storage only, like the SQL one: `TokenStore.fromStorage` adds the policy.
 * `tables` exposes everything stored.
 */
import { Effect, Layer } from "effect"
import type { UserId } from "../../src/domain/infra/Ids.ts"
import { now, sha256Hex, TokenStore } from "../../src/services/auth/TokenStore.ts"
import type { NewToken, PlatformTokensEnc, PlatformUserRow, RevokedFamily, TokenKind, TokenStorage } from "../../src/services/auth/TokenStore.ts"

interface TokenRow {
  familyId: string
  kind: TokenKind
  codeChallenge: string | undefined
  issuedAt: Date
  expiresAt: Date
  usedAt: Date | undefined
  revokedAt: Date | undefined
}
interface FamilyRow {
  id: string
  userId: string
  platform: PlatformTokensEnc | undefined
  refreshClaimedUntil: Date | undefined
  revokedAt: Date | undefined
}
interface StateRow {
  cookieHash: string
  redirectUri: string
  clientState: string | undefined
  clientCodeChallenge: string | undefined
  platformVerifierEnc: string
  expiresAt: Date
  usedAt: Date | undefined
}

export interface MemoryTables {
  readonly users: Map<string, PlatformUserRow>
  readonly families: Map<string, FamilyRow>
  readonly tokens: Map<string, TokenRow>
  readonly states: Map<string, StateRow>
}

export const makeTokenStoreMemory = Effect.sync(() => {
  const t: MemoryTables = { users: new Map(), families: new Map(), tokens: new Map(), states: new Map() }
  const live = (familyId: string) => t.families.get(familyId)?.revokedAt === undefined
  const put = (familyId: string, kind: TokenKind, n: NewToken, codeChallenge?: string) =>
    t.tokens.set(sha256Hex(n.token), {
      familyId,
      kind,
      codeChallenge,
      issuedAt: n.issuedAt,
      expiresAt: n.expiresAt,
      usedAt: undefined,
      revokedAt: undefined
    })
  const revoke = (familyId: string, at: Date): RevokedFamily | undefined => {
    const f = t.families.get(familyId)
    if (f === undefined || f.revokedAt !== undefined) return undefined
    const platform = f.platform
    f.revokedAt = at
    f.platform = undefined
    for (const row of t.tokens.values()) if (row.familyId === familyId && row.revokedAt === undefined) row.revokedAt = at
    return { familyId, platform }
  }
  const store: TokenStorage = {
    resolveAccess: (token) =>
      Effect.map(now, (at) => {
        const r = t.tokens.get(sha256Hex(token))
        if (r === undefined || r.kind !== "access" || r.revokedAt !== undefined || !live(r.familyId)) return undefined
        if (r.expiresAt.getTime() <= at.getTime()) return undefined
        const f = t.families.get(r.familyId)!
        return { userId: f.userId as UserId, familyId: r.familyId, accessExpiresAt: r.expiresAt }
      }),
    familyOf: (token) =>
      Effect.map(now, (at) => {
        const r = t.tokens.get(sha256Hex(token))
        if (r === undefined || r.revokedAt !== undefined || !live(r.familyId)) return undefined
        return r.expiresAt.getTime() > at.getTime() ? r.familyId : undefined
      }),
    createSignInState: (input) =>
      Effect.sync(() => {
        t.states.set(sha256Hex(input.state), {
          cookieHash: sha256Hex(input.cookie),
          redirectUri: input.redirectUri,
          clientState: input.clientState,
          clientCodeChallenge: input.clientCodeChallenge,
          platformVerifierEnc: input.platformVerifierEnc,
          expiresAt: input.expiresAt,
          usedAt: undefined
        })
      }),
    consumeSignInState: (state, cookie) =>
      Effect.map(now, (at) => {
        const stateHash = sha256Hex(state)
        const s = t.states.get(stateHash)
        if (s === undefined) return { _tag: "Refused" as const, reason: "unknown" as const }
        if (s.usedAt !== undefined) return { _tag: "Refused" as const, reason: "used" as const }
        if (s.expiresAt.getTime() <= at.getTime()) return { _tag: "Refused" as const, reason: "expired" as const }
        if (cookie === undefined || sha256Hex(cookie) !== s.cookieHash) {
          return { _tag: "Refused" as const, reason: "cookie" as const }
        }
        s.usedAt = at
        return {
          _tag: "Consumed" as const,
          state: {
            stateHash,
            redirectUri: s.redirectUri,
            clientState: s.clientState,
            clientCodeChallenge: s.clientCodeChallenge,
            platformVerifierEnc: s.platformVerifierEnc
          }
        }
      }),
    createFamily: (input) =>
      Effect.sync(() => {
        t.users.set(input.user.id, input.user)
        t.families.set(input.familyId, {
          id: input.familyId,
          userId: input.user.id,
          platform: input.platform,
          refreshClaimedUntil: undefined,
          revokedAt: undefined
        })
        put(input.familyId, "temporary", input.temporary, input.codeChallenge)
      }),
    consumeTemporary: (token) =>
      Effect.map(now, (at) => {
        const r = t.tokens.get(sha256Hex(token))
        if (r === undefined || r.kind !== "temporary") return { _tag: "Invalid" as const }
        if (r.usedAt !== undefined) return { _tag: "Replayed" as const, familyId: r.familyId }
        if (r.revokedAt !== undefined || !live(r.familyId) || r.expiresAt.getTime() <= at.getTime()) {
          return { _tag: "Invalid" as const }
        }
        r.usedAt = at
        return { _tag: "Consumed" as const, familyId: r.familyId, codeChallenge: r.codeChallenge }
      }),
    issuePair: (familyId, pair) =>
      Effect.sync(() => {
        put(familyId, "access", pair.access)
        put(familyId, "refresh", pair.refresh)
      }),
    rotateRefresh: (refreshToken, next) =>
      Effect.map(now, (at) => {
        const r = t.tokens.get(sha256Hex(refreshToken))
        if (r === undefined || r.kind !== "refresh") return { _tag: "Invalid" as const }
        if (r.usedAt !== undefined) return { _tag: "AlreadyRotated" as const, familyId: r.familyId, rotatedAt: r.usedAt }
        if (r.revokedAt !== undefined || !live(r.familyId) || r.expiresAt.getTime() <= at.getTime()) {
          return { _tag: "Invalid" as const }
        }
        r.usedAt = at
        for (const row of t.tokens.values()) {
          if (row.familyId === r.familyId && row.kind === "access" && row.revokedAt === undefined) row.revokedAt = at
        }
        put(r.familyId, "access", next.access)
        put(r.familyId, "refresh", next.refresh)
        return { _tag: "Rotated" as const, familyId: r.familyId }
      }),
    checkAccess: (token) =>
      Effect.map(now, (at) => {
        const r = t.tokens.get(sha256Hex(token))
        if (r === undefined || r.kind !== "access" || r.revokedAt !== undefined || !live(r.familyId)) return undefined
        return { familyId: r.familyId, issuedAt: r.issuedAt, expiresAt: r.expiresAt, expired: r.expiresAt.getTime() <= at.getTime() }
      }),
    revokeByAccess: (token) =>
      Effect.map(now, (at) => {
        const r = t.tokens.get(sha256Hex(token))
        if (r === undefined || r.kind !== "access" || r.revokedAt !== undefined) return undefined
        return revoke(r.familyId, at)
      }),
    revokeFamily: (familyId) => Effect.map(now, (at) => revoke(familyId, at)),
    platformTokens: (familyId) =>
      Effect.sync(() => {
        const f = t.families.get(familyId)
        return f === undefined || f.revokedAt !== undefined ? undefined : f.platform
      }),
    claimPlatformRefresh: (familyId, previousAccessEnc, until) =>
      Effect.map(now, (at) => {
        const f = t.families.get(familyId)
        if (f === undefined || f.revokedAt !== undefined || f.platform?.accessEnc !== previousAccessEnc) return false
        if (f.refreshClaimedUntil !== undefined && f.refreshClaimedUntil.getTime() > at.getTime()) return false
        f.refreshClaimedUntil = until
        return true
      }),
    releasePlatformRefresh: (familyId, until) =>
      Effect.sync(() => {
        const f = t.families.get(familyId)
        if (f !== undefined && f.refreshClaimedUntil?.getTime() === until.getTime()) f.refreshClaimedUntil = undefined
      }),
    replacePlatformTokens: (familyId, previousAccessEnc, next) =>
      Effect.sync(() => {
        const f = t.families.get(familyId)
        if (f === undefined || f.revokedAt !== undefined || f.platform?.accessEnc !== previousAccessEnc) return false
        f.platform = next
        f.refreshClaimedUntil = undefined
        return true
      })
  }
  return { store, tables: t }
})

export const TokenStoreMemory = Layer.effect(TokenStore, Effect.map(makeTokenStoreMemory, (m) => TokenStore.fromStorage(m.store)))
