/**
 * Where a form was published (forms-runtime.md §2): its start messages, one row per message, deleted
 * with their form. Layer: layers/submissions/PublicationsRepoSql.ts.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"

export interface StoredPublication {
  readonly workflowId: number
  readonly channelId: string
  readonly messageId: string
  readonly createdAt: Date
}

export class PublicationsRepo extends Context.Service<PublicationsRepo, {
  /** Records a posted start message; `within` joins the transaction (the audit entry). */
  readonly add: <E, R>(p: Omit<StoredPublication, "createdAt">, within: Effect.Effect<void, E, R>) => Effect.Effect<StoredPublication, E | ServiceUnavailable, R>
  /** Newest first. */
  readonly list: (workflowId: number) => Effect.Effect<ReadonlyArray<StoredPublication>, ServiceUnavailable>
  readonly find: (workflowId: number, messageId: string) => Effect.Effect<StoredPublication | undefined, ServiceUnavailable>
  /** Removes the row; `within` joins the transaction (the audit entry). */
  readonly remove: <E, R>(workflowId: number, messageId: string, within: Effect.Effect<void, E, R>) => Effect.Effect<void, E | ServiceUnavailable, R>
}>()("gateway/PublicationsRepo") {}
