/**
 * Each registered bot's platform application (forms-runtime.md §1): its id (the `{appClientId}` of
 * the interactions URL), its Ed25519 public key (`verify_key`, hex) and the hash of the commands
 * last registered for it. Layer: layers/submissions/BotApplicationsSql.ts.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"

export interface BotApplication {
  readonly botId: string
  readonly applicationId: string
  readonly publicKey: string
  readonly commandsHash: string | null
}

export class BotApplications extends Context.Service<BotApplications, {
  readonly byApplication: (applicationId: string) => Effect.Effect<BotApplication | undefined, ServiceUnavailable>
  readonly byBot: (botId: string) => Effect.Effect<BotApplication | undefined, ServiceUnavailable>
  /** Stores what `GET /applications/@me` answered for a registered bot (false: no such bot). */
  readonly record: (botId: string, application: { readonly id: string; readonly verifyKey: string }) => Effect.Effect<boolean, ServiceUnavailable>
  readonly setCommandsHash: (botId: string, hash: string) => Effect.Effect<void, ServiceUnavailable>
}>()("gateway/BotApplications") {}
