/**
 * The platform access token of a signed-in principal (what PlatformSession hands the Directory):
 * decrypted once per ciphertext, and refreshed at the platform when (nearly) expired or when the
 * platform refused it (401), once per family even under concurrency and across instances: single
 * flight here, a claim in storage that the other instances wait out, compare-and-set on the result.
 */
import { Clock, Deferred, Effect, Exit, Redacted } from "effect"
import { ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import type { Principal } from "../../domain/auth/Principal.ts"
import type { PlatformTokenError } from "./Auth.ts"
import { familyAad } from "./AuthFamily.ts"
import type { Families } from "./AuthFamily.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import { Cipher } from "../infra/Cipher.ts"
import { now, TokenStore } from "./TokenStore.ts"
import type { PlatformTokensEnc } from "./TokenStore.ts"

/** A platform token is refreshed when it has less than this left. */
const PLATFORM_SKEW_MS = 60_000
/** How long one instance may hold a family's refresh (the platform call is bounded well within it). */
const CLAIM_MS = 15_000
/** How often an instance waiting for another one's refresh reads the stored tokens again. */
const POLL_MS = 100

type Token = Redacted.Redacted<string>

export const makePlatformToken = (families: Families) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    const cipher = yield* Cipher
    const platform = yield* ChatPlatform
    const unauthorized = (message: string) => Unauthorized.of(message)
    const revoked = () => unauthorized("The sign-in was revoked; sign in again.")
    const inflight = new Map<string, Deferred.Deferred<Token, PlatformTokenError>>()
    const decrypted = new Map<string, { readonly enc: string; readonly token: Token }>()

    // A ciphertext that no configured key opens (key removed, or moved from another sign-in): sign in again.
    const decryptAccess = (familyId: string, enc: string): Effect.Effect<Token, Unauthorized> => {
      // A ciphertext (under its family's aad) always decrypts to the same token: decrypt it once.
      const known = decrypted.get(familyId)
      if (known !== undefined && known.enc === enc) return Effect.succeed(known.token)
      return cipher.decrypt(enc, familyAad(familyId, "platform_access")).pipe(
        Effect.tap((token) =>
          // Stryker disable next-line BlockStatement: cache only; decrypting again gives the same token (the keyring is fixed for the process)
          Effect.sync(() => {
            // Stryker disable next-line ConditionalExpression,EqualityOperator,CallExpression: the cache's memory bound; when it is emptied changes no answer
            if (decrypted.size >= 10_000) decrypted.clear()
            // Stryker disable next-line ObjectLiteral,CallExpression: cache only (see above)
            decrypted.set(familyId, { enc, token })
          })
        ),
        Effect.catchTag("CipherError", () => unreadable)
      )
    }
    const unreadable = Effect.fail(unauthorized("The stored chat-platform credentials cannot be read; sign in again."))

    const due = (tokens: PlatformTokensEnc, atMs: number) => tokens.expiresAt.getTime() - atMs <= PLATFORM_SKEW_MS

    /** Calls the platform under this instance's claim; the new access token. */
    const refreshClaimed = (familyId: string, current: PlatformTokensEnc, until: Date) =>
      Effect.gen(function*() {
        const refreshToken = yield* cipher.decrypt(current.refreshEnc, familyAad(familyId, "platform_refresh")).pipe(
          Effect.catchTag("CipherError", () => unreadable)
        )
        const outcome = yield* platform.refreshToken(refreshToken).pipe(
          Effect.map((tokens) => ({ _tag: "Refreshed" as const, tokens })),
          Effect.catchTag("PlatformRejected", () => Effect.succeed({ _tag: "Refused" as const }))
        )
        if (outcome._tag === "Refused") {
          // Another instance may have refreshed after our claim ran out: then its tokens are the good ones.
          const stored = yield* store.platformTokens(familyId, { fresh: true })
          if (stored !== undefined && stored.accessEnc !== current.accessEnc) return yield* decryptAccess(familyId, stored.accessEnc)
          // The platform refused the grant (revoked by the user, or expired): the sign-in is over.
          yield* families.revokeFamily(familyId)
          return yield* unauthorized("The chat platform ended this sign-in; sign in again.")
        }
        const fresh = outcome.tokens
        const enc = yield* families.encryptPlatform(familyId, fresh, yield* now)
        if (yield* store.replacePlatformTokens(familyId, current.accessEnc, enc)) return fresh.access_token
        // Replaced meanwhile (our claim ran out): use what is stored.
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: the failed replacement above has already dropped any cached copy (TokenStoreCached), so every read here is fresh
        const stored = yield* store.platformTokens(familyId, { fresh: true })
        if (stored === undefined) return yield* revoked()
        return yield* decryptAccess(familyId, stored.accessEnc)
      }).pipe(
        // On a fault (timeout, 5xx) or an interruption the next request may try at once instead of
        // waiting the claim out (a successful replacement has ended it already).
        Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Effect.ignore(store.releasePlatformRefresh(familyId, until)))
      )

    /**
     * A usable token for the family: the stored one unless it is due (or is `rejectedEnc`, refused by
     * the platform); otherwise one refresh, by this instance if it gets the claim, else by the one
     * that holds it (waited for; a claim that ran out is taken over; past CLAIM_MS + 5 s, a 503).
     */
    const refresh = (familyId: string, rejectedEnc: string | undefined): Effect.Effect<Token, PlatformTokenError> =>
      Effect.gen(function*() {
        const deadline = (yield* now).getTime() + CLAIM_MS + 5_000
        while (true) {
          const current = yield* store.platformTokens(familyId, { fresh: true })
          if (current === undefined) return yield* revoked()
          const at = yield* now
          const usable = rejectedEnc === undefined ? !due(current, at.getTime()) : current.accessEnc !== rejectedEnc
          if (usable) return yield* decryptAccess(familyId, current.accessEnc)
          const until = new Date(at.getTime() + CLAIM_MS)
          if (yield* store.claimPlatformRefresh(familyId, current.accessEnc, until)) {
            return yield* refreshClaimed(familyId, current, until)
          }
          if (at.getTime() > deadline) {
            return yield* ServiceUnavailable.of("The chat platform's token is being refreshed by another instance; retry.", 5)
          }
          yield* Effect.sleep(POLL_MS)
        }
      })

    /** One refresh at a time per family on this instance: concurrent callers share its outcome. */
    const singleFlight = (familyId: string, rejectedEnc: string | undefined): Effect.Effect<Token, PlatformTokenError> =>
      Effect.suspend(() => {
        const running = inflight.get(familyId)
        if (running !== undefined) return Deferred.await(running)
        const deferred = Deferred.makeUnsafe<Token, PlatformTokenError>()
        inflight.set(familyId, deferred)
        return refresh(familyId, rejectedEnc).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              inflight.delete(familyId)
              Deferred.doneUnsafe(deferred, Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.failCause(exit.cause))
            })
          )
        )
      })

    // One step, no Effect.gen: on S1's path for every cached read (a kept ciphertext, decrypted once).
    const platformToken = (principal: Principal): Effect.Effect<Token, PlatformTokenError> =>
      Effect.flatMap(store.platformTokens(principal.familyId), (current) =>
        current === undefined
          ? Effect.fail(revoked())
          : Effect.withFiber((fiber) => {
            const at = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
            return due(current, at)
              ? singleFlight(principal.familyId, undefined)
              : decryptAccess(principal.familyId, current.accessEnc)
          }))

    /** After the platform refused `rejected` (401): the stored token if another request replaced it already, else one refresh. */
    const renewPlatformToken = (principal: Principal, rejected: Token): Effect.Effect<Token, PlatformTokenError> =>
      Effect.gen(function*() {
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: a cached copy equal to `rejected` leads to refresh(), whose fresh read answers the stored token alike
        const current = yield* store.platformTokens(principal.familyId, { fresh: true })
        if (current === undefined) return yield* revoked()
        const token = yield* decryptAccess(principal.familyId, current.accessEnc)
        if (Redacted.value(token) !== Redacted.value(rejected)) return token
        return yield* singleFlight(principal.familyId, current.accessEnc)
      })

    return { platformToken, renewPlatformToken }
  })
