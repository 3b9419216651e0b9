/**
 * The normalised item a source connector produces: one shape per feed module, a union on `module`.
 * The delivery rules (Filters.ts, Render.ts) read only these fields, so a connector's job is to fill
 * them; `ItemJson` carries an item through a job payload (dates as ISO 8601 strings).
 *
 * Conventions for every shape:
 * - `id` is the dedup key of this *event*, unique per source: the platform's own id for a post
 *   (RSS: guid, else link, else a hash of title+date); events of one thing get their own key,
 *   e.g. `<streamId>:offline`, `<videoId>:updated:<ISO time of the change>`.
 * - `url` is the item URL of delivery.md §3 (appended to the message and `%url%`): rss the item
 *   link, forum the permalink, streaming the channel URL, microblog the post URL, video the watch
 *   URL, photo the permalink. Absolute, already resolved against the feed or site.
 * - `publishedAt` is the item's own time, the one `%timestamp…%` shows: the publication; for video
 *   the video's publication (also for `updated`); for streaming the stream's start (also for
 *   `offline`).
 * - `eventAt` is when this event happened: the age limit and "oldest first" use it. Equal to
 *   `publishedAt` for a post; the change for a video `updated`; the end for a stream `offline`.
 * - Absent values are `null` (never `""` or `undefined`); absent lists are `[]`. Texts are plain
 *   text with entities decoded, except rss `contentHtml`, which is the feed's HTML.
 */
import { Schema } from "effect"
import type { FeedModuleName } from "../../../domain/platform/Platform.ts"

const Id = Schema.String.check(Schema.isMinLength(1))
const Url = Schema.String.check(Schema.isMinLength(1))
const Maybe = Schema.NullOr(Schema.String)
const Strings = Schema.Array(Schema.String)

const common = {
  id: Id,
  url: Url,
  publishedAt: Schema.Date,
  eventAt: Schema.Date
}

export const RssItem = Schema.Struct({
  module: Schema.Literal("rss"),
  ...common,
  title: Maybe,
  author: Maybe,
  /** description / content:encoded (RSS) or content, else summary (Atom), as HTML. */
  contentHtml: Maybe,
  /** The first enclosure or media:content URL. */
  mediaUrl: Maybe,
  categories: Strings,
  /** The channel's (feed's) own title, link, image and the URL the feed is read from. */
  feedTitle: Maybe,
  siteUrl: Maybe,
  feedUrl: Url,
  feedImage: Maybe
}).annotate(
  // Stryker disable next-line ObjectLiteral,StringLiteral: the identifier only names the schema in JSON Schema and decode diagnostics; no API publishes this schema and no decode result changes
  { identifier: "RssItem" }
)
export type RssItem = typeof RssItem.Type

export const ForumItem = Schema.Struct({
  module: Schema.Literal("forum"),
  ...common,
  /** The subreddit's name without `r/` (`typescript`). */
  subreddit: Schema.String,
  /** The subreddit's fullname as the platform spells it (Reddit: `subreddit_id`, `t5_…`). */
  subredditFullname: Schema.String,
  author: Schema.String,
  title: Schema.String,
  flair: Maybe,
  over18: Schema.Boolean,
  /** Where the post points: the link of a link post, the permalink of a text post. */
  contentUrl: Url,
  /** A text post's body as Markdown (Reddit's `selftext`): the embed's description; null when there is none. */
  selfText: Maybe,
  permalink: Url,
  subredditIcon: Maybe
}).annotate(
  // Stryker disable next-line ObjectLiteral,StringLiteral: the identifier only names the schema in JSON Schema and decode diagnostics; no API publishes this schema and no decode result changes
  { identifier: "ForumItem" }
)
export type ForumItem = typeof ForumItem.Type

export const StreamingItem = Schema.Struct({
  module: Schema.Literal("streaming"),
  ...common,
  event: Schema.Literals(["live", "offline"]),
  displayName: Schema.String,
  /** The login name. */
  username: Schema.String,
  /**
   * The game the stream *started* with, name and id, also on its `offline` event: filter_game
   * and `%game%` read these; a game change during the stream changes neither.
   */
  game: Maybe,
  gameId: Maybe,
  /** The stream title. */
  status: Maybe,
  channelUrl: Url,
  profileImage: Maybe
}).annotate(
  // Stryker disable next-line ObjectLiteral,StringLiteral: the identifier only names the schema in JSON Schema and decode diagnostics; no API publishes this schema and no decode result changes
  { identifier: "StreamingItem" }
)
export type StreamingItem = typeof StreamingItem.Type

export const MicroblogItem = Schema.Struct({
  module: Schema.Literal("microblog"),
  ...common,
  /** The handle without `@`. */
  screenName: Schema.String,
  name: Schema.String,
  text: Schema.String,
  /** Photos and video thumbnails of the post, in order. */
  mediaUrls: Strings,
  postUrl: Url,
  profileImage: Maybe
}).annotate(
  // Stryker disable next-line ObjectLiteral,StringLiteral: the identifier only names the schema in JSON Schema and decode diagnostics; no API publishes this schema and no decode result changes
  { identifier: "MicroblogItem" }
)
export type MicroblogItem = typeof MicroblogItem.Type

export const VideoItem = Schema.Struct({
  module: Schema.Literal("video"),
  ...common,
  event: Schema.Literals(["added", "updated"]),
  title: Schema.String,
  /** The channel title. */
  channel: Schema.String,
  /**
   * Whole seconds (the connector converts YouTube's ISO 8601 `PT1H2M3S`, see `isoDurationSeconds`);
   * null when unknown (a live or upcoming broadcast, a notification without details).
   */
  durationSeconds: Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  description: Maybe,
  tags: Strings,
  thumbnail: Maybe,
  watchUrl: Url,
  channelThumbnail: Maybe,
  ageRestricted: Schema.Boolean
}).annotate(
  // Stryker disable next-line ObjectLiteral,StringLiteral: the identifier only names the schema in JSON Schema and decode diagnostics; no API publishes this schema and no decode result changes
  { identifier: "VideoItem" }
)
export type VideoItem = typeof VideoItem.Type

export const PhotoItem = Schema.Struct({
  module: Schema.Literal("photo"),
  ...common,
  /** The only photo event type (filter_event `post`). */
  event: Schema.Literal("post"),
  username: Schema.String,
  /** The full name; null or blank shows the username. */
  fullname: Maybe,
  caption: Maybe,
  /** The image (a video's cover image). */
  mediaUrl: Maybe,
  /** Without `#`. */
  hashtags: Strings,
  profileUrl: Url,
  permalink: Url,
  profilePicture: Maybe
}).annotate(
  // Stryker disable next-line ObjectLiteral,StringLiteral: the identifier only names the schema in JSON Schema and decode diagnostics; no API publishes this schema and no decode result changes
  { identifier: "PhotoItem" }
)
export type PhotoItem = typeof PhotoItem.Type

export const Item = Schema.Union([RssItem, ForumItem, StreamingItem, MicroblogItem, VideoItem, PhotoItem])
  .annotate(
    // Stryker disable next-line ObjectLiteral,StringLiteral: the identifier only names the schema in JSON Schema and decode diagnostics; no API publishes this schema and no decode result changes
    { identifier: "Item" }
  )
export type Item = typeof Item.Type
export type ItemOf<M extends FeedModuleName> = Extract<Item, { readonly module: M }>

/** JSON codec for job payloads and stored previews: `Schema.encodeSync(ItemJson)(item)`. */
export const ItemJson = Schema.toCodecJson(Item)

/** The title a list shows for the item (the preview's `title`), null when it has none. */
export const itemTitle = (item: Item): string | null => {
  switch (item.module) {
    case "rss":
    case "forum":
    case "video":
      return item.title
    case "streaming":
      return item.status
    case "microblog":
      return item.text
    case "photo":
      return item.caption
  }
}

/** The event type filter_event reads; null for modules without event types. */
export const itemEvent = (item: Item): string | null =>
  item.module === "streaming" || item.module === "video" || item.module === "photo" ? item.event : null

/** Seconds of an ISO 8601 duration (`PT1H2M3S`, `P1DT2H`); null when unreadable or with years or months. */
export const isoDurationSeconds = (iso: string): number | null => {
  const m = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(iso.trim())
  if (m === null || iso.trim() === "P" || iso.trim().endsWith("T")) return null
  const [w, d, h, min, s] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)))
  return Math.floor((((w! * 7 + d!) * 24 + h!) * 60 + min!) * 60 + s!)
}
