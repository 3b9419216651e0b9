/**
 * Storage of feeds (table `feeds`). The webhook token is stored only as the Cipher's ciphertext;
 * nothing here ever sees it in clear. Writes that belong together (a feed and its audit entry) run
 * inside `transaction`, which the audit log joins through the ambient SqlClient.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlError, SqlSchema } from "effect/sql"
import { ServiceUnavailable } from "../domain/Errors.ts"
import type { DisplayInfo } from "../domain/Feed.ts"
import type { FeedModuleName } from "../domain/Platform.ts"

/** Whose feeds: one module of one server as seen by one bot. */
export interface FeedScope {
  readonly botId: string
  readonly serverId: string
  readonly module: FeedModuleName
}

export interface StoredWebhook {
  readonly id: string
  /** Cipher output for the token, aad `feed-webhook:${id}`. */
  readonly tokenEnc: string
  readonly name: string
  readonly avatar: string | null
  readonly channelId: string
}

export interface NewFeed extends FeedScope {
  readonly feedIdentifier: string
  readonly webhookOptions: Record<string, unknown>
  readonly displayInfo: DisplayInfo | null
  readonly webhook: StoredWebhook
}

export interface FeedRecord extends NewFeed {
  /** Decimal string of the numeric id. */
  readonly id: string
}

/** The outcome of an insert: the limit and the duplicate rule are checked atomically with it. */
export type InsertResult =
  | { readonly _tag: "Inserted"; readonly feed: FeedRecord }
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "LimitReached"; readonly limit: number }

export class FeedsRepo extends Context.Service<FeedsRepo, {
  readonly list: (scope: FeedScope) => Effect.Effect<ReadonlyArray<FeedRecord>, ServiceUnavailable>
  readonly count: (scope: FeedScope) => Effect.Effect<number, ServiceUnavailable>
  readonly find: (scope: FeedScope, id: string) => Effect.Effect<Option.Option<FeedRecord>, ServiceUnavailable>
  /** Inserts unless the scope already holds `limit` feeds or the same identifier on the same webhook. */
  readonly insert: (feed: NewFeed, limit: number) => Effect.Effect<InsertResult, ServiceUnavailable>
  readonly updateOptions: (
    scope: FeedScope,
    id: string,
    options: Record<string, unknown>,
    displayInfo: DisplayInfo | null
  ) => Effect.Effect<Option.Option<FeedRecord>, ServiceUnavailable>
  readonly remove: (scope: FeedScope, id: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** Runs `self` as one unit: all of it, or (on failure) none of it. */
  readonly transaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>
}>()("gateway/FeedsRepo") {
  static readonly layerSql = Layer.effect(FeedsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const unavailable = (e: SqlError.SqlError) =>
      Effect.logError("feeds storage failed", e).pipe(
        Effect.andThen(Effect.fail(ServiceUnavailable.of("The database is unreachable; retry.")))
      )
    const guard = <A>(self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError>, span: string) =>
      self.pipe(
        Effect.catchTag("SchemaError", (e) => Effect.die(e)),
        Effect.catchTag("SqlError", unavailable),
        Effect.withSpan(`FeedsRepo.${span}`)
      )

    const listRows = SqlSchema.findAll({
      Request: Scope,
      Result: Row,
      execute: (s) =>
        sql`SELECT * FROM feeds WHERE bot_id = ${s.botId} AND server_id = ${s.serverId} AND module = ${s.module} ORDER BY id`
    })
    const findRow = SqlSchema.findOneOption({
      Request: ScopedId,
      Result: Row,
      execute: (r) =>
        sql`SELECT * FROM feeds WHERE id = ${r.id} AND bot_id = ${r.botId} AND server_id = ${r.serverId} AND module = ${r.module}`
    })
    const countRows = (s: FeedScope) =>
      sql<{ n: bigint | number | string }>`SELECT count(*) AS n FROM feeds
        WHERE bot_id = ${s.botId} AND server_id = ${s.serverId} AND module = ${s.module}`.pipe(
        Effect.map((rows) => Number(rows[0]?.n ?? 0))
      )

    const insertRow = (f: NewFeed) =>
      sql`INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options, display_info,
          webhook_id, webhook_token_enc, webhook_name, webhook_avatar, webhook_channel_id)
        VALUES (${f.botId}, ${f.serverId}, ${f.module}, ${f.feedIdentifier}, ${JSON.stringify(f.webhookOptions)}::jsonb,
          ${f.displayInfo === null ? null : JSON.stringify(f.displayInfo)}::jsonb, ${f.webhook.id}, ${f.webhook.tokenEnc},
          ${f.webhook.name}, ${f.webhook.avatar}, ${f.webhook.channelId})
        ON CONFLICT (bot_id, server_id, module, feed_identifier, webhook_id) DO NOTHING
        RETURNING *`.pipe(Effect.flatMap((rows) => Schema.decodeUnknownEffect(Schema.Array(Row))(rows)))

    const insert = (f: NewFeed, limit: number) =>
      Effect.gen(function*() {
        // Serialises creates of one scope, so the count and the insert see the same state.
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`feeds:${f.botId}:${f.serverId}:${f.module}`}))`
        const n = yield* countRows(f)
        if (n >= limit) return { _tag: "LimitReached", limit } as const
        const rows = yield* insertRow(f)
        const row = rows[0]
        return row === undefined ? { _tag: "Duplicate" } as const : { _tag: "Inserted", feed: toRecord(row) } as const
      }).pipe(sql.withTransaction)

    const updateRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ ...ScopedId.fields, options: Schema.String, display: Schema.NullOr(Schema.String) }),
      Result: Row,
      execute: (r) =>
        sql`UPDATE feeds SET webhook_options = ${r.options}::jsonb, display_info = ${r.display}::jsonb
          WHERE id = ${r.id} AND bot_id = ${r.botId} AND server_id = ${r.serverId} AND module = ${r.module}
          RETURNING *`
    })

    return FeedsRepo.of({
      list: (scope) => guard(listRows(scope).pipe(Effect.map((rows) => rows.map(toRecord))), "list"),
      count: (scope) => guard(countRows(scope), "count"),
      find: (scope, id) => guard(findRow({ ...scope, id }).pipe(Effect.map(Option.map(toRecord))), "find"),
      insert: (feed, limit) => guard(insert(feed, limit), "insert"),
      updateOptions: (scope, id, options, displayInfo) =>
        guard(
          updateRow({
            ...scope,
            id,
            options: JSON.stringify(options),
            display: displayInfo === null ? null : JSON.stringify(displayInfo)
          }).pipe(Effect.map(Option.map(toRecord))),
          "updateOptions"
        ),
      remove: (scope, id) =>
        guard(
          sql`DELETE FROM feeds WHERE id = ${id} AND bot_id = ${scope.botId} AND server_id = ${scope.serverId}
            AND module = ${scope.module} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
          "remove"
        ),
      transaction: <A, E, R>(self: Effect.Effect<A, E, R>) =>
        sql.withTransaction(self).pipe(
          Effect.catch((e): Effect.Effect<never, E | ServiceUnavailable> =>
            SqlError.isSqlError(e) ? unavailable(e) : Effect.fail(e)
          )
        )
    })
  }))
}

const Scope = Schema.Struct({
  botId: Schema.String,
  serverId: Schema.String,
  module: Schema.Literals(["photo", "forum", "rss", "streaming", "microblog", "video"])
})
const ScopedId = Schema.Struct({ ...Scope.fields, id: Schema.String })

const StoredDisplay = Schema.Struct({
  user_name: Schema.String,
  display_name: Schema.String,
  user_url: Schema.String,
  game_names: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
})

const Row = Schema.Struct({
  id: Schema.Union([Schema.BigInt, Schema.Number, Schema.String]),
  bot_id: Schema.String,
  server_id: Schema.String,
  module: Scope.fields.module,
  feed_identifier: Schema.String,
  webhook_options: Schema.Record(Schema.String, Schema.Unknown),
  display_info: Schema.NullOr(StoredDisplay),
  webhook_id: Schema.String,
  webhook_token_enc: Schema.String,
  webhook_name: Schema.String,
  webhook_avatar: Schema.NullOr(Schema.String),
  webhook_channel_id: Schema.String
})

const toRecord = (r: typeof Row.Type): FeedRecord => ({
  id: String(r.id),
  botId: r.bot_id,
  serverId: r.server_id,
  module: r.module,
  feedIdentifier: r.feed_identifier,
  webhookOptions: r.webhook_options,
  displayInfo: r.display_info,
  webhook: {
    id: r.webhook_id,
    tokenEnc: r.webhook_token_enc,
    name: r.webhook_name,
    avatar: r.webhook_avatar,
    channelId: r.webhook_channel_id
  }
})
