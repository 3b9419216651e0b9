/**
 * YouTube Data API v3 twin: `GET /sandbox/video/youtube/v3/channels?part=snippet&id=|forHandle=`
 * and `GET /sandbox/video/youtube/v3/search?part=snippet&type=channel&q=`. An API key (`key` or
 * `X-goog-api-key`) is required; like YouTube, a list with no match has no `items`.
 */
import { Effect } from "effect"
import { sandboxRoute } from "../SandboxRoute.ts"
import { header, json, query } from "./Http.ts"
import { VIDEO_CHANNELS, type VideoChannel } from "./Seed.ts"

const error = (code: number, status: string, reason: string, message: string) =>
  json({ error: { code, message, errors: [{ message, domain: "global", reason }], status } }, code)

const checked = Effect.gen(function*() {
  const q = yield* query
  if ((q.get("key") ?? "") === "" && (yield* header("x-goog-api-key")) === "") {
    return { denied: error(403, "PERMISSION_DENIED", "forbidden", "The request is missing a valid API key.") }
  }
  if ((q.get("part") ?? "") === "") {
    return { denied: error(400, "INVALID_ARGUMENT", "required", "Required parameter: part") }
  }
  return { q }
})

const channelResource = (c: VideoChannel) => ({
  kind: "youtube#channel",
  etag: `sandbox-${c.id}`,
  id: c.id,
  snippet: {
    title: c.title,
    description: `${c.title} in the sandbox.`,
    ...(c.customUrl === undefined ? {} : { customUrl: c.customUrl }),
    publishedAt: "2020-01-01T00:00:00Z",
    thumbnails: {}
  }
})

const list = (kind: string, items: ReadonlyArray<unknown>) =>
  json({
    kind,
    etag: "sandbox",
    pageInfo: { totalResults: items.length, resultsPerPage: 5 },
    ...(items.length === 0 ? {} : { items })
  })

const channels = Effect.gen(function*() {
  const c = yield* checked
  if (c.denied !== undefined) return c.denied
  const ids = (c.q.get("id") ?? "").split(",").filter((s) => s.length > 0)
  const handle = (c.q.get("forHandle") ?? "").replace(/^@/, "").toLowerCase()
  if (ids.length === 0 && handle === "") {
    return error(400, "INVALID_ARGUMENT", "missingRequiredParameter", "No filter selected. Expected one of: forHandle, id, ...")
  }
  const found = VIDEO_CHANNELS.filter((ch) =>
    ids.includes(ch.id) || (handle !== "" && ch.customUrl?.toLowerCase() === `@${handle}`)
  )
  return list("youtube#channelListResponse", found.map(channelResource))
})

const search = Effect.gen(function*() {
  const c = yield* checked
  if (c.denied !== undefined) return c.denied
  const q = (c.q.get("q") ?? "").toLowerCase()
  const type = c.q.get("type") ?? "video,channel,playlist"
  const max = Math.min(50, Math.max(0, Number(c.q.get("maxResults") ?? "5") || 5))
  const found = type.split(",").includes("channel") && q !== ""
    ? VIDEO_CHANNELS.filter((ch) => ch.title.toLowerCase().includes(q)).slice(0, max)
    : []
  return list(
    "youtube#searchListResponse",
    found.map((ch) => ({
      kind: "youtube#searchResult",
      etag: `sandbox-search-${ch.id}`,
      id: { kind: "youtube#channel", channelId: ch.id },
      snippet: { channelId: ch.id, title: ch.title, description: "", channelTitle: ch.title, publishedAt: "2020-01-01T00:00:00Z" }
    }))
  )
})

export const VideoTwin = [
  sandboxRoute("GET", "/sandbox/video/youtube/v3/channels", channels),
  sandboxRoute("GET", "/sandbox/video/youtube/v3/search", search)
] as const
