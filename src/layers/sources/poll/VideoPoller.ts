/**
 * The video connector: YouTube Data API v3 with the API key. The channel (title, thumbnail, uploads
 * playlist) is read once a day (`/channels`, kept in the cursor); each poll reads the newest
 * uploads (`/playlistItems` with the snippet, so an edited title or description changes the listing's
 * ETag; conditional: YouTube answers 304 to it) and their details
 * (`/videos`: duration, tags, `contentRating.ytRating` for age restriction). Every upload is an
 * `added` item (id: the video id); a known video whose title or description changed is an `updated`
 * item (id `<videoId>:updated:<hash of the new text>`, so a repeated poll repeats the same id),
 * eventAt the poll that saw it. The cursor keeps the text hash of the recent uploads only.
 */
import { Clock, Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import { createHash } from "node:crypto"
import { isoDurationSeconds, type VideoItem } from "../../../services/delivery/render/Item.ts"
import type { PollFailed, PollResult, PollState } from "../../../services/sources/SourcePoller.ts"
import { join } from "../Upstream.ts"
import type { VideoOptions } from "../Video.ts"
import { decodeJson } from "./Api.ts"
import { failed, type Fetched, type Fetcher, json, unlessUnchanged, validators } from "./Fetch.ts"

const Str = Schema.optionalKey(Schema.NullOr(Schema.String))
const Thumb = Schema.optionalKey(Schema.Struct({ url: Schema.String }))
const Thumbs = Schema.optionalKey(Schema.Struct({ default: Thumb, medium: Thumb, high: Thumb, standard: Thumb, maxres: Thumb }))
const Channels = Schema.Struct({
  items: Schema.optionalKey(Schema.Array(Schema.Struct({
    id: Schema.String,
    snippet: Schema.Struct({ title: Schema.String, thumbnails: Thumbs }),
    contentDetails: Schema.Struct({ relatedPlaylists: Schema.Struct({ uploads: Schema.String }) })
  })))
})
const PlaylistItems = Schema.Struct({
  items: Schema.optionalKey(Schema.Array(Schema.Struct({
    contentDetails: Schema.Struct({ videoId: Schema.String })
  })))
})
const Videos = Schema.Struct({
  items: Schema.optionalKey(Schema.Array(Schema.Struct({
    id: Schema.String,
    snippet: Schema.Struct({
      publishedAt: Schema.String,
      title: Schema.String,
      description: Str,
      channelTitle: Str,
      tags: Schema.optionalKey(Schema.Array(Schema.String)),
      thumbnails: Thumbs,
      liveBroadcastContent: Str
    }),
    contentDetails: Schema.optionalKey(Schema.Struct({
      duration: Str,
      contentRating: Schema.optionalKey(Schema.Struct({ ytRating: Str }))
    }))
  })))
})
type Video = NonNullable<typeof Videos.Type.items>[number]

const Channel = Schema.Struct({ title: Schema.String, thumbnail: Schema.NullOr(Schema.String), uploads: Schema.String, at: Schema.Number })
type Channel = typeof Channel.Type
const Cursor = Schema.Struct({ channel: Channel, known: Schema.Record(Schema.String, Schema.String) })
type Cursor = typeof Cursor.Type
const readCursor = Schema.decodeUnknownOption(Cursor)

export interface VideoPollOptions extends VideoOptions {
  /** Uploads read per poll (1–50, default 20). */
  readonly maxResults?: number | undefined
  readonly concurrency?: number | undefined
}

const CHANNEL_ID = /^UC[A-Za-z0-9_-]{22}$/
const CHANNEL_REFRESH_MS = 24 * 3600 * 1000

const best = (t: (typeof Thumbs)["Type"] | undefined) =>
  t?.maxres?.url ?? t?.standard?.url ?? t?.high?.url ?? t?.medium?.url ?? t?.default?.url ?? null

export const textHash = (title: string, description: string | null) =>
  createHash("sha256").update(`${title}\n${description ?? ""}`).digest("hex").slice(0, 16)

/** The uploads as items, and the `updated` events against `known` (videoId → text hash). */
export const videoItems = (
  videos: ReadonlyArray<Video>,
  channel: Channel,
  known: Readonly<Record<string, string>> | undefined,
  now: Date
): { readonly items: ReadonlyArray<VideoItem>; readonly known: Record<string, string> } => {
  const items: Array<VideoItem> = []
  const next: Record<string, string> = {}
  for (const v of videos) {
    const s = v.snippet
    const description = s.description === undefined || s.description === null || s.description === "" ? null : s.description
    const published = new Date(s.publishedAt)
    if (Number.isNaN(published.getTime())) continue
    const duration = v.contentDetails?.duration
    const base = {
      module: "video" as const,
      url: `https://www.youtube.com/watch?v=${v.id}`,
      publishedAt: published,
      title: s.title,
      channel: s.channelTitle ?? channel.title,
      // A live or upcoming broadcast has no duration yet (YouTube says P0D).
      durationSeconds: (s.liveBroadcastContent ?? "none") !== "none" || duration === undefined || duration === null
        ? null
        : isoDurationSeconds(duration),
      description,
      tags: s.tags ?? [],
      thumbnail: best(s.thumbnails),
      watchUrl: `https://www.youtube.com/watch?v=${v.id}`,
      channelThumbnail: channel.thumbnail,
      ageRestricted: v.contentDetails?.contentRating?.ytRating === "ytAgeRestricted"
    }
    const hash = textHash(s.title, description)
    next[v.id] = hash
    items.push({ ...base, id: v.id, eventAt: published, event: "added" })
    const before = known?.[v.id]
    if (before !== undefined && before !== hash) items.push({ ...base, id: `${v.id}:updated:${hash}`, eventAt: now, event: "updated" })
  }
  return { items, known: next }
}

export const makeVideoPoller = (fetcher: Fetcher, options: VideoPollOptions) => {
  const baseUrl = options.baseUrl ?? "https://www.googleapis.com/youtube/v3"
  const maxResults = String(Math.min(50, Math.max(1, options.maxResults ?? 20)))

  const call = (path: string, params: Record<string, string>, previous?: PollState) =>
    fetcher.fetch({
      request: HttpClientRequest.get(join(baseUrl, path), { acceptJson: true, urlParams: { ...params, key: options.apiKey } }),
      name: "YouTube",
      previous,
      concurrency: options.concurrency
    })

  /** 400 keyInvalid, 403 quotaExceeded / forbidden: the gateway's problem, said in words. */
  const refused = (f: Fetched): PollFailed => {
    const reason = (json(f) as { readonly error?: { readonly errors?: ReadonlyArray<{ readonly reason?: string }> } } | undefined)
      ?.error?.errors?.[0]?.reason
    return reason === "quotaExceeded" || reason === "dailyLimitExceeded"
      ? failed("http", "YouTube's daily quota of the gateway is used up; polling resumes when it resets.", { status: f.status })
      : failed("http", `YouTube refused the request (${f.status}${reason === undefined ? "" : `, ${reason}`}).`, { status: f.status })
  }

  const channelOf = (id: string, cursor: Cursor | undefined, now: number): Effect.Effect<Channel, PollFailed> =>
    cursor !== undefined && now - cursor.channel.at < CHANNEL_REFRESH_MS
      ? Effect.succeed(cursor.channel)
      : call("/channels", { part: "snippet,contentDetails", id }).pipe(
        Effect.flatMap((f) => f.status === 200 ? decodeJson(Channels, "YouTube")(f) : Effect.fail(refused(f))),
        Effect.flatMap(({ items }) => {
          const c = items?.[0]
          return c === undefined
            ? Effect.fail(failed("gone", `The YouTube channel ${id} no longer exists.`))
            : Effect.succeed({ title: c.snippet.title, thumbnail: best(c.snippet.thumbnails), uploads: c.contentDetails.relatedPlaylists.uploads, at: now })
        })
      )

  const poll = (identifier: string, previous: PollState): Effect.Effect<PollResult, PollFailed> =>
    Effect.gen(function*() {
      const id = identifier.trim()
      if (!CHANNEL_ID.test(id)) return yield* Effect.fail(failed("gone", `"${identifier}" is not a YouTube channel id.`))
      const prior = readCursor(previous.cursor)
      const cursor = prior._tag === "Some" ? prior.value : undefined
      const now = yield* Clock.currentTimeMillis
      const channel = yield* channelOf(id, cursor, now)
      // The validators belong to the uploads listing; without a known cursor, ask afresh.
      const listing = yield* call(
        "/playlistItems",
        { part: "snippet,contentDetails", playlistId: channel.uploads, maxResults },
        cursor === undefined ? undefined : previous
      )
      // A channel without uploads has no uploads playlist (404 playlistNotFound).
      if (listing.status === 404) {
        return { _tag: "Items", items: [], state: { etag: null, lastModified: null, bodyHash: null, cursor: { channel, known: {} } } } as const
      }
      if (listing.status !== 200 && listing.status !== 304) return yield* Effect.fail(refused(listing))
      const state = cursor === undefined ? { ...previous, bodyHash: null, etag: null, lastModified: null } : previous
      return yield* unlessUnchanged(state, listing, (bodyHash) =>
        Effect.gen(function*() {
          const ids = ((yield* decodeJson(PlaylistItems, "YouTube")(listing)).items ?? []).map((i) => i.contentDetails.videoId)
          const videos = ids.length === 0 ? [] : yield* call("/videos", { part: "snippet,contentDetails", id: ids.join(",") }).pipe(
            Effect.flatMap((f) => f.status === 200 ? decodeJson(Videos, "YouTube")(f) : Effect.fail(refused(f))),
            Effect.map((v) => v.items ?? [])
          )
          const result = videoItems(videos, channel, cursor?.known, new Date(now))
          return {
            _tag: "Items",
            items: result.items,
            state: { ...validators(listing), bodyHash, cursor: { channel, known: result.known } }
          } as const
        })).pipe(
          // A refreshed channel record is worth keeping even when the uploads did not change.
          Effect.map((r): PollResult => r._tag === "NotModified" && cursor !== undefined ? { ...r, state: { ...r.state, cursor: { channel, known: cursor.known } } } : r)
        )
    }).pipe(Effect.withSpan("SourcePoller.video"))

  return { poll }
}
