/**
 * Seed objects rendered in Discord's wire shapes (API v10, discord-api-spec openapi.json): every
 * property the OpenAPI schema marks required is present, with Discord's JSON types.
 */
import { componentsOut, embedsOut } from "./interactions/Echo.ts"
import type { SeedBot, SeedChannel, SeedGuild, SeedRole, SeedUser, SeedWebhook } from "./Seed.ts"

export const userPII = (user: SeedUser, scopes: ReadonlySet<string>) => ({
  id: user.id,
  username: user.username,
  avatar: user.avatar,
  discriminator: user.discriminator,
  public_flags: 0,
  flags: 0,
  banner: null,
  accent_color: null,
  global_name: user.global_name,
  avatar_decoration_data: null,
  collectibles: null,
  primary_guild: null,
  mfa_enabled: false,
  locale: user.locale,
  premium_type: 0,
  // Discord sends email and verified only with the `email` scope.
  ...(scopes.has("email") ? { email: user.email, verified: true } : {})
})

/** A public user object (UserResponse), as embedded in webhooks. */
export const publicBotUser = (bot: SeedBot) => ({
  id: bot.id,
  username: bot.username,
  avatar: bot.avatar,
  discriminator: "0",
  public_flags: 0,
  flags: 0,
  bot: true,
  banner: null,
  accent_color: null,
  global_name: null,
  avatar_decoration_data: null,
  collectibles: null,
  primary_guild: null
})

/** The bot's own user object (GET /users/@me with a bot token). */
export const botUser = (bot: SeedBot) => ({
  ...publicBotUser(bot),
  mfa_enabled: false,
  locale: "en-US",
  premium_type: 0,
  email: null,
  verified: true
})

export const myGuild = (guild: SeedGuild, callerId: string, permissions: bigint) => ({
  id: guild.id,
  name: guild.name,
  icon: guild.icon,
  banner: null,
  owner: guild.ownerId === callerId,
  permissions: permissions.toString(),
  features: []
})

export const role = (r: SeedRole) => ({
  id: r.id,
  name: r.name,
  permissions: r.permissions,
  position: r.position,
  color: r.color,
  colors: { primary_color: r.color, secondary_color: null, tertiary_color: null },
  hoist: r.hoist,
  managed: r.botId !== undefined,
  mentionable: false,
  icon: null,
  unicode_emoji: null,
  flags: 0,
  ...(r.botId !== undefined ? { tags: { bot_id: r.botId } } : {})
})

export const channel = (guild: SeedGuild, c: SeedChannel) => {
  const base = {
    id: c.id,
    type: c.type,
    flags: 0,
    guild_id: guild.id,
    name: c.name,
    parent_id: c.parent_id,
    position: c.position,
    permission_overwrites: []
  }
  switch (c.type) {
    case 4:
      return base
    case 2:
      return {
        ...base,
        last_message_id: null,
        rate_limit_per_user: 0,
        bitrate: 64000,
        user_limit: 0,
        rtc_region: null,
        nsfw: false
      }
    default:
      return { ...base, last_message_id: null, rate_limit_per_user: 0, topic: c.topic, nsfw: false }
  }
}

export const guild = (g: SeedGuild, withCounts: boolean) => ({
  id: g.id,
  name: g.name,
  icon: g.icon,
  description: null,
  home_header: null,
  splash: null,
  discovery_splash: null,
  features: [],
  banner: null,
  owner_id: g.ownerId,
  application_id: null,
  region: "deprecated",
  afk_channel_id: null,
  afk_timeout: 300,
  system_channel_id: g.channels.find((c) => c.type === 0)?.id ?? null,
  system_channel_flags: 0,
  widget_enabled: false,
  widget_channel_id: null,
  verification_level: 0,
  roles: g.roles.map(role),
  default_message_notifications: 1,
  mfa_level: 0,
  explicit_content_filter: 0,
  max_presences: null,
  max_members: 500000,
  max_stage_video_channel_users: 50,
  max_video_channel_users: 25,
  vanity_url_code: null,
  premium_tier: 0,
  premium_subscription_count: 0,
  preferred_locale: "en-US",
  rules_channel_id: null,
  safety_alerts_channel_id: null,
  public_updates_channel_id: null,
  premium_progress_bar_enabled: false,
  nsfw: false,
  nsfw_level: 0,
  emojis: [],
  stickers: [],
  incidents_data: null,
  ...(withCounts
    ? { approximate_member_count: g.members.length, approximate_presence_count: 0 }
    : {})
})

/**
 * A guild incoming webhook. `user` is the creating bot (omitted by the token-authenticated GET, as
 * on Discord); `url` points at this sandbox.
 */
export const webhook = (w: SeedWebhook, creator: SeedBot | undefined, apiOrigin: string) => ({
  application_id: w.applicationId,
  avatar: w.avatar,
  channel_id: w.channelId,
  guild_id: w.guildId,
  id: w.id,
  name: w.name,
  type: 1,
  ...(creator ? { user: publicBotUser(creator) } : {}),
  token: w.token,
  url: `${apiOrigin}/sandbox/discord/api/v10/webhooks/${w.id}/${w.token}`
})

/**
 * The message a webhook execute with `?wait=true` answers (Discord's MessageResponse): the webhook
 * as author (named by the body's `username` when given), the content and embeds as sent, its flags.
 */
export const webhookMessage = (
  message: { readonly id: string; readonly at: number; readonly flags?: number | undefined; readonly threadId?: string },
  w: SeedWebhook,
  body: Readonly<Record<string, unknown>>
) => ({
  id: message.id,
  type: 0,
  content: typeof body["content"] === "string" ? body["content"] : "",
  // A message in a thread (or a forum post) is in the thread's channel, as on Discord.
  channel_id: message.threadId ?? w.channelId,
  author: {
    id: w.id,
    username: typeof body["username"] === "string" ? body["username"] : w.name,
    avatar: w.avatar,
    discriminator: "0000",
    public_flags: 0,
    flags: 0,
    bot: true,
    global_name: null,
    primary_guild: null
  },
  attachments: [],
  embeds: embedsOut(body["embeds"]),
  mentions: [],
  mention_roles: [],
  pinned: false,
  mention_everyone: false,
  tts: body["tts"] === true,
  timestamp: new Date(message.at).toISOString().replace("Z", "+00:00"),
  edited_timestamp: null,
  // What the body asked for, and what happened since (CROSSPOSTED once published).
  flags: (typeof body["flags"] === "number" ? body["flags"] : 0) | (message.flags ?? 0),
  components: componentsOut(body["components"]),
  application_id: w.applicationId,
  webhook_id: w.id
})
