/**
 * The uncertain sends of DeliveryStoreSql (DeliveryReconcile.ts): deliveries left `sending`, with
 * what it takes to look for them in their channel (the webhook's channel, the bot's token decrypted
 * here with the Cipher, only for that read), and the message ids sent deliveries recorded.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { PlatformWebhookBody } from "../../services/platform/ChatPlatform.ts"
import { Cipher } from "../../services/infra/Cipher.ts"
import type { DeliveryStore, UncertainDelivery } from "../../services/delivery/DeliveryStore.ts"
import { crosspostColumn, feedRefColumns, feedRefJoins, OpenRow, readBody, toFeedRef } from "./DeliveryRows.ts"
import { run } from "./DeliveryStoreRun.ts"

type UncertainCalls = Pick<DeliveryStore["Service"], "uncertainSends" | "markUncertain" | "reclaim" | "recordedMessageIds">

const UncertainRow = Schema.Struct({
  ...OpenRow.fields,
  sent_at: Schema.Date,
  // Not `reason`: feedRefColumns has the feed's own (its status).
  send_reason: Schema.NullOr(Schema.String),
  webhook_channel_id: Schema.String,
  bot_token_enc: Schema.NullOr(Schema.String)
})
const decodeUncertain = Schema.decodeUnknownEffect(Schema.Array(UncertainRow))

export const DeliveryUncertainSql: Effect.Effect<UncertainCalls, never, SqlClient.SqlClient | Cipher> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* Cipher

  /** A secret decrypted, or null (logged) when the configured keys cannot. */
  const decrypt = (enc: string | null, context: string, what: string) =>
    enc === null ? Effect.succeed(null) : cipher.decrypt(enc, context).pipe(
      Effect.map((t): Redacted.Redacted<string> | null => t),
      Effect.catch((e) => Effect.as(Effect.logError(`${what} does not decrypt: ${e.message}`), null))
    )

  const uncertainSends = (webhookId: string) =>
    run(
      Effect.gen(function*() {
        const rows = yield* sql`SELECT d.id, d.item_id, d.webhook_id, d.body, d.attempts, d.at AS sent_at, d.reason AS send_reason,
            f.webhook_token_enc, f.webhook_id AS feed_webhook_id, f.webhook_channel_id, b.token_enc AS bot_token_enc,
            ${sql.literal(crosspostColumn)},
            ${sql.literal(feedRefColumns)}
          FROM feed_deliveries d JOIN feeds f ON f.id = d.feed_id ${sql.literal(feedRefJoins)}
          WHERE d.webhook_id = ${webhookId} AND d.state = 'sending'
          ORDER BY d.event_at, d.id`.pipe(Effect.flatMap(decodeUncertain))
        return yield* Effect.forEach(rows, (row) =>
          Effect.gen(function*() {
            const webhookToken = yield* decrypt(row.webhook_token_enc, `feed-webhook:${row.feed_webhook_id}`, `feed ${row.feed_id}: the webhook token`)
            const botToken = yield* decrypt(row.bot_token_enc, `bot:${row.bot_id}:token`, `bot ${row.bot_id}: the token`)
            return {
              id: String(row.id),
              itemId: row.item_id,
              webhookId: row.webhook_id,
              body: Option.getOrNull(readBody(row.body)) as PlatformWebhookBody | null,
              attempts: Number(row.attempts),
              feed: toFeedRef(row),
              webhookToken,
              crosspost: row.crosspost,
              sentAt: row.sent_at,
              reason: row.send_reason,
              channelId: row.webhook_channel_id,
              botToken
            } satisfies UncertainDelivery
          }))
      }),
      "uncertainSends"
    )

  return {
    uncertainSends,
    markUncertain: (deliveryId, reason) =>
      run(
        sql`UPDATE feed_deliveries SET reason = ${reason} WHERE id = ${deliveryId} AND state = 'sending'`.pipe(Effect.asVoid),
        "markUncertain"
      ),
    reclaim: (deliveryId) =>
      run(
        sql`UPDATE feed_deliveries SET attempts = attempts + 1, at = now()
          WHERE id = ${deliveryId} AND state = 'sending' RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),
        "reclaim"
      ),
    recordedMessageIds: (webhookId, messageIds) =>
      messageIds.length === 0 ? Effect.succeed(new Set<string>()) : run(
        sql<{ message_id: string }>`SELECT message_id FROM feed_deliveries
          WHERE webhook_id = ${webhookId} AND state = 'sent' AND message_id IN ${sql.in(messageIds)}`.pipe(Effect.map((rows) => new Set(rows.map((r) => r.message_id)))),
        "recordedMessageIds"
      )
  }
})
