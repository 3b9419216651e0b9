/**
 * The feeds half of DeliveryStoreSql: the feeds of a source, their delivery log (`feed_deliveries`:
 * pending → sending → sent or failed), their status and counters (`feed_status`), and retention.
 * Statements run on the ambient SqlClient, as DeliveryStoreSql.ts says. Webhook tokens are decrypted
 * here, with the Cipher, only for the delivery about to be sent. The triggers on those two tables, as
 * the database has them now: DeliveryFeedsSql.functions.sql.
 */
import { Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Cipher } from "../../services/infra/Cipher.ts"
import type { DeliveryBody, DeliverySource, DeliveryStore, FeedState, NewDelivery } from "../../services/delivery/DeliveryStore.ts"
import {
  chunks,
  crosspostColumn,
  decodeFeeds,
  decodeOpen,
  decodeRefs,
  decodeStatus,
  feedRefColumns,
  feedRefJoins,
  nonEmpty,
  readBody,
  toFeed,
  toFeedRef,
  toStatus
} from "./DeliveryRows.ts"
import { run } from "./DeliveryStoreRun.ts"

type FeedCalls = Pick<
  DeliveryStore["Service"],
  | "feedsOfSource"
  | "insertDeliveries"
  | "nextPending"
  | "claim"
  | "markSent"
  | "markRetry"
  | "markFailed"
  | "failPending"
  | "webhooksWithPending"
  | "setFeedState"
  | "status"
  | "retention"
>

export const DeliveryFeedsSql: Effect.Effect<FeedCalls, never, SqlClient.SqlClient | Cipher> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* Cipher

  const feedsOfSource = (source: Pick<DeliverySource, "module" | "identifier">) =>
    run(
      sql`SELECT ${sql.literal(feedRefColumns)}, f.created_at, f.webhook_options, f.display_info, f.webhook_id, f.forum_tags
        FROM feeds f ${sql.literal(feedRefJoins)}
        WHERE f.module = ${source.module} AND f.feed_identifier = ${source.identifier}
        ORDER BY f.id`.pipe(Effect.flatMap(decodeFeeds), Effect.map((rows) => rows.map(toFeed))),
      "feedsOfSource"
    )

  /** Adds to the counters of feeds, creating their status rows. */
  const bump = (feedId: string, column: "delivered" | "skipped", n: number, lastDelivery: Date | null = null) =>
    sql`INSERT INTO feed_status (feed_id, ${sql.literal(column)}, last_delivery_at) VALUES (${feedId}, ${n}, ${lastDelivery})
      ON CONFLICT (feed_id) DO UPDATE SET ${sql.literal(column)} = feed_status.${sql.literal(column)} + EXCLUDED.${sql.literal(column)},
        last_delivery_at = COALESCE(EXCLUDED.last_delivery_at, feed_status.last_delivery_at), updated_at = now()`

  const insertDeliveries = (rows: ReadonlyArray<NewDelivery>) =>
    rows.length === 0 ? Effect.succeed([]) : run(
      Effect.gen(function*() {
        const inserted = (yield* Effect.forEach(chunks(rows), (part) =>
          sql<{ feed_id: bigint | number | string; item_id: string }>`INSERT INTO feed_deliveries ${
          sql.insert(nonEmpty(part.map((r) => ({
            feed_id: r.feedId,
            webhook_id: r.webhookId,
            item_id: r.itemId,
            title: r.title,
            url: r.url,
            event_at: r.eventAt,
            state: r.state,
            reason: r.reason,
            body: r.body === null ? null : JSON.stringify(r.body)
          }))))
        }
          ON CONFLICT (feed_id, item_id) DO NOTHING RETURNING feed_id, item_id`)).flat()
        const keys = new Set(inserted.map((r) => `${r.feed_id}\u0000${r.item_id}`))
        const kept = rows.filter((r) => keys.has(`${r.feedId}\u0000${r.itemId}`))
        const skips = new Map<string, number>()
        for (const r of kept) if (r.state === "skipped") skips.set(r.feedId, (skips.get(r.feedId) ?? 0) + 1)
        for (const [feedId, n] of skips) yield* bump(feedId, "skipped", n)
        return kept
      }),
      "insertDeliveries"
    )

  const nextPending = (webhookId: string) =>
    run(
      Effect.gen(function*() {
        const rows = yield* sql`SELECT d.id, d.item_id, d.webhook_id, d.body, d.attempts, f.webhook_token_enc,
            f.webhook_id AS feed_webhook_id, ${sql.literal(crosspostColumn)}, ${sql.literal(feedRefColumns)}
          FROM feed_deliveries d JOIN feeds f ON f.id = d.feed_id ${sql.literal(feedRefJoins)}
          WHERE d.webhook_id = ${webhookId} AND d.state = 'pending' AND COALESCE(s.state, 'active') <> 'disabled'
          ORDER BY d.event_at, d.id
          LIMIT 1`.pipe(Effect.flatMap(decodeOpen))
        const row = rows[0]
        if (row === undefined) return Option.none()
        const token = yield* cipher.decrypt(row.webhook_token_enc, `feed-webhook:${row.feed_webhook_id}`).pipe(
          Effect.map((t): Redacted.Redacted<string> | null => t),
          Effect.catch((e) => Effect.as(Effect.logError(`feed ${row.feed_id}: the webhook token does not decrypt: ${e.message}`), null))
        )
        return Option.some({
          id: String(row.id),
          itemId: row.item_id,
          webhookId: row.webhook_id,
          body: Option.getOrNull(readBody(row.body)) as DeliveryBody | null,
          attempts: Number(row.attempts),
          feed: toFeedRef(row),
          webhookToken: token,
          crosspost: row.crosspost
        })
      }),
      "nextPending"
    )

  const setFeedState = (feedIds: ReadonlyArray<string>, from: ReadonlyArray<FeedState>, to: FeedState, reason: string | null) =>
    feedIds.length === 0 || from.length === 0 ? Effect.succeed([]) : run(
      Effect.gen(function*() {
        // Rows for feeds without one, so the update below sees every feed (a missing row is active).
        if (from.includes("active")) {
          yield* sql`INSERT INTO feed_status (feed_id) SELECT id FROM feeds WHERE id IN ${sql.in(feedIds)}
            ON CONFLICT (feed_id) DO NOTHING`
        }
        const rows = yield* sql`WITH changed AS (
            SELECT feed_id, state AS previous FROM feed_status
            WHERE feed_id IN ${sql.in(feedIds)} AND state IN ${sql.in(from)} FOR UPDATE
          ), updated AS (
            UPDATE feed_status s SET state = ${to}, reason = ${reason}, updated_at = now()
            FROM changed WHERE s.feed_id = changed.feed_id
            RETURNING s.feed_id, changed.previous
          )
          SELECT ${sql.literal(feedRefColumns)}, u.previous
          FROM updated u JOIN feeds f ON f.id = u.feed_id ${sql.literal(feedRefJoins)}
          ORDER BY f.id`.pipe(Effect.flatMap(decodeRefs))
        // The joined status is the snapshot before the update: report the new state.
        return rows.map((r) => ({ feed: { ...toFeedRef(r), state: to, reason }, previous: r.previous }))
      }),
      "setFeedState"
    )

  return {
    feedsOfSource,
    insertDeliveries,
    nextPending,
    claim: (deliveryId) =>
      run(
        sql`UPDATE feed_deliveries SET state = 'sending', attempts = attempts + 1, at = now()
          WHERE id = ${deliveryId} AND state = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),
        "claim"
      ),
    markSent: (deliveryId, messageId, at) =>
      run(
        sql.withTransaction(Effect.gen(function*() {
          // Sent is the truth once the platform answered, whatever an impatient sweep wrote meanwhile.
          const rows = yield* sql<{ feed_id: bigint | number | string }>`UPDATE feed_deliveries
            SET state = 'sent', message_id = ${messageId}, reason = NULL, at = ${at}
            WHERE id = ${deliveryId} AND state <> 'sent' RETURNING feed_id`
          for (const r of rows) yield* bump(String(r.feed_id), "delivered", 1, at)
        })),
        "markSent"
      ),
    markRetry: (deliveryId, reason) =>
      run(
        sql`UPDATE feed_deliveries SET state = 'pending', reason = ${reason}, at = now()
          WHERE id = ${deliveryId} AND state = 'sending'`.pipe(Effect.asVoid),
        "markRetry"
      ),
    markFailed: (deliveryId, reason) =>
      run(
        sql`UPDATE feed_deliveries SET state = 'failed', reason = ${reason}, at = now()
          WHERE id = ${deliveryId} AND state IN ('pending', 'sending')`.pipe(Effect.asVoid),
        "markFailed"
      ),
    failPending: (feedId, reason) =>
      run(
        sql`UPDATE feed_deliveries SET state = 'failed', reason = ${reason}, at = now()
          WHERE feed_id = ${feedId} AND state = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length)),
        "failPending"
      ),
    webhooksWithPending: (before, limit) =>
      run(
        sql<{ webhook_id: string }>`SELECT DISTINCT webhook_id FROM feed_deliveries
          WHERE state IN ('pending', 'sending') AND webhook_id IS NOT NULL AND at < ${before}
          LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map((r) => r.webhook_id))),
        "webhooksWithPending"
      ),
    setFeedState,
    status: (feedId) =>
      run(
        sql`SELECT COALESCE(s.state, 'active') AS state, s.reason, COALESCE(s.delivered, 0) AS delivered,
            COALESCE(s.skipped, 0) AS skipped, COALESCE(s.not_crossposted, 0) AS not_crossposted, s.last_delivery_at,
            src.last_poll_at, src.next_poll_at
          FROM feeds f LEFT JOIN feed_status s ON s.feed_id = f.id
          LEFT JOIN feed_sources src ON src.module = f.module AND src.identifier = f.feed_identifier
          WHERE f.id = ${feedId}`.pipe(
          Effect.flatMap(decodeStatus),
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toStatus))
        ),
        "status"
      ),
    retention: ({ deliveriesBefore, seenBefore }) =>
      run(
        Effect.gen(function*() {
          const seen = yield* sql`DELETE FROM feed_seen_items WHERE seen_at < ${seenBefore} RETURNING 1`
          const deliveries = yield* sql`DELETE FROM feed_deliveries
            WHERE at < ${deliveriesBefore} AND state IN ('sent', 'failed', 'skipped') RETURNING 1`
          // A reservation counts for its hour; kept as long as its delivery (whose guard it is).
          yield* sql`DELETE FROM feed_crossposts WHERE at < ${deliveriesBefore}`
          return { seen: seen.length, deliveries: deliveries.length }
        }),
        "retention"
      )
  }
})
