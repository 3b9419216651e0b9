/**
 * Reading a channel's recent messages (GET /channels/{id}/messages) and a server's active threads
 * (GET /guilds/{id}/threads/active) with the bot's token, through the REST pipeline like every call
 * (the route's own bucket, the global budget, retried as a GET). Never cached: the caller asks
 * because it needs to know what is there now (DeliveryReconcile.ts).
 */
import { Effect, Schema } from "effect"
import type { ChatPlatform, PlatformMessage, PlatformThread } from "../../../services/platform/ChatPlatform.ts"
import type { DiscordRest } from "./DiscordRest.ts"
import { identityOf } from "./DiscordRest.ts"

/** The fields of Discord's MessageResponse the gateway reads (extra fields ignored). */
const Message = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  timestamp: Schema.String,
  webhook_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  author: Schema.Struct({ id: Schema.String })
})

/** The fields of Discord's ThreadsResponse the gateway reads. */
const Threads = Schema.Struct({
  threads: Schema.Array(Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    parent_id: Schema.optionalKey(Schema.NullOr(Schema.String))
  }))
})

export const makeDiscordChannelMessages = (
  { request }: DiscordRest
): Pick<ChatPlatform["Service"], "getChannelMessages" | "getActiveThreads"> => ({
  getActiveThreads: (botToken, guildId) => {
    const auth = { _tag: "Bot", token: botToken } as const
    return request({
      method: "GET",
      path: `/guilds/${encodeURIComponent(guildId)}/threads/active`,
      auth,
      target: { identity: identityOf(auth), route: "GET /guilds/:guild/threads/active", major: guildId }
    }, Threads).pipe(
      Effect.map((r) => r.threads.map((t): PlatformThread => ({ id: t.id, name: t.name, parent_id: t.parent_id ?? null })))
    )
  },
  getChannelMessages: (botToken, channelId, options) => {
    const auth = { _tag: "Bot", token: botToken } as const
    const query = new URLSearchParams({ limit: String(options?.limit ?? 50) })
    if (options?.before !== undefined) query.set("before", options.before)
    if (options?.after !== undefined) query.set("after", options.after)
    return request({
      method: "GET",
      path: `/channels/${encodeURIComponent(channelId)}/messages?${query}`,
      auth,
      target: { identity: identityOf(auth), route: "GET /channels/:channel/messages", major: channelId }
    }, Schema.Array(Message)).pipe(
      Effect.map((list) =>
        list.map((m): PlatformMessage => ({
          id: m.id,
          content: m.content,
          timestamp: m.timestamp,
          webhook_id: m.webhook_id ?? null,
          author_id: m.author.id
        }))
      )
    )
  }
})
