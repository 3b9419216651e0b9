/**
 * A sign-in's family as the Auth pieces share it: the platform tokens sealed under the family's
 * aad, and the revocation of a family (here, then best effort at the platform).
 */
import { Effect } from "effect"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import type { PlatformTokens } from "../platform/ChatPlatform.ts"
import { Cipher } from "../infra/Cipher.ts"
import { TokenStore } from "./TokenStore.ts"
import type { PlatformTokensEnc, RevokedFamily } from "./TokenStore.ts"

/** The aad of a family's platform tokens: a ciphertext cannot be moved to another family or swapped. */
export const familyAad = (familyId: string, which: "platform_access" | "platform_refresh") => `family:${familyId}:${which}`
/** The aad of a sign-in state's PKCE verifier (towards the platform). */
export const verifierAad = (stateHash: string) => `sign_in_state:${stateHash}:platform_verifier`

export const makeFamilies = Effect.gen(function*() {
  const store = yield* TokenStore
  const cipher = yield* Cipher
  const platform = yield* ChatPlatform

  const encryptPlatform = (familyId: string, tokens: PlatformTokens, at: Date) =>
    Effect.gen(function*() {
      return {
        accessEnc: yield* cipher.encrypt(tokens.access_token, familyAad(familyId, "platform_access")),
        refreshEnc: yield* cipher.encrypt(tokens.refresh_token, familyAad(familyId, "platform_refresh")),
        expiresAt: new Date(at.getTime() + tokens.expires_in * 1000)
      } satisfies PlatformTokensEnc
    })

  /** Best effort: the platform token of a revoked family is revoked there too; failures are only logged. */
  const revokeAtPlatform = (revoked: RevokedFamily | undefined) =>
    revoked?.platform === undefined ? Effect.void : cipher.decrypt(
      revoked.platform.accessEnc,
      familyAad(revoked.familyId, "platform_access")
    ).pipe(
      Effect.flatMap(platform.revokeToken),
      // Stryker disable next-line StringLiteral: log text
      Effect.catchCause(() => Effect.logWarning("platform token revocation failed (best effort)")),
      Effect.timeout("10 seconds"),
      Effect.ignore
    )

  const revokeFamily = (familyId: string) => Effect.flatMap(store.revokeFamily(familyId), revokeAtPlatform)

  return { encryptPlatform, revokeAtPlatform, revokeFamily }
})

export type Families = Effect.Success<typeof makeFamilies>
