/**
 * The platform access token of a signed-in principal (what PlatformSession hands the Directory):
 * decrypted once per ciphertext, and refreshed at the platform when (nearly) expired, once per
 * family even under concurrency (single flight here, compare-and-set in storage).
 */
import { Deferred, Effect, Exit } from "effect"
import type { Redacted } from "effect"
import { Unauthorized } from "../domain/Errors.ts"
import type { Auth, PlatformTokenError } from "./Auth.ts"
import { familyAad } from "./AuthFamily.ts"
import type { Families } from "./AuthFamily.ts"
import { ChatPlatform } from "./ChatPlatform.ts"
import { Cipher } from "./Cipher.ts"
import { now, TokenStore } from "./TokenStore.ts"

/** A platform token is refreshed when it has less than this left. */
const PLATFORM_SKEW_MS = 60_000

export const makePlatformToken = (families: Families) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const cipher = yield* Cipher
    const platform = yield* ChatPlatform
    const unauthorized = (message: string) => Unauthorized.of(message)
    const inflight = new Map<string, Deferred.Deferred<Redacted.Redacted<string>, PlatformTokenError>>()
    // A ciphertext that no configured key opens (key removed): the user must sign in again.
    const platformDown = (): Effect.Effect<never, Unauthorized> =>
      Effect.fail(unauthorized("The stored chat-platform credentials cannot be read; sign in again."))

    const refreshAtPlatform = (familyId: string): Effect.Effect<Redacted.Redacted<string>, PlatformTokenError> =>
      Effect.gen(function*() {
        const current = yield* store.platformTokens(familyId)
        if (current === undefined) return yield* unauthorized("The sign-in was revoked; sign in again.")
        const at = yield* now
        if (current.expiresAt.getTime() - at.getTime() > PLATFORM_SKEW_MS) {
          return yield* cipher.decrypt(current.accessEnc, familyAad(familyId, "platform_access"))
        }
        const refreshToken = yield* cipher.decrypt(current.refreshEnc, familyAad(familyId, "platform_refresh"))
        const fresh = yield* platform.refreshToken(refreshToken).pipe(
          Effect.catchTag("PlatformRejected", () =>
            // The platform refused the grant (revoked by the user, or expired): the sign-in is over.
            families.revokeFamily(familyId).pipe(
              Effect.andThen(Effect.fail(unauthorized("The chat platform ended this sign-in; sign in again.")))
            ))
        )
        const enc = yield* families.encryptPlatform(familyId, fresh, yield* now)
        const replaced = yield* store.replacePlatformTokens(familyId, current.accessEnc, enc)
        if (!replaced) {
          // Another instance refreshed first: use what it stored.
          const stored = yield* store.platformTokens(familyId)
          if (stored === undefined) return yield* unauthorized("The sign-in was revoked; sign in again.")
          return yield* cipher.decrypt(stored.accessEnc, familyAad(familyId, "platform_access"))
        }
        return fresh.access_token
      }).pipe(Effect.catchTag("CipherError", platformDown))

    const decrypted = new Map<string, { readonly enc: string; readonly token: Redacted.Redacted<string> }>()
    const platformToken: Auth["Service"]["platformToken"] = (principal) =>
      Effect.gen(function*() {
        const current = yield* store.platformTokens(principal.familyId)
        if (current === undefined) return yield* unauthorized("The sign-in was revoked; sign in again.")
        const at = yield* now
        if (current.expiresAt.getTime() - at.getTime() > PLATFORM_SKEW_MS) {
          // A ciphertext (under its family's aad) always decrypts to the same token: decrypt it once.
          const known = decrypted.get(principal.familyId)
          if (known !== undefined && known.enc === current.accessEnc) return known.token
          const token = yield* cipher.decrypt(current.accessEnc, familyAad(principal.familyId, "platform_access")).pipe(
            Effect.catchTag("CipherError", platformDown)
          )
          if (decrypted.size >= 10_000) decrypted.clear()
          decrypted.set(principal.familyId, { enc: current.accessEnc, token })
          return token
        }
        const running = inflight.get(principal.familyId)
        if (running !== undefined) return yield* Deferred.await(running)
        const deferred = Deferred.makeUnsafe<Redacted.Redacted<string>, PlatformTokenError>()
        inflight.set(principal.familyId, deferred)
        return yield* refreshAtPlatform(principal.familyId).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              inflight.delete(principal.familyId)
              Deferred.doneUnsafe(deferred, Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.failCause(exit.cause))
            })
          )
        )
      })

    return platformToken
  })
