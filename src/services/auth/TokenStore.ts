/**
 * Gateway tokens (decisions.md "Sign-in and tokens"): opaque, 256 random bits, base64url, with a
 * kind prefix (`bmg_at_`, `bmg_rt_`, `bmg_tt_`); only their SHA-256 is stored. Tokens belong to a
 * family (one per sign-in). Every check and rotation is a single atomic statement. Time comes from
 * Effect's Clock (TestClock in tests). A layer implements `TokenStorage` (storage only) and becomes
 * a TokenStore through `TokenStore.fromStorage`, which adds the one policy: reuse revokes the family.
 * Layers: `TokenStoreSql` (layers/auth/TokenStoreSql.ts), `TokenStoreCached` in front of it
 * (layers/auth/TokenStoreCached.ts), `TokenStoreMemory` (test/layers/TokenStoreMemory.ts).
 */
import { Clock, Context, Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { Principal } from "../../domain/auth/Principal.ts"

export type TokenKind = "temporary" | "access" | "refresh"

const prefixes: Record<TokenKind, string> = { temporary: "bmg_tt_", access: "bmg_at_", refresh: "bmg_rt_" }

/** A new token of a kind: prefix + 43 base64url characters of 32 random bytes. */
export const newToken = (kind: TokenKind): string => prefixes[kind] + randomBytes(32).toString("base64url")

/** ≥ 128 random bits for sign-in states and their cookies (here 256). */
export const newSecret = (): string => randomBytes(32).toString("base64url")

/** How every secret is stored and looked up. */
export const sha256Hex = (value: string): string => createHash("sha256").update(value, "utf8").digest("hex")

/** The store's notion of now (Clock, so TestClock drives expiry in tests). */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** A token to store: the plaintext is hashed by the store and never kept. */
export interface NewToken {
  readonly token: string
  readonly issuedAt: Date
  readonly expiresAt: Date
}

/** The platform's OAuth tokens of a family, as ciphertexts (aad `family:<id>:platform_access|refresh`). */
export interface PlatformTokensEnc {
  readonly accessEnc: string
  readonly refreshEnc: string
  readonly expiresAt: Date
}

export interface SignInStateInput {
  readonly state: string
  readonly cookie: string
  readonly redirectUri: string
  readonly clientState: string | undefined
  readonly clientCodeChallenge: string | undefined
  /** aad `sign_in_state:<sha256(state)>:platform_verifier`. */
  readonly platformVerifierEnc: string
  readonly expiresAt: Date
}

export interface SignInState {
  readonly stateHash: string
  readonly redirectUri: string
  readonly clientState: string | undefined
  readonly clientCodeChallenge: string | undefined
  readonly platformVerifierEnc: string
}

/** Why a sign-in state was refused (all of them are a 400, and the platform is not called). */
export type SignInStateRefusal = "unknown" | "used" | "expired" | "cookie"

export type ConsumeStateResult =
  | { readonly _tag: "Consumed"; readonly state: SignInState }
  | { readonly _tag: "Refused"; readonly reason: SignInStateRefusal }

export interface PlatformUserRow {
  readonly id: string
  readonly username: string
  readonly discriminator: string
  readonly globalName: string | null
  readonly avatar: string | null
  readonly locale: string
}

export type ConsumeTemporaryResult =
  | { readonly _tag: "Consumed"; readonly familyId: string; readonly codeChallenge: string | undefined }
  /** Second use: the caller revokes the family. */
  | { readonly _tag: "Replayed"; readonly familyId: string }
  | { readonly _tag: "Invalid" }

export type RotateResult =
  | { readonly _tag: "Rotated"; readonly familyId: string }
  /** The refresh token was already rotated: the store has revoked the family. */
  | { readonly _tag: "Reused"; readonly familyId: string; readonly revoked: RevokedFamily | undefined }
  /**
   * The refresh token was rotated less than `REFRESH_RACE_GRACE_MS` ago (a client racing its own
   * refreshes): refused, and nothing is revoked, so the client keeps the winner's pair.
   */
  | { readonly _tag: "Raced"; readonly familyId: string }
  | { readonly _tag: "Invalid" }

/** What storage reports of a rotation; deciding what a reuse means is `TokenStore.fromStorage`'s. */
export type RotateAttempt =
  | { readonly _tag: "Rotated"; readonly familyId: string }
  /** The refresh token was already rotated once, at `rotatedAt` (even if its family is revoked since). */
  | { readonly _tag: "AlreadyRotated"; readonly familyId: string; readonly rotatedAt: Date }
  | { readonly _tag: "Invalid" }

export interface TokenInfo {
  /** The token's family (sign-in). */
  readonly familyId: string
  readonly issuedAt: Date
  readonly expiresAt: Date
  readonly expired: boolean
}

/** How long after its rotation a refresh token presented again is a race, not a theft (decisions.md). */
export const REFRESH_RACE_GRACE_MS = 10_000

/** A family that was just revoked, with its platform tokens (for a best-effort revoke there). */
export interface RevokedFamily {
  readonly familyId: string
  readonly platform: PlatformTokensEnc | undefined
}

export interface TokenStoreShape {
  /** The principal of a live access token; `undefined` when unknown, expired or revoked. */
  readonly resolveAccess: (token: string) => Effect.Effect<Principal | undefined, ServiceUnavailable>
  /**
   * The family of a gateway token of any kind that is unexpired, not revoked, and of a live family
   * (a refresh token already rotated included); `undefined` otherwise. The `/auth` rate limit's key.
   */
  readonly familyOf: (token: string) => Effect.Effect<string | undefined, ServiceUnavailable>

  /** Stores a sign-in state (hashed state and cookie). */
  readonly createSignInState: (input: SignInStateInput) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Consumes a sign-in state in one statement: only when known, unused, unexpired and bound to this
   * cookie. A refusal for a wrong cookie does not consume it.
   */
  readonly consumeSignInState: (
    state: string,
    cookie: string | undefined
  ) => Effect.Effect<ConsumeStateResult, ServiceUnavailable>

  /** One transaction: upsert the user, create the family with its platform tokens, store the temporary token. */
  readonly createFamily: (input: {
    readonly familyId: string
    readonly user: PlatformUserRow
    readonly platform: PlatformTokensEnc
    readonly temporary: NewToken
    readonly codeChallenge: string | undefined
  }) => Effect.Effect<void, ServiceUnavailable>
  /** Marks the temporary token used (one statement); a second use reports `Replayed`. */
  readonly consumeTemporary: (token: string) => Effect.Effect<ConsumeTemporaryResult, ServiceUnavailable>
  /** Adds an access and refresh token to a live family. */
  readonly issuePair: (
    familyId: string,
    pair: { readonly access: NewToken; readonly refresh: NewToken }
  ) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Rotation in one transaction: marks the refresh token used (`UPDATE … WHERE used_at IS NULL`),
   * revokes the family's access tokens, stores the new pair. An already-rotated token: `Raced` or `Reused` (fromStorage).
   */
  readonly rotateRefresh: (
    refreshToken: string,
    next: { readonly access: NewToken; readonly refresh: NewToken }
  ) => Effect.Effect<RotateResult, ServiceUnavailable>
  /** An access token of a live family: its times; `undefined` when unknown or revoked. */
  readonly checkAccess: (token: string) => Effect.Effect<TokenInfo | undefined, ServiceUnavailable>
  /** Revokes the family of an access token (expired ones too); `undefined` when unknown or already revoked. */
  readonly revokeByAccess: (token: string) => Effect.Effect<RevokedFamily | undefined, ServiceUnavailable>
  /** Revokes a family and every token of it; `undefined` when unknown or already revoked. */
  readonly revokeFamily: (familyId: string) => Effect.Effect<RevokedFamily | undefined, ServiceUnavailable>

  /**
   * The platform tokens of a live family. `fresh`: read from storage itself, past any cache (a
   * caller waiting for another instance's refresh).
   */
  readonly platformTokens: (
    familyId: string,
    options?: { readonly fresh?: boolean }
  ) => Effect.Effect<PlatformTokensEnc | undefined, ServiceUnavailable>
  /**
   * Claims the refresh of a family's platform tokens until `until` (a lease shared by every
   * instance): only while they are still `previousAccessEnc` and no unexpired claim exists; whether
   * this caller got it. A replacement ends the claim; `releasePlatformRefresh` ends a failed one.
   */
  readonly claimPlatformRefresh: (
    familyId: string,
    previousAccessEnc: string,
    until: Date
  ) => Effect.Effect<boolean, ServiceUnavailable>
  /** Ends this caller's claim (the one that lasts until `until`), if it still holds. */
  readonly releasePlatformRefresh: (familyId: string, until: Date) => Effect.Effect<void, ServiceUnavailable>
  /** Replaces them only if they are still `previousAccessEnc` (compare-and-set); whether it did. Ends any claim. */
  readonly replacePlatformTokens: (
    familyId: string,
    previousAccessEnc: string,
    next: PlatformTokensEnc
  ) => Effect.Effect<boolean, ServiceUnavailable>
}

/** What a storage layer implements: the same operations, but a reused refresh token is only reported. */
export interface TokenStorage extends Omit<TokenStoreShape, "rotateRefresh"> {
  /** As `rotateRefresh`, with no consequence for a token already rotated: `AlreadyRotated`. */
  readonly rotateRefresh: (
    refreshToken: string,
    next: { readonly access: NewToken; readonly refresh: NewToken }
  ) => Effect.Effect<RotateAttempt, ServiceUnavailable>
}

// Stryker disable next-line StringLiteral: the service's key; any unique string serves
export class TokenStore extends Context.Service<TokenStore, TokenStoreShape>()("gateway/TokenStore") {
  /**
   * A storage with the token policy that is not storage's to decide: a refresh token presented
   * again within `REFRESH_RACE_GRACE_MS` of its rotation is a client racing its own refreshes
   * (refused, nothing revoked); later, it was copied, so its whole family is revoked (RFC 9700
   * §4.14.2). A temporary token used twice is the caller's to handle (Auth revokes on `Replayed`).
   */
  static readonly fromStorage = (storage: TokenStorage, graceMs: number = REFRESH_RACE_GRACE_MS): TokenStoreShape =>
    TokenStore.of({
      ...storage,
      rotateRefresh: (refreshToken, next) =>
        Effect.flatMap(storage.rotateRefresh(refreshToken, next), (attempt): Effect.Effect<RotateResult, ServiceUnavailable> => {
          if (attempt._tag !== "AlreadyRotated") return Effect.succeed(attempt)
          return Effect.flatMap(now, (at) =>
            // A clock a little behind the rotating instance's (elapsed < 0) is still inside the grace.
            at.getTime() - attempt.rotatedAt.getTime() < graceMs
              ? Effect.succeed<RotateResult>({ _tag: "Raced", familyId: attempt.familyId })
              : Effect.map(storage.revokeFamily(attempt.familyId), (revoked): RotateResult => ({
                _tag: "Reused",
                familyId: attempt.familyId,
                revoked
              })))
        })
    })
}
