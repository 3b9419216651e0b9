/**
 * Feeds of the six feed-connector modules. Each module's `webhook_options` holds exactly the
 * options of the contract's table that apply to it; an input with any other key is refused (400
 * naming the option) because the feeds group decodes with `onExcessProperty: "error"`.
 */
import { Schema } from "effect"
import type { FeedModuleName } from "../platform/Platform.ts"
import { Snowflake } from "../infra/Ids.ts"
import { text } from "../infra/Text.ts"

const nullable = <S extends Schema.Top>(s: S) => Schema.NullOr(s)
// Text limits count code points (decisions.md "Errors"): domain/infra/Text.ts.
const maxLen = (n: number) => text(0, n)

export const FilterMode = Schema.Literals(["AND", "OR"])
export const Nsfw = Schema.Literals(["censor", "skip", "only"])
const Words = Schema.Array(text(1, 100)).check(Schema.isBetweenLength(1, 50))

/**
 * decisions.md "Feeds": a list option with a repeated element → 400 at the repeat (compared trimmed,
 * in any case). A check of the request's schema, so a body with other problems too gets them all in
 * one 400; stored options are read without it (a feed stored before the rule still reads back).
 */
const noRepeats = <T extends string>() =>
  Schema.makeFilter<ReadonlyArray<T>>((values) => {
    const seen = new Map<string, number>()
    const issues: Array<Schema.FilterIssue> = []
    values.forEach((value, i) => {
      const key = value.trim().toLowerCase()
      const first = seen.get(key)
      if (first === undefined) seen.set(key, i)
      else issues.push({ path: [i], issue: `${JSON.stringify(value)} is repeated (already at [${first}]); list each value once.` })
    })
    return issues
  }, { description: "each value once (compared trimmed, in any case)" })

/** At most 10 roles mention per message (delivery.md §10). */
export const MAX_MENTION_ROLES = 10
const MentionRoles = Schema.Array(Snowflake).check(Schema.isMaxLength(MAX_MENTION_ROLES, {
  message: `expected at most ${MAX_MENTION_ROLES} roles`
}))
/** `#rrggbb`, the embed's colour bar. */
export const EmbedColor = Schema.String.check(Schema.isPattern(/^#[0-9a-fA-F]{6}$/, { message: "expected a colour as #rrggbb" }))
// A forum holds at most 20 tags, each named in at most 20 characters (Discord's forum tag object).
const ForumTags = Schema.Array(text(1, 20)).check(Schema.isMaxLength(20, { message: "expected at most 20 tag names" }))

export const EVENT_TYPES = { photo: ["post"], streaming: ["live", "offline"], video: ["added", "updated"] } as const

/** Every option: its schema and its default. */
const option = {
  filter_mode: { schema: FilterMode, default: "OR" as const },
  nsfw: { schema: nullable(Nsfw), default: null },
  filter_words: { schema: nullable(Words), request: nullable(Words.check(noRepeats())), default: null },
  filter_excl: { schema: Schema.Boolean, default: false },
  filter_flair: { schema: nullable(Words), request: nullable(Words.check(noRepeats())), default: null },
  filter_game: { schema: nullable(Words), request: nullable(Words.check(noRepeats())), default: null },
  custom_header: { schema: nullable(maxLen(1024)), default: null },
  "webhook-name": { schema: nullable(maxLen(32)), default: null },
  "no-username-overwrite": { schema: Schema.Boolean, default: false },
  "no-avatar-overwrite": { schema: Schema.Boolean, default: false },
  // delivery.md §10: each rule the schema can judge alone; the server's roles, its threads and the
  // channel's type and permissions are checked by the feeds service (services/FeedsDelivering.ts).
  mention_roles: { schema: nullable(MentionRoles), request: nullable(MentionRoles.check(noRepeats())), default: null },
  embed: { schema: Schema.Boolean, default: false },
  embed_color: { schema: nullable(EmbedColor), default: null },
  thread_id: { schema: nullable(Snowflake), default: null },
  forum_thread_name: { schema: nullable(text(1, 1024)), default: null },
  forum_tags: { schema: nullable(ForumTags), request: nullable(ForumTags.check(noRepeats())), default: null },
  crosspost: { schema: Schema.Boolean, default: false },
  split: { schema: Schema.Boolean, default: false }
}
const events = <const L extends ReadonlyArray<string>>(values: L) => {
  const list = Schema.Array(Schema.Literals(values)).check(Schema.isBetweenLength(1, values.length))
  return { schema: nullable(list), request: nullable(list.check(noRepeats())), default: null }
}

const common = {
  custom_header: option.custom_header,
  "webhook-name": option["webhook-name"],
  "no-username-overwrite": option["no-username-overwrite"],
  "no-avatar-overwrite": option["no-avatar-overwrite"],
  mention_roles: option.mention_roles,
  embed: option.embed,
  embed_color: option.embed_color,
  thread_id: option.thread_id,
  forum_thread_name: option.forum_thread_name,
  forum_tags: option.forum_tags,
  crosspost: option.crosspost,
  split: option.split
}
const wordFilters = {
  filter_mode: option.filter_mode,
  nsfw: option.nsfw,
  filter_words: option.filter_words,
  filter_excl: option.filter_excl
}

/** The contract's table, per module. */
export const MODULE_OPTIONS = {
  photo: { ...wordFilters, filter_event: events(EVENT_TYPES.photo), ...common },
  forum: { ...wordFilters, filter_flair: option.filter_flair, ...common },
  rss: { ...wordFilters, ...common },
  streaming: { filter_event: events(EVENT_TYPES.streaming), filter_game: option.filter_game, ...common },
  microblog: { ...wordFilters, ...common },
  video: { ...wordFilters, filter_event: events(EVENT_TYPES.video), ...common }
} as const satisfies Record<FeedModuleName, Record<string, { schema: Schema.Top; default: unknown }>>

type Spec = typeof MODULE_OPTIONS
type InputFields<M extends FeedModuleName> = {
  readonly [K in keyof Spec[M]]: Schema.optionalKey<Spec[M][K] extends { schema: infer S extends Schema.Top } ? S : never>
}
type OutputFields<M extends FeedModuleName> = {
  readonly [K in keyof Spec[M]]: Spec[M][K] extends { schema: infer S extends Schema.Top } ? S : never
}

/** Any subset of the options; a request's (`request`) also refuses a list with a repeated element. */
const inputOptions = <M extends FeedModuleName>(m: M, request = false) =>
  Schema.Struct(
    Object.fromEntries(
      Object.entries(MODULE_OPTIONS[m]).map(([k, v]) => [k, Schema.optionalKey(request && "request" in v ? v.request : v.schema)])
    ) as InputFields<M>
  ).annotate({ identifier: `${m}_webhook_options_input` })
const outputOptions = <M extends FeedModuleName>(m: M) =>
  Schema.Struct(
    Object.fromEntries(Object.entries(MODULE_OPTIONS[m]).map(([k, v]) => [k, v.schema])) as OutputFields<M>
  ).annotate({ identifier: `${m}_webhook_options` })

/** An options object with every omitted option at its default. */
export const withDefaults = <M extends FeedModuleName>(m: M, input: WebhookOptionsInput<M> | undefined): WebhookOptions<M> => {
  const given: Readonly<Record<string, unknown>> = input ?? {}
  // The cast: keys and defaults come from MODULE_OPTIONS[m], the table module m's schemas are built from.
  return Object.fromEntries(
    Object.entries(MODULE_OPTIONS[m]).map(([k, v]) => [k, k in given ? given[k] : v.default])
  ) as WebhookOptions<M>
}

export const WebhookInfo = Schema.Struct({
  name: Schema.String,
  avatar: Schema.NullOr(Schema.String),
  channel_id: Schema.String
}).annotate({ identifier: "WebhookInfo" })
export type WebhookInfo = typeof WebhookInfo.Type

export const DisplayInfo = Schema.Struct({
  user_name: Schema.String,
  display_name: Schema.String,
  user_url: Schema.String
}).annotate({ identifier: "DisplayInfo" })
export const StreamingDisplayInfo = Schema.Struct({
  ...DisplayInfo.fields,
  game_names: Schema.NullOr(Schema.Array(Schema.String))
}).annotate({ identifier: "StreamingDisplayInfo" })
export type DisplayInfo = typeof DisplayInfo.Type & { readonly game_names?: ReadonlyArray<string> | null }

const feedSchema = <M extends FeedModuleName, D extends Schema.Top | undefined>(
  m: M,
  options: ReturnType<typeof outputOptions<M>>,
  display: D
) =>
  Schema.Struct({
    id: Schema.String,
    feed_identifier: Schema.String,
    webhook_options: options,
    ...(display === undefined ? {} : { display_info: display as Exclude<D, undefined> }),
    webhook_info: WebhookInfo
  } as {
    id: Schema.String
    feed_identifier: Schema.String
    webhook_options: ReturnType<typeof outputOptions<M>>
    webhook_info: typeof WebhookInfo
  } & (D extends Schema.Top ? { display_info: D } : {})).annotate({ identifier: `${m}_feed` })

/** The rule across a create's fields, in the words of its 400 at `webhook_channel` (also services/feeds/FeedsBody.ts). */
export const WEBHOOK_REQUIRED = "one of webhook_channel and webhook_url is required"

const createSchema = <M extends FeedModuleName>(m: M, options: ReturnType<typeof inputOptions<M>>) =>
  Schema.Struct({
    feed_identifier: text(1, 2048),
    webhook_channel: Schema.optionalKey(Snowflake),
    webhook_url: Schema.optionalKey(text(0, 2048)),
    webhook_options: Schema.optionalKey(options)
  }).check(
    Schema.makeFilter((body) =>
      body.webhook_channel === undefined && body.webhook_url === undefined
        ? { path: ["webhook_channel"], issue: WEBHOOK_REQUIRED }
        : undefined
    )
  ).annotate({ identifier: `${m}_feed_create` })

/**
 * PATCH body: only `webhook_options`. `feed_identifier`, `webhook_channel` and `webhook_url` are
 * named so that the refusal says they cannot change (decisions.md: 400).
 */
const immutable = Schema.optionalKey(
  Schema.Unknown.check(Schema.makeFilter(() => "cannot be changed after creation"))
)
const updateSchema = <M extends FeedModuleName>(m: M) =>
  Schema.Struct({
    webhook_options: inputOptions(m, true),
    feed_identifier: immutable,
    webhook_channel: immutable,
    webhook_url: immutable
  }).annotate({ identifier: `${m}_feed_update` })

const module = <M extends FeedModuleName, D extends Schema.Top | undefined>(m: M, display: D) => {
  const options = outputOptions(m)
  const optionsInput = inputOptions(m)
  const feed = feedSchema(m, options, display)
  return {
    name: m,
    /** Every option present: the answer's shape (`withDefaults` makes one from `optionsInput`). */
    options,
    /** Any subset of the options, an omitted one at its default: a request's, and a stored feed's. */
    optionsInput,
    feed,
    feeds: Schema.Struct({ feeds: Schema.Array(feed) }),
    create: createSchema(m, inputOptions(m, true)),
    // Its own instance, as before: the OpenAPI document names it `<m>_webhook_options_input_1`.
    update: updateSchema(m)
  }
}

export const FeedModules = {
  photo: module("photo", DisplayInfo),
  forum: module("forum", undefined),
  rss: module("rss", undefined),
  streaming: module("streaming", StreamingDisplayInfo),
  microblog: module("microblog", DisplayInfo),
  video: module("video", DisplayInfo)
}

type Modules = typeof FeedModules

/** Module `M`'s options, every one present (decoded by `FeedModules[M].options`). */
export type WebhookOptions<M extends FeedModuleName = FeedModuleName> = Modules[M]["options"]["Type"]
/**
 * Any subset of module `M`'s options (decoded by `FeedModules[M].optionsInput`, which has this type):
 * written as `Partial` so that TypeScript sees `WebhookOptions<M>` fit it for a generic `M` too.
 */
export type WebhookOptionsInput<M extends FeedModuleName = FeedModuleName> = Partial<WebhookOptions<M>>

/** A create body of module `M` (what `FeedModules[M].create` decodes). */
export interface FeedCreate<M extends FeedModuleName = FeedModuleName> {
  readonly feed_identifier: string
  readonly webhook_channel?: string
  readonly webhook_url?: string
  readonly webhook_options?: WebhookOptionsInput<M>
}

/** A feed of module `M` as the wire shows it (exactly `FeedModules[M].feed`); without `M`, any module's. */
export type Feed<M extends FeedModuleName = FeedModuleName> = Modules[M]["feed"]["Type"]

export const UserLookup = Schema.Struct({
  userId: Schema.String,
  userName: Schema.String,
  displayName: Schema.String
}).annotate({ identifier: "UserLookup" })
export type UserLookup = typeof UserLookup.Type

export const GameLookup = Schema.Struct({ gameId: Schema.String, gameName: Schema.String }).annotate({
  identifier: "GameLookup"
})
export type GameLookup = typeof GameLookup.Type

export const LOOKUP_MODULES = ["photo", "streaming", "microblog", "video"] as const
export type LookupModule = typeof LOOKUP_MODULES[number]
export const isLookupModule = (m: FeedModuleName): m is LookupModule => LOOKUP_MODULES.some((l) => l === m)
