/**
 * The audit log: entries written by the forms and feeds services inside their own transactions
 * (the SQL layer writes through the ambient database client, so an append joins the caller's transaction),
 * and the filtered, paginated read of the logs route.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { AuditLogPage, AuditLogQuery, EventType } from "../../domain/audit/AuditLog.ts"
import type { BadRequest, ServiceUnavailable } from "../../domain/infra/Errors.ts"

/** Who acted, as they were at the time (entries keep the name and avatar of that moment). */
export interface Actor {
  readonly userId: string
  readonly userName: string
  readonly avatar: string | null
}

export interface AuditEntryInput {
  readonly botId: string
  readonly serverId: string
  readonly actor: Actor
  readonly module: string
  readonly itemIdentifier: number | null
  readonly eventType: EventType
  readonly eventString: string
}

declare const AuditStoreBrand: unique symbol

/**
 * Names where audit entries are kept, for writers able to add them in their own statements: an
 * opaque identity (equal tokens, one store) made only by the storage layers
 * (src/layers/audit/AuditStoreToken.ts: one per database client), never the storage itself.
 */
export interface AuditStore {
  readonly [AuditStoreBrand]: "AuditStore"
}

export class AuditLog extends Context.Service<AuditLog, {
  /**
   * Where entries are kept, for a writer able to add them in its own statements (AuditLogSql: its
   * client's token; FormsRepo.writesAuditOf). A decorator that changes `append` must not pass it on.
   */
  readonly store?: AuditStore
  readonly append: (entry: AuditEntryInput) => Effect.Effect<void, ServiceUnavailable>
  /** Parses and checks the query (400 naming the parameter), then reads one page, newest first. */
  readonly query: (
    scope: { readonly botId: string; readonly serverId: string },
    query: AuditLogQuery
  ) => Effect.Effect<AuditLogPage, BadRequest | ServiceUnavailable>
}>()("gateway/AuditLog") {}
