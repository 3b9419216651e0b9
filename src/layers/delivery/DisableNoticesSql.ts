/**
 * DisableNoticeStore on PostgreSQL / PGlite (tables of migration 0007). The creator of a feed is
 * read from its create entry in the audit log (the earliest `PUSH` of the feed, "Created …" first).
 * A user's claim is one statement on their row of `feed_notice_users` (free when never sent to, or
 * over an hour ago; one row per user whatever the bot, migration 0008), so concurrent sweeps never both send. Bot tokens are decrypted here, only to send.
 */
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { FeedModuleName } from "../../domain/platform/Platform.ts"
import { Cipher } from "../../services/infra/Cipher.ts"
import { DisableNoticeStore } from "../../services/delivery/DisableNotices.ts"
import { Id } from "./DeliveryRows.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const db = sqlFailure("The disable notices")

const OpenRow = Schema.Struct({
  id: Id,
  feed_id: Id,
  reason: Schema.NullOr(Schema.String),
  module: Schema.NullOr(FeedModuleName),
  bot_id: Schema.NullOr(Schema.String),
  server_id: Schema.NullOr(Schema.String),
  feed_identifier: Schema.NullOr(Schema.String),
  creator_id: Schema.NullOr(Schema.String)
})
const decodeOpen = Schema.decodeUnknownEffect(Schema.Array(OpenRow))

/** Rolls a claim back when no notice was left to claim. */
const nothingLeft = { _tag: "NothingLeft" } as const

export const DisableNoticesSql = Layer.effect(DisableNoticeStore, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* Cipher
  const run = <A, E, R>(self: Effect.Effect<A, E | Schema.SchemaError, R>, span: string) =>
    self.pipe(Effect.catchIf(Schema.isSchemaError, (e) => Effect.die(e)), db, Effect.withSpan(`DisableNoticeStore.${span}`))

  return DisableNoticeStore.of({
    open: (limit) =>
      run(
        sql`SELECT n.id, n.feed_id, n.reason, f.module, f.bot_id, f.server_id, f.feed_identifier, c.user_id AS creator_id
          FROM feed_disable_notices n
          LEFT JOIN feeds f ON f.id = n.feed_id
          LEFT JOIN LATERAL (
            SELECT a.user_id FROM audit_entries a
            WHERE a.module_name = f.module AND a.server_id = f.server_id AND a.bot_id = f.bot_id
              AND a.item_identifier = f.id AND a.event_type = 'PUSH'
            ORDER BY (a.event_string LIKE 'Created %') DESC, a.at, a.id LIMIT 1
          ) c ON true
          WHERE n.sent_at IS NULL ORDER BY n.id LIMIT ${limit}`.pipe(
          Effect.flatMap(decodeOpen),
          Effect.map((rows) =>
            rows.map((r) => ({
              id: String(r.id),
              feedId: String(r.feed_id),
              reason: r.reason,
              feed: r.module === null || r.bot_id === null || r.server_id === null || r.feed_identifier === null
                ? null
                : { module: r.module, botId: r.bot_id, serverId: r.server_id, identifier: r.feed_identifier },
              creatorId: r.creator_id
            }))
          )
        ),
        "open"
      ),
    drop: (ids) =>
      ids.length === 0 ? Effect.void : run(
        sql`UPDATE feed_disable_notices SET sent_at = now() WHERE id IN ${sql.in(ids)} AND sent_at IS NULL`.pipe(Effect.asVoid),
        "drop"
      ),
    claim: (userId, ids) =>
      run(
        sql.withTransaction(Effect.gen(function*() {
          const free = yield* sql`INSERT INTO feed_notice_users AS r (user_id, last_sent_at)
            VALUES (${userId}, now())
            ON CONFLICT (user_id) DO UPDATE SET last_sent_at = now()
            WHERE r.last_sent_at IS NULL OR r.last_sent_at <= now() - interval '1 hour'
            RETURNING 1`
          if (free.length === 0) return null
          const claimed = yield* sql<{ id: unknown }>`UPDATE feed_disable_notices SET sent_at = now()
            WHERE id IN ${sql.in(ids)} AND sent_at IS NULL RETURNING id`
          // Another sweep took them all: undo the user's claim too (no message leaves for it).
          if (claimed.length === 0) return yield* Effect.fail(nothingLeft)
          return claimed.map((r) => String(r.id))
        })).pipe(Effect.catchIf((e): e is typeof nothingLeft => e === nothingLeft, () => Effect.succeed([]))),
        "claim"
      ),
    release: (userId, ids) =>
      run(
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE feed_notice_users SET last_sent_at = NULL WHERE user_id = ${userId}`
          if (ids.length > 0) yield* sql`UPDATE feed_disable_notices SET sent_at = NULL WHERE id IN ${sql.in(ids)}`
        })),
        "release"
      ),
    botToken: (botId) =>
      run(
        sql<{ token_enc: string }>`SELECT token_enc FROM bots WHERE id = ${botId}`.pipe(
          Effect.flatMap((rows) =>
            rows[0] === undefined
              ? Effect.succeed(Option.none())
              : cipher.decrypt(rows[0].token_enc, `bot:${botId}:token`).pipe(Effect.option)
          )
        ),
        "botToken"
      )
  })
}))
