/**
 * YouTube Data API v3 twin under `/sandbox/video/youtube/v3`: `channels` (`id=` or `forHandle=`;
 * parts snippet, contentDetails with the uploads playlist, statistics), `search` (channels by
 * title), `playlistItems` (a channel's uploads playlist `UU…`: the published videos, newest first)
 * and `videos` (snippet, contentDetails with duration and `contentRating.ytRating` for
 * age-restricted videos, statistics). An API key (`key` or `X-goog-api-key`) is required; like
 * YouTube, a list with no match has no `items`, every list carries an ETag and `If-None-Match`
 * gets a 304. Only the parts asked for are sent, so a listing of `contentDetails` does not change
 * when a video's title does (as on YouTube).
 */
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { sandboxRoute } from "../SandboxRoute.ts"
import { header, json, query } from "./Http.ts"
import { VIDEO_CHANNELS, type VideoChannel } from "./Seed.ts"
import type { Video } from "./Store.ts"
import { SourceState } from "./Store.ts"

const error = (code: number, status: string, reason: string, message: string) =>
  json({ error: { code, message, errors: [{ message, domain: "global", reason }], status } }, code)

const checked = Effect.gen(function*() {
  const q = yield* query
  if ((q.get("key") ?? "") === "" && (yield* header("x-goog-api-key")) === "") {
    return { denied: error(403, "PERMISSION_DENIED", "forbidden", "The request is missing a valid API key.") }
  }
  const parts = (q.get("part") ?? "").split(",").map((p) => p.trim()).filter((p) => p !== "")
  if (parts.length === 0) return { denied: error(400, "INVALID_ARGUMENT", "required", "Required parameter: part") }
  return { q, parts: new Set(parts) }
})

const etagOf = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 27)

/** `UCxxxx` → its uploads playlist `UUxxxx`. */
export const uploadsOf = (channelId: string) => `UU${channelId.slice(2)}`

const channelThumbnails = (c: VideoChannel) => ({
  default: { url: `https://yt3.ggpht.com/sandbox/${c.id}=s88-c-k-c0x00ffffff-no-rj`, width: 88, height: 88 },
  medium: { url: `https://yt3.ggpht.com/sandbox/${c.id}=s240-c-k-c0x00ffffff-no-rj`, width: 240, height: 240 },
  high: { url: `https://yt3.ggpht.com/sandbox/${c.id}=s800-c-k-c0x00ffffff-no-rj`, width: 800, height: 800 }
})

const videoThumbnails = (id: string) => ({
  default: { url: `https://i.ytimg.com/vi/${id}/default.jpg`, width: 120, height: 90 },
  medium: { url: `https://i.ytimg.com/vi/${id}/mqdefault.jpg`, width: 320, height: 180 },
  high: { url: `https://i.ytimg.com/vi/${id}/hqdefault.jpg`, width: 480, height: 360 },
  standard: { url: `https://i.ytimg.com/vi/${id}/sddefault.jpg`, width: 640, height: 480 },
  maxres: { url: `https://i.ytimg.com/vi/${id}/maxresdefault.jpg`, width: 1280, height: 720 }
})

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/** A resource with only the parts asked for, and its own etag. */
const resource = (kind: string, id: unknown, parts: ReadonlySet<string>, sections: Record<string, unknown>) => {
  const body = Object.fromEntries(Object.entries(sections).filter(([part]) => parts.has(part)))
  return { kind, etag: etagOf([id, body]), id, ...body }
}

const channelResource = (c: VideoChannel, parts: ReadonlySet<string>, videoCount: number) =>
  resource("youtube#channel", c.id, parts, {
    snippet: {
      title: c.title,
      description: `${c.title} in the sandbox.`,
      ...(c.customUrl === undefined ? {} : { customUrl: c.customUrl }),
      publishedAt: "2020-01-01T00:00:00Z",
      thumbnails: channelThumbnails(c),
      localized: { title: c.title, description: `${c.title} in the sandbox.` }
    },
    contentDetails: { relatedPlaylists: { likes: "", uploads: uploadsOf(c.id) } },
    statistics: { viewCount: "0", subscriberCount: "1000", hiddenSubscriberCount: false, videoCount: String(videoCount) }
  })

/** A list answer with its ETag; `If-None-Match` on the same ETag → 304. */
const list = (kind: string, items: ReadonlyArray<unknown>, perPage: number, total = items.length) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const etag = etagOf([kind, items])
    const inm = request.headers["if-none-match"]
    if (inm !== undefined && inm.split(",").some((t) => t.trim().replace(/^W\//, "").replace(/"/g, "") === etag)) {
      return HttpServerResponse.empty({ status: 304, headers: { etag: `"${etag}"` } })
    }
    return json(
      {
        kind,
        etag,
        pageInfo: { totalResults: total, resultsPerPage: perPage },
        ...(items.length === 0 ? {} : { items })
      },
      200,
      { etag: `"${etag}"`, "cache-control": "private, max-age=0, must-revalidate, no-transform" }
    )
  })

const maxResultsOf = (q: URLSearchParams, fallback: number) => {
  const raw = q.get("maxResults")
  if (raw === null) return fallback
  const n = Number(raw)
  return Number.isInteger(n) && n >= 0 && n <= 50 ? n : undefined
}
const badMaxResults = error(400, "INVALID_ARGUMENT", "invalidParameter", "Invalid value for parameter maxResults: must be between 0 and 50.")

const channels = Effect.gen(function*() {
  const c = yield* checked
  if (c.denied !== undefined) return c.denied
  const store = yield* SourceState
  const ids = (c.q.get("id") ?? "").split(",").filter((s) => s.length > 0)
  const handle = (c.q.get("forHandle") ?? "").replace(/^@/, "").toLowerCase()
  if (ids.length === 0 && handle === "") {
    return error(400, "INVALID_ARGUMENT", "missingRequiredParameter", "No filter selected. Expected one of: forHandle, id, ...")
  }
  const found = VIDEO_CHANNELS.filter((ch) =>
    ids.includes(ch.id) || (handle !== "" && ch.customUrl?.toLowerCase() === `@${handle}`)
  )
  return yield* list(
    "youtube#channelListResponse",
    found.map((ch) => channelResource(ch, c.parts, store.videos.get(ch.id)?.length ?? 0)),
    5
  )
})

const search = Effect.gen(function*() {
  const c = yield* checked
  if (c.denied !== undefined) return c.denied
  const q = (c.q.get("q") ?? "").toLowerCase()
  const type = c.q.get("type") ?? "video,channel,playlist"
  const max = maxResultsOf(c.q, 5)
  if (max === undefined) return badMaxResults
  const found = type.split(",").includes("channel") && q !== ""
    ? VIDEO_CHANNELS.filter((ch) => ch.title.toLowerCase().includes(q)).slice(0, max)
    : []
  return yield* list(
    "youtube#searchListResponse",
    found.map((ch) => ({
      kind: "youtube#searchResult",
      etag: etagOf(["search", ch.id]),
      id: { kind: "youtube#channel", channelId: ch.id },
      snippet: { channelId: ch.id, title: ch.title, description: "", channelTitle: ch.title, publishedAt: "2020-01-01T00:00:00Z" }
    })),
    max
  )
})

const newestFirst = (videos: ReadonlyArray<Video>) => [...videos].sort((a, b) => b.publishedAt - a.publishedAt)

const playlistItems = Effect.gen(function*() {
  const c = yield* checked
  if (c.denied !== undefined) return c.denied
  const store = yield* SourceState
  const playlistId = c.q.get("playlistId") ?? ""
  if (playlistId === "") {
    return error(400, "INVALID_ARGUMENT", "missingRequiredParameter", "No filter selected. Expected one of: playlistId, id")
  }
  const max = maxResultsOf(c.q, 5)
  if (max === undefined) return badMaxResults
  const channel = VIDEO_CHANNELS.find((ch) => uploadsOf(ch.id) === playlistId)
  const videos = channel === undefined ? [] : newestFirst(store.videos.get(channel.id) ?? [])
  if (channel === undefined || videos.length === 0) {
    return error(
      404,
      "NOT_FOUND",
      "playlistNotFound",
      "The playlist identified with the request's <code>playlistId</code> parameter cannot be found."
    )
  }
  const items = videos.slice(0, max).map((v, position) =>
    resource("youtube#playlistItem", Buffer.from(`${playlistId}.${v.id}`).toString("base64url"), c.parts, {
      snippet: {
        ...videoSnippet(v, channel),
        playlistId,
        position,
        resourceId: { kind: "youtube#video", videoId: v.id },
        videoOwnerChannelTitle: channel.title,
        videoOwnerChannelId: channel.id
      },
      contentDetails: { videoId: v.id, videoPublishedAt: iso(v.publishedAt) },
      status: { privacyStatus: "public" }
    })
  )
  return yield* list("youtube#playlistItemListResponse", items, max, videos.length)
})

/** The snippet fields a playlist item and a video share. */
const videoSnippet = (
  v: Video,
  channel: { readonly id: string; readonly title: string }
) => ({
  publishedAt: iso(v.publishedAt),
  channelId: channel.id,
  title: v.title,
  description: v.description,
  thumbnails: videoThumbnails(v.id),
  channelTitle: channel.title
})

const videos = Effect.gen(function*() {
  const c = yield* checked
  if (c.denied !== undefined) return c.denied
  const store = yield* SourceState
  const ids = (c.q.get("id") ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  if (ids.length === 0) {
    return error(400, "INVALID_ARGUMENT", "missingRequiredParameter", "No filter selected. Expected one of: myRating, chart, id")
  }
  if (ids.length > 50) return error(400, "INVALID_ARGUMENT", "invalidParameter", "Too many ids: at most 50.")
  const items = ids.flatMap((id) => {
    for (const channel of VIDEO_CHANNELS) {
      const v = store.videos.get(channel.id)?.find((x) => x.id === id)
      if (v === undefined) continue
      return [resource("youtube#video", v.id, c.parts, {
        snippet: {
          ...videoSnippet(v, channel),
          ...(v.tags.length === 0 ? {} : { tags: v.tags }),
          categoryId: "22",
          liveBroadcastContent: "none",
          localized: { title: v.title, description: v.description },
          defaultAudioLanguage: "en"
        },
        contentDetails: {
          duration: v.duration,
          dimension: "2d",
          definition: "hd",
          caption: "false",
          licensedContent: false,
          contentRating: v.ageRestricted ? { ytRating: "ytAgeRestricted" } : {},
          projection: "rectangular"
        },
        statistics: { viewCount: "0", likeCount: "0", favoriteCount: "0", commentCount: "0" },
        status: { uploadStatus: "processed", privacyStatus: "public", license: "youtube", embeddable: true, madeForKids: false }
      })]
    }
    return []
  })
  return yield* list("youtube#videoListResponse", items, items.length)
})

export const VideoTwin = [
  sandboxRoute("GET", "/sandbox/video/youtube/v3/channels", channels),
  sandboxRoute("GET", "/sandbox/video/youtube/v3/search", search),
  sandboxRoute("GET", "/sandbox/video/youtube/v3/playlistItems", playlistItems),
  sandboxRoute("GET", "/sandbox/video/youtube/v3/videos", videos)
] as const
