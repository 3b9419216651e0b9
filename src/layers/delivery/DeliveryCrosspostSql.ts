/**
 * The crossposts of DeliveryStoreSql (migration 0021; delivery.md §10 `crosspost`): the budget of
 * an announcement channel, reserved per delivery, and the count of deliveries posted but not
 * crossposted. A reservation runs in a transaction of its own that holds a lock of its channel
 * (an advisory lock on the channel's id, so no row has to exist first): the reservations are read,
 * judged by CrosspostBudget.ts, and written under it, so two workers posting different feeds into
 * one channel never both take its 10th slot. The delivery's id is the table's key: a delivery is
 * reserved once. The feed's bot token is decrypted here with the Cipher, only for the publication.
 */
import { Effect, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Cipher } from "../../services/infra/Cipher.ts"
import { CROSSPOST_WINDOW_MS, decideCrosspost } from "../../services/delivery/CrosspostBudget.ts"
import type { CrosspostReservation, DeliveryStore } from "../../services/delivery/DeliveryStore.ts"
import { Count } from "./DeliveryRows.ts"
import { run } from "./DeliveryStoreRun.ts"

type CrosspostCalls = Pick<DeliveryStore["Service"], "reserveCrosspost" | "notCrossposted">

const decodeTarget = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  channel_id: Schema.String,
  bot_id: Schema.String,
  bot_token_enc: Schema.NullOr(Schema.String),
  taken: Schema.Boolean
})))
const decodeSlots = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ at: Schema.Date, slots: Count })))

export const DeliveryCrosspostSql: Effect.Effect<CrosspostCalls, never, SqlClient.SqlClient | Cipher> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* Cipher

  const botToken = (enc: string | null, botId: string) =>
    enc === null ? Effect.succeed(null) : cipher.decrypt(enc, `bot:${botId}:token`).pipe(
      Effect.map((t): Redacted.Redacted<string> | null => t),
      Effect.catch((e) => Effect.as(Effect.logError(`bot ${botId}: the token does not decrypt: ${e.message}`), null))
    )

  const reserveCrosspost = (deliveryId: string, slots: number, at: Date) =>
    run(
      sql.withTransaction(Effect.gen(function*() {
        const target = (yield* sql`SELECT f.webhook_channel_id AS channel_id, f.bot_id, b.token_enc AS bot_token_enc,
            EXISTS (SELECT 1 FROM feed_crossposts c WHERE c.delivery_id = d.id) AS taken
          FROM feed_deliveries d JOIN feeds f ON f.id = d.feed_id LEFT JOIN bots b ON b.id = f.bot_id
          WHERE d.id = ${deliveryId}`.pipe(Effect.flatMap(decodeTarget)))[0]
        if (target === undefined) return { _tag: "Gone" } as const
        if (target.taken) return { _tag: "Taken" } as const
        const channelId = target.channel_id
        // Held until the transaction ends; the reads below see every reservation committed before it.
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`crosspost:${channelId}`}))`
        const taken = yield* sql`SELECT at, slots FROM feed_crossposts
          WHERE channel_id = ${channelId} AND at > ${new Date(at.getTime() - CROSSPOST_WINDOW_MS)}`.pipe(Effect.flatMap(decodeSlots))
        const decision = decideCrosspost(taken.map((t) => ({ at: t.at, slots: Number(t.slots) })), slots, at)
        if (decision._tag === "OverBudget") return { _tag: "OverBudget", channelId, freeAt: decision.freeAt } as const
        const inserted = yield* sql`INSERT INTO feed_crossposts (delivery_id, channel_id, slots, at)
          VALUES (${deliveryId}, ${channelId}, ${slots}, ${at}) ON CONFLICT (delivery_id) DO NOTHING RETURNING 1`
        if (inserted.length === 0) return { _tag: "Taken" } as const
        return { _tag: "Granted", channelId, botToken: yield* botToken(target.bot_token_enc, target.bot_id) } as const
      })).pipe(Effect.map((r): CrosspostReservation => r)),
      "reserveCrosspost"
    )

  return {
    reserveCrosspost,
    // One statement: the reason marks the delivery, so it is counted once whoever records it again.
    notCrossposted: (deliveryId, reason) =>
      run(
        sql`WITH marked AS (
            UPDATE feed_deliveries SET reason = ${reason}
            WHERE id = ${deliveryId} AND state = 'sent' AND reason IS NULL RETURNING feed_id
          )
          INSERT INTO feed_status (feed_id, not_crossposted) SELECT feed_id, 1 FROM marked
          ON CONFLICT (feed_id) DO UPDATE SET not_crossposted = feed_status.not_crossposted + 1, updated_at = now()`.pipe(Effect.asVoid),
        "notCrossposted"
      )
  }
})
