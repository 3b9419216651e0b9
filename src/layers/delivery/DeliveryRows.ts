/**
 * The rows DeliveryStoreSql reads, their decoders and their conversion to the DeliveryStore's types.
 * Feed options are decoded by their module's schema, values that do not fit dropped (`readOptions`):
 * one damaged row filters less rather than stopping its source.
 */
import { Option, Schema } from "effect"
import { DisplayInfo, FeedModules } from "../../domain/feeds/Feed.ts"
import { PreviewEmbed } from "../../domain/insight/FeedInsight.ts"
import { FeedModuleName } from "../../domain/platform/Platform.ts"
import { readOptions } from "../../services/delivery/render/Options.ts"
import type { DeliveryOptions } from "../../services/delivery/render/Options.ts"
import type { DeliveryFeed, DeliverySource, FeedRef, FeedStatus } from "../../services/delivery/DeliveryStore.ts"
import { emptyPollState, PollState } from "../../services/sources/SourcePoller.ts"

export const Id = Schema.Union([Schema.BigInt, Schema.Number, Schema.String])
export const Count = Schema.Union([Schema.BigInt, Schema.Number, Schema.String])
export const When = Schema.NullOr(Schema.Date)

export const SourceRow = Schema.Struct({
  id: Id,
  module: FeedModuleName,
  identifier: Schema.String,
  poll_state: Schema.NullOr(Schema.Unknown),
  baselined_at: When,
  last_poll_at: When,
  next_poll_at: When,
  last_success_at: When,
  failing_since: When,
  failures: Count,
  last_error: Schema.NullOr(Schema.String),
  polled_slot: When,
  successor_slot: When
})
export const decodeSources = Schema.decodeUnknownEffect(Schema.Array(SourceRow))

export const readPollState = Schema.decodeUnknownOption(PollState)
export const toSource = (r: typeof SourceRow.Type): DeliverySource => ({
  id: String(r.id),
  module: r.module,
  identifier: r.identifier,
  pollState: Option.getOrElse(readPollState(r.poll_state), () => emptyPollState),
  baselinedAt: r.baselined_at,
  lastPollAt: r.last_poll_at,
  nextPollAt: r.next_poll_at,
  lastSuccessAt: r.last_success_at,
  failingSince: r.failing_since,
  failures: Number(r.failures),
  lastError: r.last_error,
  polledSlot: r.polled_slot,
  successorSlot: r.successor_slot
})

/** A source row with its feeds counted (`pollTarget`). */
export const TargetRow = Schema.Struct({ ...SourceRow.fields, active: Count, failing: Count })
export const decodeTargets = Schema.decodeUnknownEffect(Schema.Array(TargetRow))

export const FeedState = Schema.Literals(["active", "failing", "disabled"])

/** The columns of a feed reference: the feed, its bot (the audit actor), its status. */
export const feedRefColumns = `f.id AS feed_id, f.module, f.bot_id, f.server_id, f.feed_identifier,
  b.name AS bot_name, b.icon AS bot_icon, COALESCE(s.state, 'active') AS state, s.reason`
export const feedRefJoins = `LEFT JOIN bots b ON b.id = f.bot_id LEFT JOIN feed_status s ON s.feed_id = f.id`

export const FeedRefRow = Schema.Struct({
  feed_id: Id,
  module: FeedModuleName,
  bot_id: Schema.String,
  server_id: Schema.String,
  feed_identifier: Schema.String,
  bot_name: Schema.NullOr(Schema.String),
  bot_icon: Schema.NullOr(Schema.String),
  state: FeedState,
  reason: Schema.NullOr(Schema.String)
})
export const toFeedRef = (r: typeof FeedRefRow.Type): FeedRef => ({
  id: String(r.feed_id),
  module: r.module,
  botId: r.bot_id,
  serverId: r.server_id,
  feedIdentifier: r.feed_identifier,
  bot: { userId: r.bot_id, userName: r.bot_name ?? "Feeds bot", avatar: r.bot_icon },
  state: r.state,
  reason: r.reason
})

export const FeedRow = Schema.Struct({
  ...FeedRefRow.fields,
  created_at: Schema.Date,
  webhook_options: Schema.Unknown,
  display_info: Schema.NullOr(Schema.Unknown),
  webhook_id: Schema.String,
  forum_tags: Schema.NullOr(Schema.Unknown)
})
export const decodeFeeds = Schema.decodeUnknownEffect(Schema.Array(FeedRow))
export const readDisplay = Schema.decodeUnknownOption(DisplayInfo)
/** A forum's tags as stored; a value that does not fit reads as no forum (the post is refused, the feed goes on). */
export const readForumTags = Schema.decodeUnknownOption(Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String })))

/** The module's options as its schema reads them; else every value of the right type. */
export const optionsOf = (module: FeedModuleName, raw: unknown): DeliveryOptions =>
  Option.match(Schema.decodeUnknownOption(FeedModules[module].optionsInput)(raw), {
    onNone: () => readOptions(raw),
    onSome: (options): DeliveryOptions => options
  })

export const toFeed = (r: typeof FeedRow.Type): DeliveryFeed => ({
  ...toFeedRef(r),
  createdAt: r.created_at,
  options: optionsOf(r.module, r.webhook_options),
  displayInfo: r.display_info === null ? null : Option.getOrNull(readDisplay(r.display_info)),
  webhookId: r.webhook_id,
  forumTags: r.forum_tags === null ? null : Option.getOrNull(readForumTags(r.forum_tags))
})

const Message = Schema.Struct({
  content: Schema.optionalKey(Schema.String),
  username: Schema.optionalKey(Schema.String),
  avatar_url: Schema.optionalKey(Schema.String),
  allowed_mentions: Schema.optionalKey(Schema.Struct({
    parse: Schema.Array(Schema.String),
    roles: Schema.optionalKey(Schema.Array(Schema.String))
  })),
  embeds: Schema.optionalKey(Schema.Array(PreviewEmbed)),
  thread_name: Schema.optionalKey(Schema.String),
  applied_tags: Schema.optionalKey(Schema.Array(Schema.String))
})
/** A stored delivery's message (services/DeliveryStore.ts `DeliveryBody`): where it goes, and the ones that follow a split. */
export const Body = Schema.Struct({
  ...Message.fields,
  thread_id: Schema.optionalKey(Schema.String),
  continued: Schema.optionalKey(Schema.Array(Message))
})
export const readBody = Schema.decodeUnknownOption(Body)

/** Whether the feed asks its messages to be published (jsonb `true` exactly), as `crosspost`. */
export const crosspostColumn = `COALESCE(f.webhook_options->'crosspost' = 'true'::jsonb, false) AS crosspost`

export const OpenRow = Schema.Struct({
  ...FeedRefRow.fields,
  crosspost: Schema.Boolean,
  id: Id,
  item_id: Schema.String,
  webhook_id: Schema.String,
  body: Schema.NullOr(Schema.Unknown),
  attempts: Count,
  webhook_token_enc: Schema.String,
  feed_webhook_id: Schema.String
})
export const decodeOpen = Schema.decodeUnknownEffect(Schema.Array(OpenRow))

export const StatusRow = Schema.Struct({
  state: FeedState,
  reason: Schema.NullOr(Schema.String),
  delivered: Count,
  skipped: Count,
  not_crossposted: Count,
  last_delivery_at: When,
  last_poll_at: When,
  next_poll_at: When
})
export const decodeStatus = Schema.decodeUnknownEffect(Schema.Array(StatusRow))
export const toStatus = (r: typeof StatusRow.Type): FeedStatus => ({
  state: r.state,
  reason: r.reason,
  lastPollAt: r.last_poll_at,
  nextPollAt: r.next_poll_at,
  lastDeliveryAt: r.last_delivery_at,
  delivered: Number(r.delivered),
  skipped: Number(r.skipped),
  notCrossposted: Number(r.not_crossposted)
})

export const decodeRefs = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ ...FeedRefRow.fields, previous: FeedState })))

/** For `sql.insert`, called only with rows (the callers return early on none). */
export const nonEmpty = <A>(rows: ReadonlyArray<A>): readonly [A, ...Array<A>] => rows as readonly [A, ...Array<A>]

/** Rows per INSERT: well under PostgreSQL's 65,535 parameters a statement. */
const CHUNK = 1000
export const chunks = <A>(rows: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(rows.length / CHUNK) }, (_, i) => rows.slice(i * CHUNK, (i + 1) * CHUNK))
