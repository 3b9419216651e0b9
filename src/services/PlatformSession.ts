/** The signed-in user's platform access token (decrypted, refreshed at the platform when expired). */
import { Context } from "effect"
import type { Effect, Redacted } from "effect"
import type { RequestTimeout, ServiceUnavailable, Unauthorized } from "../domain/Errors.ts"
import type { Principal } from "../domain/Principal.ts"

export class PlatformSession extends Context.Service<PlatformSession, {
  readonly userToken: (
    principal: Principal
  ) => Effect.Effect<Redacted.Redacted<string>, Unauthorized | RequestTimeout | ServiceUnavailable>
}>()("gateway/PlatformSession") {}
