/**
 * FeedInsightStore on PostgreSQL / PGlite (feed_deliveries of migration 0005; the log index, the
 * per-feed counts and the cool-downs of migration 0007). A page never counts rows (the count is
 * kept by triggers) and reads only index entries up to its offset, from whichever end of the log
 * is nearer, then the page's own rows. Times are the database's (`now()`), so cool-downs hold
 * across instances whose clocks differ.
 */
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { FeedInsightStore } from "../../services/insight/FeedInsightStore.ts"
import type { LoggedDelivery } from "../../services/insight/FeedInsightStore.ts"
import { Count, Id } from "../delivery/DeliveryRows.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const db = sqlFailure("The delivery log")

const LogRow = Schema.Struct({
  id: Id,
  item_id: Schema.String,
  title: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  state: Schema.Literals(["sent", "failed", "skipped"]),
  reason: Schema.NullOr(Schema.String),
  message_id: Schema.NullOr(Schema.String),
  at: Schema.Date
})
const decodeLog = Schema.decodeUnknownEffect(Schema.Array(LogRow))
const toLogged = (r: typeof LogRow.Type): LoggedDelivery => ({
  id: String(r.id),
  itemId: r.item_id,
  title: r.title,
  url: r.url,
  state: r.state,
  reason: r.reason,
  messageId: r.message_id,
  at: r.at
})

const HistoryRow = Schema.Struct({
  item_id: Schema.String,
  state: Schema.Literals(["pending", "sending", "sent", "failed", "skipped"]),
  reason: Schema.NullOr(Schema.String)
})
const decodeHistory = Schema.decodeUnknownEffect(Schema.Array(HistoryRow))

/** Exactly the predicate of the partial index `feed_deliveries_log`, so the planner uses it. */
const FINISHED = "state IN ('sent', 'failed', 'skipped')"

export const FeedInsightStoreSql = Layer.effect(FeedInsightStore, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /** A row this code wrote that does not decode is a bug: a defect, not an outage. */
  const run = <A, E, R>(self: Effect.Effect<A, E | Schema.SchemaError, R>, span: string) =>
    self.pipe(Effect.catchIf(Schema.isSchemaError, (e) => Effect.die(e)), db, Effect.withSpan(`FeedInsightStore.${span}`))

  /** `limit` rows after skipping `offset`, newest first (`desc`) or oldest first, by (at, id). */
  const slice = (feedId: string, offset: number, limit: number, desc: boolean) => {
    const order = sql.literal(desc ? "at DESC, id DESC" : "at, id")
    return sql`SELECT id, item_id, title, url, state, reason, message_id, at FROM feed_deliveries
      WHERE id IN (
        SELECT id FROM feed_deliveries WHERE feed_id = ${feedId} AND ${sql.literal(FINISHED)}
        ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}
      ) AND feed_id = ${feedId}
      ORDER BY ${order}`.pipe(Effect.flatMap(decodeLog), Effect.map((rows) => rows.map(toLogged)))
  }

  const logPage = (feedId: string, page: number, pageSize: number) =>
    run(
      Effect.gen(function*() {
        const counted = yield* sql<{ n: unknown }>`SELECT n FROM feed_delivery_log_counts WHERE feed_id = ${feedId}`
        const total = Number(yield* Schema.decodeUnknownEffect(Count)(counted[0]?.n ?? 0))
        const offset = (page - 1) * pageSize
        if (offset >= total) return { total, rows: [] }
        if (offset <= total / 2) return { total, rows: yield* slice(feedId, offset, pageSize, true) }
        // The back half: the same rows counted from the oldest end, read oldest first, turned round.
        const end = Math.min(total, offset + pageSize)
        const rows = yield* slice(feedId, total - end, end - offset, false)
        return { total, rows: rows.toReversed() }
      }),
      "logPage"
    )

  const history = (feedId: string, itemIds: ReadonlyArray<string>) =>
    itemIds.length === 0 ? Effect.succeed(new Map()) : run(
      sql`SELECT item_id, state, reason FROM feed_deliveries
        WHERE feed_id = ${feedId} AND item_id IN ${sql.in(itemIds)}`.pipe(
        Effect.flatMap(decodeHistory),
        Effect.map((rows) => new Map(rows.map((r) => [r.item_id, { state: r.state, reason: r.reason }])))
      ),
      "history"
    )

  const cooldown = (key: string, seconds: number) =>
    run(
      Effect.gen(function*() {
        const taken = yield* sql`INSERT INTO feed_insight_cooldowns AS c (key, until)
          VALUES (${key}, now() + ${seconds} * interval '1 second')
          ON CONFLICT (key) DO UPDATE SET until = EXCLUDED.until WHERE c.until <= now()
          RETURNING key`
        if (taken.length > 0) return { _tag: "Taken" } as const
        const left = yield* sql<{ ms: unknown }>`SELECT (extract(epoch FROM until - now()) * 1000)::float8 AS ms
          FROM feed_insight_cooldowns WHERE key = ${key}`
        const ms = Number(left[0]?.ms ?? 0)
        return { _tag: "Busy", retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) } as const
      }),
      "cooldown"
    )

  return FeedInsightStore.of({ logPage, history, cooldown })
}))
