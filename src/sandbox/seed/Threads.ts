/**
 * Per server, a thread of its first text channel and a forum channel with tags (delivery.md §10):
 * `GET /sandbox` lists them, `GET /channels/{id}` answers them, and neither is in the channel
 * listings (whose three types the contract keeps). Ids: channel indexes 10 (thread) and 11 (forum).
 */
import { BOT2_ID, CHANNEL_INDEX, channelId, GUILDS_BY_DIGIT } from "./Ids.ts"
import type { SeedWebhook } from "./Shapes.ts"

/** Discord's channel types: 11 a public thread, 15 a forum. */
export const PUBLIC_THREAD = 11
export const FORUM = 15

export interface SeedThread {
  readonly id: string
  readonly name: string
  readonly parent_id: string
  readonly guildId: string
}
export interface SeedForum {
  readonly id: string
  readonly name: string
  readonly guildId: string
  readonly tags: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

const servers = [1, 2, 3, 4] as const

export const THREADS: ReadonlyArray<SeedThread> = servers.map((s) => ({
  id: channelId(s, 10),
  name: "feed-updates",
  parent_id: channelId(s, CHANNEL_INDEX.text),
  guildId: GUILDS_BY_DIGIT[s]
}))

/** Forum tag ids: `350000000000000` + server digit + two-digit index. */
export const FORUMS: ReadonlyArray<SeedForum> = servers.map((s) => ({
  id: channelId(s, 11),
  name: "news-forum",
  guildId: GUILDS_BY_DIGIT[s],
  tags: ["News", "Release", "Security"].map((name, i) => ({ id: `350000000000000${s}${String(i + 1).padStart(2, "0")}`, name }))
}))

export const findThread = (id: string): SeedThread | undefined => THREADS.find((t) => t.id === id)
export const findForum = (id: string): SeedForum | undefined => FORUMS.find((f) => f.id === id)

/** Per forum, a FeedsBot webhook (ids `330000000000000` + server digit + `11`): a feed given its URL opens one post per item. */
export const FORUM_WEBHOOKS: ReadonlyArray<SeedWebhook> = FORUMS.map((f, i) => ({
  id: `330000000000000${i + 1}11`,
  token: `sandbox-forum-webhook-s${i + 1}-`.padEnd(68, "0"),
  name: "FeedsBot forum",
  avatar: null,
  guildId: f.guildId,
  channelId: f.id,
  applicationId: BOT2_ID
}))
