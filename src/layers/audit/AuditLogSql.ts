/**
 * The AuditLog on SQL. Appends are one INSERT on the ambient SqlClient (so they join the caller's
 * transaction); the triggers of migration 0004 keep `audit_counts` exact in that same transaction.
 * audit_page and those triggers, as the database has them now: AuditLogSql.functions.sql.
 * Writers on the same client (FormsRepoSql) add entries in their own statements (`store`: the
 * client's token of AuditStoreToken.ts, which they hold too).
 *
 * A page is one statement, `audit_page` of migration 0010 (0012: planned once per connection, one
 * query per level of the walk), which never counts or skips more than AUDIT_DENSE entries, or one
 * hour, through the index:
 * - count: whole buckets inside the time range are summed from `audit_count_shards` (over the shards); a bucket cut by
 *   `start` or `end` is split into its children while it is dense, else counted on the index;
 * - page: bucket counts are walked newest first down to one sparse bucket or hour, which is read
 *   from its end with the (server, bot[, module], at DESC, id DESC) index and an OFFSET inside it.
 * It reads every count and the page from one snapshot, so they agree.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { AuditLogPage, EventType } from "../../domain/audit/AuditLog.ts"
import { AuditLog } from "../../services/audit/AuditLog.ts"
import type { AuditEntryInput } from "../../services/audit/AuditLog.ts"
import { type ParsedAuditQuery, pageMax, parseAuditQuery, toWire } from "../../services/audit/AuditQuery.ts"
import { auditStoreToken } from "./AuditStoreToken.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

interface Row {
  readonly id: bigint
  readonly at: Date
  readonly user_id: string
  readonly user_name: string
  readonly user_avatar: string | null
  readonly module_name: string
  readonly item_identifier: bigint | null
  readonly event_type: EventType
  readonly event_string: string
}

/** A row of `audit_page`: the query's total and whether the page was located, with an entry or none. */
interface PageRow extends Omit<Row, "id"> {
  readonly total: bigint
  readonly located: boolean
  readonly id: bigint | null
}

// An entry describes data the database already accepted, and query parameters are checked against
// fixed lists first: a value refused here would be our bug, not the client's.
const db = sqlFailure("The audit log")

/** An entry's columns, for `append` and for writers that add entries in their own statements (SubmissionsRepoSql). */
export const entryColumns = (sql: SqlClient.SqlClient) =>
  sql`(bot_id, server_id, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)`

/** An entry's values, in `entryColumns`' order. */
export const entryValues = (sql: SqlClient.SqlClient, entry: AuditEntryInput) =>
  sql`${entry.botId}, ${entry.serverId}, ${entry.actor.userId}, ${entry.actor.userName}, ${entry.actor.avatar},
    ${entry.module}, ${entry.itemIdentifier}, ${entry.eventType}, ${entry.eventString}`

export const AuditLogSql = Layer.effect(
  AuditLog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const read = (scope: { readonly botId: string; readonly serverId: string }, q: ParsedAuditQuery) =>
      Effect.gen(function*() {
        const offset = (q.page - 1) * q.pageSize
        // Past any count the log can hold, an offset is just "past the end" (the page is then empty).
        const skip = Math.min(offset, Number.MAX_SAFE_INTEGER)
        const rows = yield* sql<PageRow>`SELECT * FROM audit_page(${scope.serverId}, ${scope.botId}, ${q.module ?? null},
          ${q.start === undefined ? null : new Date(q.start)}, ${q.end === undefined ? null : new Date(q.end)},
          ${skip}::int8, ${q.pageSize})`
        const total = Number(rows[0]?.total ?? 0)
        const page = (entries: ReadonlyArray<Row>): AuditLogPage => ({
          logs: entries.map((r) =>
            toWire({
              id: r.id,
              at: r.at,
              userId: r.user_id,
              userName: r.user_name,
              userAvatar: r.user_avatar,
              module: r.module_name,
              itemIdentifier: r.item_identifier,
              eventType: r.event_type,
              eventString: r.event_string
            })
          ),
          page: q.page,
          page_size: q.pageSize,
          page_max: pageMax(total, q.pageSize)
        })
        if (rows[0]?.located !== false) return page(rows.filter((r): r is PageRow & Row => r.id !== null))
        // Counts and entries disagreed (not expected: one snapshot): the exact, slower path.
        yield* Effect.logWarning("audit counts and entries disagreed; reading with OFFSET", { offset })
        return page(
          yield* sql<Row>`SELECT id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string
            FROM audit_entries WHERE ${
            sql.and([
              sql`server_id = ${scope.serverId}`,
              sql`bot_id = ${scope.botId}`,
              ...(q.module === undefined ? [] : [sql`module_name = ${q.module}`]),
              ...(q.start === undefined ? [] : [sql`at >= ${new Date(q.start)}`]),
              ...(q.end === undefined ? [] : [sql`at <= ${new Date(q.end)}`])
            ])
          } ORDER BY at DESC, id DESC LIMIT ${q.pageSize} OFFSET ${offset}`
        )
      })

    return AuditLog.of({
      // Writers on this client (FormsRepoSql) add their entries in their own statements.
      store: auditStoreToken(sql),
      append: (entry) =>
        sql`INSERT INTO audit_entries ${entryColumns(sql)} VALUES (${entryValues(sql, entry)})`.pipe(
          Effect.asVoid,
          db,
          Effect.withSpan("AuditLog.append")
        ),
      query: (scope, query) =>
        Effect.fromResult(parseAuditQuery(query)).pipe(
          Effect.flatMap((q) => db(read(scope, q))),
          Effect.withSpan("AuditLog.query")
        )
    })
  })
)
