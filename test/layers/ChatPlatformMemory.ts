/**
 * The chat platform in memory, over the sandbox's seed (users, bots, guilds, webhooks): the answers
 * and refusals the live client gives against the sandbox (statuses and Discord's JSON codes), with
 * no HTTP, no rate limits and no caches. `ChatPlatformMemoryState.approve` stands for the user
 * approving a sign-in on the platform's page; `webhooks` lets a test see or seed webhooks, and
 * `messages` the messages posted through them (oldest first).
 * Held to the same suite as the live client: test/contracts/ChatPlatform.contract.ts.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { SeedBot, SeedGuild, SeedUser, SeedWebhook } from "../../src/sandbox/Seed.ts"
import { PermissionBits, SEED, THREADS } from "../../src/sandbox/Seed.ts"
import { pageOfMessages } from "../../src/sandbox/interactions/MessagePages.ts"
import { lookupChannel } from "../../src/sandbox/seed/ChannelLookup.ts"
import type {
  PlatformGuildSummary,
  PlatformMessage,
  PlatformTokens,
  PlatformUser,
  PlatformWebhook,
  PlatformWebhookBody
} from "../../src/services/platform/ChatPlatform.ts"
import { ChatPlatform, Permission, PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"

/** What the platform starts with: the sandbox's seed, or any data of the same shape. */
export interface ChatPlatformSeed {
  readonly users: ReadonlyArray<SeedUser>
  readonly bots: ReadonlyArray<SeedBot>
  readonly guilds: ReadonlyArray<SeedGuild>
  readonly webhooks: ReadonlyArray<SeedWebhook>
}

export class ChatPlatformMemoryState extends Context.Service<ChatPlatformMemoryState, {
  /** The user approves the sign-in `authorizeUrl` asks for: the query the platform sends back. */
  readonly approve: (authorizeUrl: string, userId: string) => Effect.Effect<{ readonly code: string; readonly state: string }>
  /** Every webhook by id (seeded, then created ones); mutable. */
  readonly webhooks: Map<string, SeedWebhook>
  /** Every message posted through a webhook, oldest first (like the sandbox's inbox). */
  readonly messages: Array<MemoryMessage>
  /** Every application's public key (hex) by bot id: set one to answer it from GET /applications/@me. */
  readonly verifyKeys: Map<string, string>
  /** The commands last registered per application. */
  readonly commands: Map<string, ReadonlyArray<unknown>>
}>()("test/ChatPlatformMemoryState") {}

export interface MemoryMessage {
  readonly id: string
  readonly webhookId: string
  readonly channelId: string
  readonly body: PlatformWebhookBody
  /** When it was posted (ms since the epoch). */
  readonly at: number
  /** Discord's message flags: bit 1 CROSSPOSTED once the bot published it. */
  flags?: number
}

export const MEMORY_AUTHORIZE_URL = "https://chat-platform.memory/oauth2/authorize"
const TOKEN_TTL_SECONDS = 7 * 24 * 3600
const MAX_WEBHOOKS_PER_CHANNEL = 15
/** Every permission bit Discord defines today (bits 0..50): what owners and administrators get. */
const ALL_PERMISSIONS = (1n << 51n) - 1n

const refuse = (status: number, message: string, code?: number) =>
  Effect.fail(code === undefined ? new PlatformRejected({ status, message }) : new PlatformRejected({ status, message, code }))
const unauthorized = () => refuse(401, "401: Unauthorized", 0)
const unknownGuild = () => refuse(404, "Unknown Guild", 10004)
const unknownChannel = () => refuse(404, "Unknown Channel", 10003)
const unknownWebhook = () => refuse(404, "Unknown Webhook", 10015)
const missingAccess = () => refuse(403, "Missing Access", 50001)
const missingPermissions = () => refuse(403, "Missing Permissions", 50013)
const invalidGrant = (what: string) => refuse(400, `Invalid "${what}" in request.`)

/** Discord's rule: the owner has everything; else @everyone OR the member's roles, ADMINISTRATOR implying all. */
const permissionsIn = (guild: SeedGuild, memberId: string): bigint | undefined => {
  if (guild.ownerId === memberId) return ALL_PERMISSIONS
  const member = guild.members.find((m) => m.userId === memberId)
  if (member === undefined) return undefined
  let bits = 0n
  for (const role of guild.roles) {
    if (role.id === guild.id || member.roles.includes(role.id)) bits |= BigInt(role.permissions)
  }
  return (bits & Permission.ADMINISTRATOR) !== 0n ? ALL_PERMISSIONS : bits
}

const random = (bytes: number) => randomBytes(bytes).toString("base64url")

interface Grant {
  readonly userId: string
  readonly scope: string
  /** One sign-in: revoking any token of it ends all of them. */
  readonly grant: string
}

export const makeChatPlatformMemory = (seed: ChatPlatformSeed) =>
  Effect.sync(() => {
    const webhooks = new Map(seed.webhooks.map((w) => [w.id, w]))
    const codes = new Map<string, { userId: string; redirectUri: string; challenge: string; scope: string }>()
    const accessTokens = new Map<string, Grant>()
    const refreshTokens = new Map<string, Grant>()
    const messages: Array<MemoryMessage> = []
    const verifyKeys = new Map<string, string>()
    const commands = new Map<string, ReadonlyArray<unknown>>()
    let sequence = 0n
    let messageSequence = 0n

    const issue = (userId: string, scope: string, grant: string): PlatformTokens => {
      const access = random(32)
      const refresh = random(32)
      accessTokens.set(access, { userId, scope, grant })
      refreshTokens.set(refresh, { userId, scope, grant })
      return { access_token: Redacted.make(access), refresh_token: Redacted.make(refresh), expires_in: TOKEN_TTL_SECONDS, scope }
    }
    const userOf = (token: Redacted.Redacted<string>) => {
      const access = accessTokens.get(Redacted.value(token))
      const user = access === undefined ? undefined : seed.users.find((u) => u.id === access.userId)
      return user === undefined || access === undefined ? unauthorized() : Effect.succeed({ user, scope: access.scope })
    }
    const botOf = (token: Redacted.Redacted<string>) => {
      const bot = seed.bots.find((b) => b.token === Redacted.value(token))
      return bot === undefined ? unauthorized() : Effect.succeed(bot)
    }
    const guildsOf = (memberId: string): ReadonlyArray<PlatformGuildSummary> =>
      seed.guilds
        .filter((g) => g.ownerId === memberId || g.members.some((m) => m.userId === memberId))
        .map((g) => ({
          id: g.id,
          name: g.name,
          icon: g.icon,
          owner: g.ownerId === memberId,
          permissions: (permissionsIn(g, memberId) ?? 0n).toString()
        }))
    /** A guild the bot is in: Discord answers "Unknown Guild" for the others too. */
    const botGuild = (token: Redacted.Redacted<string>, guildId: string) =>
      Effect.flatMap(botOf(token), (bot) => {
        const guild = seed.guilds.find((g) => g.id === guildId && g.botIds.includes(bot.id))
        return guild === undefined ? unknownGuild() : Effect.succeed(guild)
      })
    /** A channel whose webhooks the bot may manage. */
    const managedChannel = (token: Redacted.Redacted<string>, channelId: string) =>
      Effect.flatMap(botOf(token), (bot) => {
        const guild = seed.guilds.find((g) => g.channels.some((c) => c.id === channelId))
        const channel = guild?.channels.find((c) => c.id === channelId)
        if (guild === undefined || channel === undefined) return unknownChannel()
        if (!guild.botIds.includes(bot.id)) return missingAccess()
        if (((permissionsIn(guild, bot.id) ?? 0n) & Permission.MANAGE_WEBHOOKS) === 0n) return missingPermissions()
        return Effect.succeed({ bot, guild, channel })
      })
    const toWebhook = (w: SeedWebhook): PlatformWebhook => ({
      id: w.id,
      type: 1,
      name: w.name,
      avatar: w.avatar,
      channel_id: w.channelId,
      guild_id: w.guildId,
      application_id: w.applicationId,
      token: Redacted.make(w.token)
    })

    const state = ChatPlatformMemoryState.of({
      approve: (authorizeUrl, userId) =>
        Effect.sync(() => {
          const url = new URL(authorizeUrl)
          if (seed.users.every((u) => u.id !== userId)) throw new Error(`${userId} is not a user of the memory platform`)
          const code = random(24)
          codes.set(code, {
            userId,
            redirectUri: url.searchParams.get("redirect_uri") ?? "",
            challenge: url.searchParams.get("code_challenge") ?? "",
            scope: url.searchParams.get("scope") ?? "identify"
          })
          return { code, state: url.searchParams.get("state") ?? "" }
        }),
      webhooks,
      messages,
      verifyKeys,
      commands
    })

    const platform = ChatPlatform.of({
      authorizeUrl: ({ codeChallenge, redirectUri, state }) => {
        const url = new URL(MEMORY_AUTHORIZE_URL)
        url.searchParams.set("response_type", "code")
        url.searchParams.set("client_id", "memory-client")
        url.searchParams.set("scope", "identify guilds")
        url.searchParams.set("redirect_uri", redirectUri)
        url.searchParams.set("state", state)
        url.searchParams.set("code_challenge", codeChallenge)
        url.searchParams.set("code_challenge_method", "S256")
        return url.toString()
      },
      exchangeCode: ({ code, codeVerifier, redirectUri }) =>
        Effect.suspend(() => {
          const grant = codes.get(code)
          // One use: any attempt spends the code.
          codes.delete(code)
          if (grant === undefined) return invalidGrant("code")
          if (grant.redirectUri !== redirectUri) return invalidGrant("redirect_uri")
          if (createHash("sha256").update(codeVerifier).digest("base64url") !== grant.challenge) {
            return invalidGrant("code_verifier")
          }
          return Effect.succeed(issue(grant.userId, grant.scope, random(12)))
        }),
      refreshToken: (refreshToken) =>
        Effect.suspend(() => {
          const previous = refreshTokens.get(Redacted.value(refreshToken))
          if (previous === undefined) return invalidGrant("refresh_token")
          refreshTokens.delete(Redacted.value(refreshToken))
          return Effect.succeed(issue(previous.userId, previous.scope, previous.grant))
        }),
      revokeToken: (token) =>
        Effect.sync(() => {
          const value = Redacted.value(token)
          const grant = accessTokens.get(value)?.grant ?? refreshTokens.get(value)?.grant
          if (grant === undefined) return
          for (const [t, g] of accessTokens) if (g.grant === grant) accessTokens.delete(t)
          for (const [t, g] of refreshTokens) if (g.grant === grant) refreshTokens.delete(t)
        }),
      getCurrentUser: (token) =>
        Effect.map(userOf(token), ({ user }): PlatformUser => ({
          id: user.id,
          username: user.username,
          discriminator: user.discriminator,
          global_name: user.global_name,
          avatar: user.avatar,
          locale: user.locale
        })),
      getCurrentUserGuilds: (token) =>
        Effect.flatMap(userOf(token), ({ scope, user }) =>
          scope.split(/\s+/).includes("guilds") ? Effect.succeed(guildsOf(user.id)) : missingAccess()),
      getBotUser: (token) =>
        Effect.map(botOf(token), (bot): PlatformUser => ({
          id: bot.id,
          username: bot.username,
          discriminator: "0",
          global_name: null,
          avatar: bot.avatar,
          locale: "en-US",
          bot: true
        })),
      getBotGuilds: (token) => Effect.map(botOf(token), (bot) => guildsOf(bot.id)),
      getGuild: (token, guildId) =>
        Effect.map(botGuild(token, guildId), (g) => ({ id: g.id, name: g.name, icon: g.icon, owner_id: g.ownerId })),
      getGuildChannels: (token, guildId) =>
        Effect.map(botGuild(token, guildId), (g) => g.channels.map((c) => ({ id: c.id, name: c.name, type: c.type, guild_id: g.id }))),
      getGuildRoles: (token, guildId) =>
        Effect.map(botGuild(token, guildId), (g) =>
          g.roles.map((r) => ({ id: r.id, name: r.name, color: r.color, permissions: r.permissions, position: r.position }))),
      getChannel: (token, channelId) =>
        Effect.flatMap(botOf(token), (bot) => {
          const found = lookupChannel(channelId)
          if (found === undefined || !seed.guilds.some((g) => g.id === found.guildId && g.botIds.includes(bot.id))) return unknownChannel()
          const b = found.body
          return Effect.succeed({
            id: channelId,
            name: String(b["name"]),
            type: Number(b["type"]),
            guild_id: found.guildId,
            parent_id: typeof b["parent_id"] === "string" ? b["parent_id"] : null,
            ...(Array.isArray(b["available_tags"]) ? { available_tags: b["available_tags"] as ReadonlyArray<{ id: string; name: string }> } : {})
          })
        }),
      getChannelWebhooks: (token, channelId) =>
        Effect.map(managedChannel(token, channelId), ({ channel }) =>
          [...webhooks.values()].filter((w) => w.channelId === channel.id).map(toWebhook)),
      createWebhook: (token, channelId, name) =>
        Effect.flatMap(managedChannel(token, channelId), ({ bot, channel, guild }) => {
          if (channel.type === 4) return refuse(400, "Cannot execute action on this channel type", 50024)
          if (name.length < 1 || name.length > 80 || /clyde|discord/i.test(name)) return refuse(400, "Invalid Form Body", 50035)
          if ([...webhooks.values()].filter((w) => w.channelId === channel.id).length >= MAX_WEBHOOKS_PER_CHANNEL) {
            return refuse(400, `Maximum number of webhooks reached (${MAX_WEBHOOKS_PER_CHANNEL})`, 30007)
          }
          sequence += 1n
          const webhook: SeedWebhook = {
            id: `34${sequence.toString().padStart(16, "0")}`,
            token: random(51),
            name,
            avatar: null,
            guildId: guild.id,
            channelId: channel.id,
            applicationId: bot.id
          }
          webhooks.set(webhook.id, webhook)
          return Effect.succeed(toWebhook(webhook))
        }),
      getWebhookWithToken: (webhookId, webhookToken) =>
        Effect.suspend(() => {
          const webhook = webhooks.get(webhookId)
          return webhook === undefined || webhook.token !== Redacted.value(webhookToken)
            ? unknownWebhook()
            : Effect.succeed(toWebhook(webhook))
        }),
      executeWebhook: (webhookId, webhookToken, body, options) =>
        Effect.suspend(() => {
          const webhook = webhooks.get(webhookId)
          if (webhook === undefined) return unknownWebhook()
          if (webhook.token !== Redacted.value(webhookToken)) return refuse(401, "Invalid Webhook Token", 50027)
          if ((body.content ?? "") === "") return refuse(400, "Cannot send an empty message", 50006)
          messageSequence += 1n
          const id = `35${messageSequence.toString().padStart(16, "0")}`
          messages.push({ id, webhookId, channelId: webhook.channelId, body, at: Date.now() })
          return Effect.succeed(options?.wait === false ? null : id)
        }),
      // The sandbox's paging (newest first, before/after); 403 50001 without VIEW_CHANNEL, [] without READ_MESSAGE_HISTORY.
      getChannelMessages: (botToken, channelId, options) =>
        Effect.flatMap(botOf(botToken), (bot) => {
          const guild = seed.guilds.find((g) => g.channels.some((c) => c.id === channelId))
          if (guild === undefined) return unknownChannel()
          const bits = guild.botIds.includes(bot.id) ? permissionsIn(guild, bot.id) ?? 0n : 0n
          if ((bits & PermissionBits.VIEW_CHANNEL) === 0n) return missingAccess()
          if ((bits & PermissionBits.READ_MESSAGE_HISTORY) === 0n) return Effect.succeed([])
          const page = pageOfMessages(messages.filter((m) => m.channelId === channelId), {
            limit: options?.limit ?? 50,
            before: options?.before,
            after: options?.after
          })
          return Effect.succeed(page.map((m): PlatformMessage => ({
            id: m.id,
            content: m.body.content ?? "",
            timestamp: new Date(m.at).toISOString(),
            webhook_id: m.webhookId,
            author_id: m.webhookId
          })))
        }),
      // The seed's threads of the server (a webhook here opens no forum post: executeWebhook posts in the channel).
      getActiveThreads: (botToken, guildId) =>
        Effect.map(botGuild(botToken, guildId), (guild) =>
          THREADS.filter((t) => t.guildId === guild.id).map((t) => ({ id: t.id, name: t.name, parent_id: t.parent_id }))),
      // A direct message: recorded with the bot's id as the webhook and the user's id as the channel.
      // Discord's refusals: an unknown user 400 50033; one who shares no server with the bot 403 50007.
      sendDirectMessage: (botToken, userId, body) =>
        Effect.flatMap(botOf(botToken), (bot) => {
          if (!seed.users.some((u) => u.id === userId)) return refuse(400, "Invalid Recipient(s)", 50033)
          if (!seed.guilds.some((g) => g.botIds.includes(bot.id) && g.members.some((m) => m.userId === userId))) {
            return refuse(403, "Cannot send messages to this user", 50007)
          }
          if ((body.content ?? "") === "") return refuse(400, "Cannot send an empty message", 50006)
          messageSequence += 1n
          const id = `35${messageSequence.toString().padStart(16, "0")}`
          messages.push({ id, webhookId: bot.id, channelId: `dm:${userId}`, body, at: Date.now() })
          return Effect.succeed(id)
        }),
      getApplication: (token) =>
        Effect.map(botOf(token), (bot) => ({ id: bot.id, verify_key: verifyKeys.get(bot.id) ?? "00".repeat(32) })),
      putCommands: (token, applicationId, list) =>
        Effect.flatMap(botOf(token), (bot) => {
          if (bot.id !== applicationId) return missingAccess()
          commands.set(applicationId, list)
          return Effect.void
        }),
      // A channel message: recorded with the bot's id as the webhook (its edits replace the body).
      createMessage: (token, channelId, body) =>
        Effect.flatMap(botOf(token), (bot) => {
          const guild = seed.guilds.find((g) => g.channels.some((c) => c.id === channelId))
          if (guild === undefined) return unknownChannel()
          if (!guild.botIds.includes(bot.id)) return missingAccess()
          messageSequence += 1n
          const id = `35${messageSequence.toString().padStart(16, "0")}`
          messages.push({ id, webhookId: bot.id, channelId, body: body as PlatformWebhookBody, at: Date.now() })
          return Effect.succeed(id)
        }),
      editMessage: (token, channelId, messageId, body) =>
        Effect.flatMap(botOf(token), () => {
          const at = messages.findIndex((m) => m.id === messageId && m.channelId === channelId)
          if (at < 0) return refuse(404, "Unknown Message", 10008)
          messages[at] = { ...messages[at]!, body: body as PlatformWebhookBody }
          return Effect.void
        }),
      // The sandbox's rule and order: Unknown Channel, not an announcement channel (50024), no
      // MANAGE_MESSAGES (50013), Unknown Message (10008), published already (40033).
      crosspostMessage: (token, channelId, messageId) =>
        Effect.flatMap(botOf(token), (bot) => {
          const guild = seed.guilds.find((g) => g.botIds.includes(bot.id) && g.channels.some((c) => c.id === channelId))
          const channel = guild?.channels.find((c) => c.id === channelId)
          if (guild === undefined || channel === undefined) return unknownChannel()
          if (channel.type !== 5) return refuse(400, "Cannot execute action on this channel type", 50024)
          if (((permissionsIn(guild, bot.id) ?? 0n) & PermissionBits.MANAGE_MESSAGES) === 0n) return missingPermissions()
          const message = messages.find((m) => m.id === messageId && m.channelId === channelId)
          if (message === undefined) return refuse(404, "Unknown Message", 10008)
          if (((message.flags ?? 0) & 1) !== 0) return refuse(400, "This message has already been crossposted.", 40033)
          message.flags = (message.flags ?? 0) | 1
          return Effect.void
        }),
      deleteMessage: (token, channelId, messageId) =>
        Effect.flatMap(botOf(token), () => {
          const at = messages.findIndex((m) => m.id === messageId && m.channelId === channelId)
          if (at < 0) return refuse(404, "Unknown Message", 10008)
          messages.splice(at, 1)
          return Effect.void
        })
    })
    return { platform, state }
  })

/** The memory platform over `seed`, with its state for the test. */
export const chatPlatformMemory = (seed: ChatPlatformSeed): Layer.Layer<ChatPlatform | ChatPlatformMemoryState> =>
  Layer.effectContext(Effect.map(makeChatPlatformMemory(seed), ({ platform, state }) =>
    Context.make(ChatPlatform, platform).pipe(Context.add(ChatPlatformMemoryState, state))))

/** Over the sandbox's seed: the same users, guilds and webhooks the sandbox serves. */
export const ChatPlatformMemory = chatPlatformMemory(SEED)
