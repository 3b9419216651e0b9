/**
 * Publishing at the channel sources: streaming (`live` starts or changes the stream on air,
 * `offline` ends it) and video (`added` uploads a video, `updated` changes its title or description).
 */
import { event, fail, iso, type Outcome } from "./PublishOutcome.ts"
import type { EventBody } from "./PublishBody.ts"
import { GAMES, STREAMING_USERS, VIDEO_CHANNELS } from "./Seed.ts"
import type { SourceStore } from "./Store.ts"

export const publishStreaming = (store: SourceStore, identifier: string, b: EventBody, now: number): Outcome => {
  const user = STREAMING_USERS.find((u) => u.id === identifier || u.login === identifier.toLowerCase())
  if (user === undefined) return fail(404, `streaming: no sandbox channel "${identifier}" (${STREAMING_USERS.map((u) => u.login).join(", ")})`)
  const channelUrl = `https://www.twitch.tv/${user.login}`
  if (b.url !== undefined && b.url.replace(/\/+$/, "").toLowerCase() !== channelUrl) {
    return fail(400, `url: a stream's URL is its channel's, ${channelUrl}`, "url")
  }
  const current = store.streams.get(user.id)
  if (b.type === "offline") {
    const streamId = b.id?.replace(/:offline$/, "")
    if (current === undefined) return fail(409, `${user.login} is not live: publish a "live" event first`)
    if (streamId !== undefined && streamId !== current.id) return fail(409, `id: the live stream of ${user.login} is ${current.id}, not ${streamId}`, "id")
    store.streams.delete(user.id)
    return event("streaming", user.login, user.id, {
      id: `${current.id}:offline`,
      type: "offline",
      title: current.title,
      text: null,
      url: channelUrl,
      author: user.displayName,
      flair: null,
      nsfw: current.mature,
      game: current.gameName === "" ? null : current.gameName,
      publishedAt: now,
      media: []
    }, { stream_id: current.id, started_at: iso(current.startedAt) })
  }
  const game = b.game === undefined ? undefined : GAMES.find((g) => g.name.toLowerCase() === b.game!.trim().toLowerCase())
  if (b.game !== undefined && game === undefined) {
    return fail(400, `game: "${b.game}" is not a sandbox game (${GAMES.map((g) => g.name).join(", ")})`, "game")
  }
  let stream = current
  if (stream !== undefined && (b.id === undefined || b.id === stream.id)) {
    // The same stream: a new title or game during it, not a new start.
    if (b.title !== undefined) stream.title = b.title
    if (game !== undefined) {
      stream.gameId = game.id
      stream.gameName = game.name
    }
    if (b.nsfw) stream.mature = true
  } else {
    const id = b.id ?? `4${String(store.next()).padStart(10, "0")}`
    if (store.streamIds.has(id)) return fail(409, `id: a stream ${id} was already started`, "id")
    store.streamIds.add(id)
    stream = {
      id,
      title: b.title ?? `${user.displayName} in the sandbox`,
      gameId: game?.id ?? "",
      gameName: game?.name ?? "",
      mature: b.nsfw,
      startedAt: b.publishedAt ?? now
    }
    store.streams.set(user.id, stream)
  }
  return event("streaming", user.login, user.id, {
    id: stream.id,
    type: "live",
    title: stream.title,
    text: null,
    url: channelUrl,
    author: user.displayName,
    flair: null,
    nsfw: stream.mature,
    game: stream.gameName === "" ? null : stream.gameName,
    publishedAt: stream.startedAt,
    media: []
  }, { game_id: stream.gameId === "" ? null : stream.gameId })
}

const watchId = (url: string) => {
  const u = new URL(url)
  if (/(^|\.)youtube\.com$/.test(u.hostname) && u.pathname === "/watch") return u.searchParams.get("v") ?? undefined
  if (u.hostname === "youtu.be") return u.pathname.slice(1) || undefined
  return undefined
}

export const publishVideo = (store: SourceStore, identifier: string, b: EventBody, now: number): Outcome => {
  const handle = identifier.toLowerCase()
  const channel = VIDEO_CHANNELS.find((c) => c.id === identifier || (c.customUrl !== undefined && c.customUrl.toLowerCase() === (handle.startsWith("@") ? handle : `@${handle}`)))
  if (channel === undefined) return fail(404, `video: no sandbox channel "${identifier}" (${VIDEO_CHANNELS.map((c) => c.id).join(", ")})`)
  const fromUrl = b.url === undefined ? undefined : watchId(b.url)
  if (b.url !== undefined && fromUrl === undefined) {
    return fail(400, "url: a video's URL is its watch URL, https://www.youtube.com/watch?v=<id> (or leave it out)", "url")
  }
  if (b.id !== undefined && fromUrl !== undefined && b.id !== fromUrl) return fail(400, "url: names another video than id", "url")
  const videos = store.listOf(store.videos, channel.id)
  const answer = (v: { id: string; title: string; description: string; ageRestricted: boolean; publishedAt: number }, type: string, at: number) =>
    event("video", channel.id, channel.id, {
      id: v.id,
      type,
      title: v.title,
      text: v.description,
      url: `https://www.youtube.com/watch?v=${v.id}`,
      author: channel.title,
      flair: null,
      nsfw: v.ageRestricted,
      game: null,
      publishedAt: at,
      media: []
    })
  const wanted = b.id ?? fromUrl
  if (b.type === "updated") {
    if (wanted === undefined) return fail(400, "id: an \"updated\" event needs the id of a published video", "id")
    const video = videos.find((v) => v.id === wanted)
    if (video === undefined) return fail(404, `id: ${channel.title} has no published video "${wanted}"`, "id")
    if (b.title === undefined && b.text === undefined) return fail(400, "title, text: an \"updated\" event changes the title or the description", "title")
    if (b.title !== undefined) video.title = b.title
    if (b.text !== undefined) video.description = b.text
    return answer(video, "updated", now)
  }
  const id = wanted ?? `sbx${store.next().toString(36).padStart(8, "0")}`
  if ([...store.videos.values()].some((list) => list.some((v) => v.id === id))) return fail(409, `id: a video "${id}" was already published`, "id")
  const video = {
    id,
    title: b.title ?? `Sandbox video ${id}`,
    description: b.text ?? "",
    publishedAt: b.publishedAt ?? now,
    duration: b.duration ?? "PT4M13S",
    ageRestricted: b.nsfw,
    tags: []
  }
  videos.push(video)
  return answer(video, "added", video.publishedAt)
}
