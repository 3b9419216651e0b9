/** The signed-in user's platform access token (decrypted, refreshed at the platform when expired or refused). */
import { Context, Effect } from "effect"
import type { Redacted } from "effect"
import type { RequestTimeout, ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import type { Principal } from "../../domain/auth/Principal.ts"
import type { PlatformError } from "./ChatPlatform.ts"

type SessionError = Unauthorized | RequestTimeout | ServiceUnavailable

export class PlatformSession extends Context.Service<PlatformSession, {
  readonly userToken: (principal: Principal) => Effect.Effect<Redacted.Redacted<string>, SessionError>
  /** After the platform refused `rejected` (401): a replacement (one refresh at most), or 401 to sign in again. */
  readonly renewUserToken: (
    principal: Principal,
    rejected: Redacted.Redacted<string>
  ) => Effect.Effect<Redacted.Redacted<string>, SessionError>
}>()("gateway/PlatformSession") {}

/**
 * A platform call with the user's token (decisions.md): a 401 on it first renews the token once and
 * calls again; only a second refusal (or a refused renewal) reaches the caller.
 */
export const withUserToken = <A>(
  session: PlatformSession["Service"],
  principal: Principal,
  token: Redacted.Redacted<string>,
  call: (token: Redacted.Redacted<string>) => Effect.Effect<A, PlatformError>
): Effect.Effect<A, PlatformError | SessionError> =>
  call(token).pipe(
    Effect.catchIf(
      (e): e is Extract<PlatformError, { readonly _tag: "PlatformRejected" }> => e._tag === "PlatformRejected" && e.status === 401,
      () => Effect.flatMap(session.renewUserToken(principal, token), call)
    )
  )
