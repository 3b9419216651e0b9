/**
 * FeedsRepo on PostgreSQL / PGlite (table `feeds` of migration 0001). A row is decoded once, here,
 * by its module's own options schema: jsonb is only as trustworthy as every past writer, so a row
 * that does not fit is a defect (500) rather than a value passed on untyped. Database failures follow
 * SqlFailure.ts: down → 503, a value of the client's the database refuses → 400 at its path.
 * (The delivery worker's read by source `(module, feed_identifier)` is one more `findAll` over `Row`,
 * narrowed with `isOfModule`, with an index on `(module, feed_identifier)` in a migration.)
 */
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { DisplayInfo, FeedModules } from "../../domain/feeds/Feed.ts"
import { isStorableFeedId } from "../../domain/infra/Ids.ts"
import { FeedModuleName } from "../../domain/platform/Platform.ts"
import { FeedsRepo, isOfModule } from "../../services/feeds/FeedsRepo.ts"
import type { FeedRecord, FeedScope, NewFeed } from "../../services/feeds/FeedsRepo.ts"
import type { ForumTag } from "../../services/delivery/render/ForumPost.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const STORAGE = "The feeds storage"

export const FeedsRepoSql = Layer.effect(FeedsRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const db = sqlFailure(STORAGE)
  // Writes carry the client's identifier and options: a string the database refuses is a 400 there.
  const write = (input: { readonly feed_identifier?: string; readonly webhook_options: unknown }) =>
    sqlFailure(STORAGE, { input, in: "body" })
  const defect = <A, E, R>(self: Effect.Effect<A, E | Schema.SchemaError, R>, span: string) =>
    self.pipe(
      Effect.catchIf(Schema.isSchemaError, (e) => Effect.die(e)),
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
        webhook_id, webhook_token_enc, webhook_name, webhook_avatar, webhook_channel_id, forum_tags)
      VALUES (${f.botId}, ${f.serverId}, ${f.module}, ${f.feedIdentifier}, ${JSON.stringify(f.webhookOptions)}::jsonb,
        ${f.displayInfo === null ? null : JSON.stringify(f.displayInfo)}::jsonb, ${f.webhook.id}, ${f.webhook.tokenEnc},
        ${f.webhook.name}, ${f.webhook.avatar}, ${f.webhook.channelId}, ${jsonOrNull(f.webhook.forumTags)}::jsonb)
      ON CONFLICT (bot_id, server_id, module, feed_identifier, webhook_id) DO NOTHING
      RETURNING *`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(Row))))

  const insert = <M extends FeedModuleName>(f: NewFeed<M>, limit: number) =>
    Effect.gen(function*() {
      // Serialises creates of one scope, so the count and the insert see the same state.
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`feeds:${f.botId}:${f.serverId}:${f.module}`}))`
      const n = yield* countRows(f)
      if (n >= limit) return { _tag: "LimitReached", limit } as const
      const row = (yield* insertRow(f)).map(toRecord).find(isOfModule(f.module))
      return row === undefined ? { _tag: "Duplicate" } as const : { _tag: "Inserted", feed: row } as const
    }).pipe(sql.withTransaction, write({ feed_identifier: f.feedIdentifier, webhook_options: f.webhookOptions }))

  const updateRow = SqlSchema.findOneOption({
    Request: Schema.Struct({
      ...ScopedId.fields,
      options: Schema.String,
      display: Schema.NullOr(Schema.String),
      // undefined: the stored tags are kept.
      forum: Schema.UndefinedOr(Schema.NullOr(Schema.String))
    }),
    Result: Row,
    execute: (r) =>
      sql`UPDATE feeds SET webhook_options = ${r.options}::jsonb, display_info = ${r.display}::jsonb${
        r.forum === undefined ? sql`` : sql`, forum_tags = ${r.forum}::jsonb`
      }
        WHERE id = ${r.id} AND bot_id = ${r.botId} AND server_id = ${r.serverId} AND module = ${r.module}
        RETURNING *`
  })

  /** The row, if it is of the scope's module (the statements select by module: it always is). */
  const inScope = <M extends FeedModuleName>(scope: FeedScope<M>) => (row: Option.Option<typeof Row.Type>) =>
    Option.filter(Option.map(row, toRecord), isOfModule(scope.module))

  // A canonical id beyond int8 (any length passes the route) names no feed: no query, which the
  // database would refuse; every reader of a feed by id (feeds, delivery insight) gets a 404.
  const none = Effect.succeed(Option.none())
  return FeedsRepo.of({
    list: (scope) => defect(listRows(scope).pipe(Effect.map((rows) => rows.map(toRecord).filter(isOfModule(scope.module))), db), "list"),
    count: (scope) => defect(countRows(scope).pipe(db), "count"),
    find: (scope, id) =>
      isStorableFeedId(id) ? defect(findRow({ ...scope, id }).pipe(Effect.map(inScope(scope)), db), "find") : none,
    insert: (feed, limit) => defect(insert(feed, limit), "insert"),
    updateOptions: (scope, id, options, displayInfo, forumTags) =>
      !isStorableFeedId(id) ? none : defect(
        updateRow({
          ...scope,
          id,
          options: JSON.stringify(options),
          display: displayInfo === null ? null : JSON.stringify(displayInfo),
          forum: forumTags === undefined ? undefined : jsonOrNull(forumTags)
        }).pipe(Effect.map(inScope(scope)), write({ webhook_options: options })),
        "updateOptions"
      ),
    setForumTags: (scope, id, forumTags) =>
      !isStorableFeedId(id) ? Effect.succeed(false) : defect(
        sql`UPDATE feeds SET forum_tags = ${jsonOrNull(forumTags)}::jsonb WHERE id = ${id} AND bot_id = ${scope.botId}
          AND server_id = ${scope.serverId} AND module = ${scope.module} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), db),
        "setForumTags"
      ),
    remove: (scope, id) =>
      !isStorableFeedId(id) ? Effect.succeed(false) : defect(
        sql`DELETE FROM feeds WHERE id = ${id} AND bot_id = ${scope.botId} AND server_id = ${scope.serverId}
          AND module = ${scope.module} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), db),
        "remove"
      ),
    transaction: (self) => sql.withTransaction(self).pipe(db)
  })
}))

const Scope = Schema.Struct({ botId: Schema.String, serverId: Schema.String, module: FeedModuleName })
const ScopedId = Schema.Struct({ ...Scope.fields, id: Schema.String })

/** A forum's tags as stored (null: the webhook's channel is not a forum). */
const jsonOrNull = (tags: ReadonlyArray<ForumTag> | null | undefined): string | null =>
  tags === null || tags === undefined ? null : JSON.stringify(tags.map((t) => ({ id: t.id, name: t.name })))

const StoredDisplay = Schema.Struct({
  ...DisplayInfo.fields,
  game_names: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
})

const columns = {
  id: Schema.Union([Schema.BigInt, Schema.Number, Schema.String]),
  bot_id: Schema.String,
  server_id: Schema.String,
  feed_identifier: Schema.String,
  display_info: Schema.NullOr(StoredDisplay),
  webhook_id: Schema.String,
  webhook_token_enc: Schema.String,
  webhook_name: Schema.String,
  webhook_avatar: Schema.NullOr(Schema.String),
  webhook_channel_id: Schema.String,
  forum_tags: Schema.NullOr(Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String })))
}
/** A row of module `m`: its options decoded by that module's schema (unknown keys are dropped). */
const rowOf = <M extends FeedModuleName>(m: M) =>
  Schema.Struct({ ...columns, module: Schema.Literal(m), webhook_options: FeedModules[m].optionsInput })

const Row = Schema.Union([rowOf("photo"), rowOf("forum"), rowOf("rss"), rowOf("streaming"), rowOf("microblog"), rowOf("video")])

/** A row as a record; `FeedRecord<M>` for a module `M` only through `isOfModule`. */
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
    channelId: r.webhook_channel_id,
    forumTags: r.forum_tags
  }
})
