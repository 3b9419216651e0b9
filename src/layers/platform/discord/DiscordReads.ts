/**
 * What the gateway reads from Discord (users, guilds, channels, roles, webhooks), each through its
 * cache (DiscordCache.ts), and webhook creation, which invalidates its channel's cached list.
 */
import { Effect, Redacted, Schema } from "effect"
import type { ChatPlatform } from "../../../services/platform/ChatPlatform.ts"
import type { DiscordCacheOptions } from "./DiscordCache.ts"
import { cached, cacheTtls, Key, makeKeys } from "./DiscordCache.ts"
import { tokenHash } from "./DiscordRateLimits.ts"
import type { Auth, DiscordRest } from "./DiscordRest.ts"
import { identityOf } from "./DiscordRest.ts"
import { Channel, Guild, GuildSummary, Role, toWebhook, User, Webhook } from "./DiscordSchemas.ts"

const bot = (token: Redacted.Redacted<string>): Auth => ({ _tag: "Bot", token })
const bearer = (token: Redacted.Redacted<string>): Auth => ({ _tag: "Bearer", token })
const get = (auth: Auth, route: string, path: string, major = "") =>
  ({ method: "GET", path, auth, target: { identity: identityOf(auth), route: `GET ${route}`, major } }) as const

export type DiscordReads = Omit<
  ChatPlatform["Service"],
  "authorizeUrl" | "exchangeCode" | "refreshToken" | "revokeToken" | "executeWebhook" | "sendDirectMessage" | "getChannelMessages" | "getActiveThreads"
  | "getApplication" | "putCommands" | "createMessage" | "editMessage" | "deleteMessage" | "crosspostMessage"
>

export const makeDiscordReads = Effect.fnUntraced(function*(options: DiscordCacheOptions, { request }: DiscordRest) {
  const capacity = options.cacheCapacity ?? 10_000
  const ttl = cacheTtls(options)
  const keyOf = makeKeys()

  const currentUser = yield* cached("user", capacity, ttl.me, (k) => request(get(bearer(k.token), "/users/@me", "/users/@me"), User))
  const userGuilds = yield* cached("guilds", capacity, ttl.guildList, (k) =>
    request(get(bearer(k.token), "/users/@me/guilds", "/users/@me/guilds"), Schema.Array(GuildSummary)))
  const botUser = yield* cached("bot_user", capacity, ttl.me, (k) => request(get(bot(k.token), "/users/@me", "/users/@me"), User))
  const botGuilds = yield* cached("bot_guilds", capacity, ttl.guildList, (k) =>
    request(get(bot(k.token), "/users/@me/guilds", "/users/@me/guilds"), Schema.Array(GuildSummary)))
  const guild = yield* cached("guild", capacity, ttl.guild, (k) =>
    request(get(bot(k.token), "/guilds/:guild", `/guilds/${encodeURIComponent(k.arg)}`, k.arg), Guild))
  const channels = yield* cached("channels", capacity, ttl.guild, (k) =>
    request(
      get(bot(k.token), "/guilds/:guild/channels", `/guilds/${encodeURIComponent(k.arg)}/channels`, k.arg),
      Schema.Array(Channel)
    ))
  const roles = yield* cached("roles", capacity, ttl.guild, (k) =>
    request(get(bot(k.token), "/guilds/:guild/roles", `/guilds/${encodeURIComponent(k.arg)}/roles`, k.arg), Schema.Array(Role)))
  const webhooks = yield* cached("webhooks", capacity, ttl.webhooks, (k) =>
    request(
      get(bot(k.token), "/channels/:channel/webhooks", `/channels/${encodeURIComponent(k.arg)}/webhooks`, k.arg),
      Schema.Array(Webhook)
    ).pipe(Effect.map((list) => list.map(toWebhook))))
  const webhookWithToken = yield* cached("webhook", capacity, ttl.user, (k) => {
    const major = `${k.arg}/${tokenHash(Redacted.value(k.token))}`
    return request({
      method: "GET",
      path: `/webhooks/${encodeURIComponent(k.arg)}/${encodeURIComponent(Redacted.value(k.token))}`,
      auth: { _tag: "None" },
      target: { identity: "anon", route: "GET /webhooks/:webhook/:token", major },
      secretPath: true
    }, Webhook).pipe(Effect.map(toWebhook))
  })

  const reads: DiscordReads = {
    getCurrentUser: (token) => currentUser.get(keyOf("Bearer", "user", token)),
    getCurrentUserGuilds: (token) => userGuilds.get(keyOf("Bearer", "guilds", token)),
    getBotUser: (token) => botUser.get(keyOf("Bot", "user", token)),
    getBotGuilds: (token, options) => {
      const key = keyOf("Bot", "guilds", token)
      return options?.fresh === true ? Effect.andThen(botGuilds.invalidate(key), botGuilds.get(key)) : botGuilds.get(key)
    },
    getGuild: (token, guildId) => guild.get(keyOf("Bot", "guild", token, guildId)),
    getGuildChannels: (token, guildId) => channels.get(keyOf("Bot", "channels", token, guildId)),
    getGuildRoles: (token, guildId) => roles.get(keyOf("Bot", "roles", token, guildId)),
    // Not cached: asked when a feed's options are checked, and a deleted thread must show at once.
    getChannel: (token, channelId) =>
      request(get(bot(token), "/channels/:channel", `/channels/${encodeURIComponent(channelId)}`, channelId), Channel),
    getChannelWebhooks: (token, channelId) => webhooks.get(keyOf("Bot", "webhooks", token, channelId)),
    createWebhook: (token, channelId, name) => {
      const auth = bot(token)
      return request({
        method: "POST",
        path: `/channels/${encodeURIComponent(channelId)}/webhooks`,
        auth,
        json: { name },
        target: { identity: identityOf(auth), route: "POST /channels/:channel/webhooks", major: channelId }
      }, Webhook).pipe(
        Effect.map(toWebhook),
        Effect.tap(() => webhooks.invalidate(keyOf("Bot", "webhooks", token, channelId)))
      )
    },
    getWebhookWithToken: (webhookId, webhookToken) =>
      webhookWithToken.get(new Key(`webhook:${webhookId}:${tokenHash(Redacted.value(webhookToken))}`, webhookToken, webhookId))
  }
  return reads
})
