/**
 * The bots registry: application id, name, icon, and the bot token (encrypted at rest by the layer).
 * Layers: BotsSql (src/layers/platform/BotsSql.ts), BotsMemory (test/layers).
 */
import { Context } from "effect"
import type { Effect, Redacted } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"

export interface BotRecord {
  readonly id: string
  readonly name: string
  readonly icon: string | null
  readonly token: Redacted.Redacted<string>
}

export class Bots extends Context.Service<Bots, {
  readonly list: Effect.Effect<ReadonlyArray<BotRecord>, ServiceUnavailable>
  readonly get: (id: string) => Effect.Effect<BotRecord | undefined, ServiceUnavailable>
  readonly upsert: (bot: BotRecord) => Effect.Effect<void, ServiceUnavailable>
  readonly remove: (id: string) => Effect.Effect<boolean, ServiceUnavailable>
}>()("gateway/Bots") {}
