/**
 * A bot's messages in channels and direct messages (Discord API v10): `POST /users/@me/channels`
 * opens a DM channel (PrivateChannelResponse); `POST /channels/{id}/messages` posts into a server's
 * text or news channel or a DM channel, `GET` lists a channel's messages (newest first), and
 * `GET`/`PATCH`/`DELETE /channels/{id}/messages/{message_id}` read, edit (a new version, the earlier
 * ones kept for the inbox) and delete one; the history also holds the channel's webhook messages (a
 * thread's or forum post's: those sent into it, DiscordThreads.ts). The seed's permissions hold: a server the bot is not in, or
 * a channel it cannot view → 403 50001; cannot send → 403 50013; unknown channel → 404 10003; a DM to
 * a user who shares no server with the bot, or whose DMs are closed (fault) → 403 50007.
 */
import { pageOfMessages, readPageQuery } from "./MessagePages.ts"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { DiscordContext } from "../DiscordHttp.ts"
import { discordError, Errors } from "../DiscordHttp.ts"
import { webhookMessage } from "../DiscordShapes.ts"
import type { DiscordStore } from "../DiscordState.ts"
import type { SeedBot } from "../Seed.ts"
import { liveThread } from "../DiscordThreads.ts"
import { findChannel, findGuild, findUser, PermissionBits, SEED } from "../Seed.ts"
import { applyEdit, checkEdit, checkNewMessage, readBody } from "./MessageBody.ts"
import { messageResponse, publicUser } from "./MessageShapes.ts"
import type { Body, BotMessage } from "./State.ts"
import { interactionsOf } from "./State.ts"

type Response = HttpServerResponse.HttpServerResponse
export type Handler = (ctx: DiscordContext) => Effect.Effect<Response>
export type Route = readonly ["GET" | "POST" | "PUT" | "PATCH" | "DELETE", string, string | undefined, Handler]

const discordJson = (body: unknown): Response => HttpServerResponse.jsonUnsafe(body)
const json = (body: unknown) => Effect.succeed(discordJson(body))

/** Where a bot may post: a DM channel it opened, or a server text/news channel it can see. */
export type Place =
  | { readonly kind: "dm"; readonly userId: string }
  | { readonly kind: "guild"; readonly guildId: string }
  | { readonly kind: "refused"; readonly error: Response }

export const placeOf = (store: DiscordStore, bot: SeedBot, channelId: string, needSend: boolean): Place => {
  const dm = interactionsOf(store).dmChannels.get(channelId)
  if (dm !== undefined) {
    return dm.botId === bot.id ? { kind: "dm", userId: dm.userId } : { kind: "refused", error: Errors.unknownChannel() }
  }
  const found = findChannel(channelId)
  if (found === undefined) return { kind: "refused", error: Errors.unknownChannel() }
  const bits = found.guild.botIds.includes(bot.id) ? store.permissionsOf(found.guild, bot.id) ?? 0n : 0n
  if ((bits & PermissionBits.VIEW_CHANNEL) === 0n) return { kind: "refused", error: Errors.missingAccess() }
  if (found.channel.type !== 0 && found.channel.type !== 5) {
    return { kind: "refused", error: discordError(400, "Cannot send messages in a non-text channel", 50008) }
  }
  if (needSend && (bits & PermissionBits.SEND_MESSAGES) === 0n) return { kind: "refused", error: Errors.missingPermissions() }
  return { kind: "guild", guildId: found.guild.id }
}

/** A thread is read with its server's permissions (the seed has no overwrites per channel). */
const threadPlace = (store: DiscordStore, bot: SeedBot, guildId: string): Place => {
  const guild = findGuild(guildId)
  const bits = guild !== undefined && guild.botIds.includes(bot.id) ? store.permissionsOf(guild, bot.id) ?? 0n : 0n
  if ((bits & PermissionBits.VIEW_CHANNEL) === 0n) return { kind: "refused", error: Errors.missingAccess() }
  return { kind: "guild", guildId }
}

/** READ_MESSAGE_HISTORY (or ADMINISTRATOR) in the server: else a history read answers no messages. */
const readsHistory = (store: DiscordStore, bot: SeedBot, guildId: string): boolean => {
  const guild = findGuild(guildId)
  const bits = guild === undefined ? 0n : store.permissionsOf(guild, bot.id) ?? 0n
  return (bits & (PermissionBits.READ_MESSAGE_HISTORY | PermissionBits.ADMINISTRATOR)) !== 0n
}

const closedDm = (store: DiscordStore, bot: SeedBot, userId: string): boolean => {
  const closed = interactionsOf(store).closedDms
  const remaining = closed.get(userId)
  if (remaining !== undefined) {
    if (remaining <= 1) closed.delete(userId)
    else closed.set(userId, remaining - 1)
    return true
  }
  return !SEED.guilds.some((g) => g.botIds.includes(bot.id) && g.members.some((m) => m.userId === userId))
}

const botOf = (ctx: DiscordContext): SeedBot | undefined => ctx.principal?.kind === "bot" ? ctx.principal.bot : undefined

/** Stores a new message of a bot and answers it in Discord's shape. */
export const storeMessage = (store: DiscordStore, m: Omit<BotMessage, "id" | "deleted" | "versions">, body: Body, at: number): BotMessage => {
  const message: BotMessage = { ...m, id: store.nextId("35"), deleted: false, versions: [{ body, at }] }
  interactionsOf(store).messages.set(message.id, message)
  return message
}

const isBody = (u: unknown): u is Body => typeof u === "object" && u !== null && !Array.isArray(u)

const botById = (id: string): SeedBot => SEED.bots.find((b) => b.id === id)!

const visible = (m: BotMessage, channelId: string) => m.channelId === channelId && !m.deleted && m.ephemeralFor === undefined

const findMessage = (store: DiscordStore, ctx: DiscordContext): BotMessage | undefined => {
  const m = interactionsOf(store).messages.get(ctx.params["message_id"] ?? "")
  return m !== undefined && visible(m, ctx.params["id"] ?? "") ? m : undefined
}

/** How long the platform remembers a nonce ("checked for uniqueness in the past few minutes"). */
export const NONCE_WINDOW_MS = 5 * 60_000

/**
 * `enforce_nonce` with a `nonce`: a message the same bot created with that nonce in the window is
 * answered again and no new one is created (Discord's Create Message, `enforce_nonce`).
 */
const sameNonce = (store: DiscordStore, bot: SeedBot, body: Body, now: number): BotMessage | undefined => {
  const nonce = body["nonce"]
  if (body["enforce_nonce"] !== true || (typeof nonce !== "string" && typeof nonce !== "number")) return undefined
  for (const m of interactionsOf(store).messages.values()) {
    const first = m.versions[0]!
    if (m.botId === bot.id && m.interactionId === undefined && first.at >= now - NONCE_WINDOW_MS && String(first.body["nonce"]) === String(nonce)) return m
  }
  return undefined
}

const unknownMessage = () => discordError(404, "Unknown Message", 10008)

export const channelRoutes = (store: DiscordStore): ReadonlyArray<Route> => [
  ["POST", "/users/@me/channels", undefined, (ctx) =>
    Effect.gen(function*() {
      const bot = botOf(ctx)
      if (bot === undefined) return Errors.unauthorized()
      const read = yield* readBody(store, ctx.request)
      const recipient = read.ok ? read.body["recipient_id"] : undefined
      const user = typeof recipient === "string" ? findUser(recipient) : undefined
      if (user === undefined) return discordError(400, "Invalid Recipient(s)", 50033)
      const id = `36${bot.id.slice(-8)}${user.id.slice(-8)}`
      interactionsOf(store).dmChannels.set(id, { userId: user.id, botId: bot.id })
      const last = [...interactionsOf(store).messages.values()].filter((m) => m.channelId === id).at(-1)
      return discordJson({ id, type: 1, last_message_id: last?.id ?? null, flags: 0, recipients: [publicUser(user)] })
    })],
  ["POST", "/channels/{id}/messages", "id", (ctx) =>
    Effect.gen(function*() {
      const bot = botOf(ctx)
      if (bot === undefined) return Errors.unauthorized()
      const channelId = ctx.params["id"] ?? ""
      const place = placeOf(store, bot, channelId, true)
      if (place.kind === "refused") return place.error
      if (place.kind === "dm" && closedDm(store, bot, place.userId)) {
        return discordError(403, "Cannot send messages to this user", 50007)
      }
      const read = yield* readBody(store, ctx.request)
      if (!read.ok) return read.error
      const refused = checkNewMessage(read.body, "MessageCreateRequest", "create")
      if (refused !== undefined) return refused
      const same = sameNonce(store, bot, read.body, ctx.now)
      if (same !== undefined) return discordJson(messageResponse(same, bot, ctx.origin))
      const message = storeMessage(store, {
        botId: bot.id,
        channelId,
        guildId: place.kind === "guild" ? place.guildId : undefined,
        dmUserId: place.kind === "dm" ? place.userId : undefined,
        interactionId: undefined,
        ephemeralFor: undefined,
        type: 0
      }, read.body, ctx.now)
      return discordJson(messageResponse(message, bot, ctx.origin))
    })],
  ["GET", "/channels/{id}/messages", "id", (ctx) => {
    const bot = botOf(ctx)
    if (bot === undefined) return Effect.succeed(Errors.unauthorized())
    const channelId = ctx.params["id"] ?? ""
    // A thread or forum post has its own history (DiscordThreads.ts): what was sent into it, not into its channel.
    const thread = liveThread(store, channelId)
    const place = thread ? threadPlace(store, bot, thread.guildId) : placeOf(store, bot, channelId, false)
    if (place.kind === "refused") return Effect.succeed(place.error)
    const query = readPageQuery(ctx.query)
    if ("error" in query) return Effect.succeed(query.error)
    // Discord: "If the current user is missing the READ_MESSAGE_HISTORY permission in the channel,
    // then no messages will be returned" — an empty list, not a refusal.
    if (place.kind === "guild" && !readsHistory(store, bot, place.guildId)) return json([])
    const own = [...interactionsOf(store).messages.values()]
      .filter((m) => visible(m, channelId))
      .map((m) => ({ id: m.id, shape: () => messageResponse(m, botById(m.botId), ctx.origin) }))
    // Messages executed through the channel's webhooks are in its history too.
    const inHere = (m: (typeof store.messages)[number]) => thread ? m.threadId === channelId : m.channelId === channelId && m.threadId === undefined
    const hooked = store.messages.filter(inHere).flatMap((m) => {
      const hook = store.webhooks.get(m.webhookId)
      const body = m.body
      return hook !== undefined && isBody(body) ? [{ id: m.id, shape: () => webhookMessage(m, hook, body) }] : []
    })
    return json(pageOfMessages([...own, ...hooked], query).map((m) => m.shape()))
  }],
  ["GET", "/channels/{id}/messages/{message_id}", "id", (ctx) => {
    const bot = botOf(ctx)
    if (bot === undefined) return Effect.succeed(Errors.unauthorized())
    const place = placeOf(store, bot, ctx.params["id"] ?? "", false)
    if (place.kind === "refused") return Effect.succeed(place.error)
    const message = findMessage(store, ctx)
    return message ? json(messageResponse(message, botById(message.botId), ctx.origin)) : Effect.succeed(unknownMessage())
  }],
  ["PATCH", "/channels/{id}/messages/{message_id}", "id", (ctx) =>
    Effect.gen(function*() {
      const bot = botOf(ctx)
      if (bot === undefined) return Errors.unauthorized()
      const place = placeOf(store, bot, ctx.params["id"] ?? "", false)
      if (place.kind === "refused") return place.error
      const message = findMessage(store, ctx)
      if (message === undefined) return unknownMessage()
      if (message.botId !== bot.id) return discordError(403, "Cannot edit a message authored by another user", 50005)
      const read = yield* readBody(store, ctx.request)
      if (!read.ok) return read.error
      const refused = checkEdit(message.versions.at(-1)!.body, read.body, "MessageEditRequestPartial")
      if (refused !== undefined) return refused
      message.versions.push({ body: applyEdit(message.versions.at(-1)!.body, read.body), at: ctx.now })
      return discordJson(messageResponse(message, bot, ctx.origin))
    })],
  ["DELETE", "/channels/{id}/messages/{message_id}", "id", (ctx) => {
    const bot = botOf(ctx)
    if (bot === undefined) return Effect.succeed(Errors.unauthorized())
    const place = placeOf(store, bot, ctx.params["id"] ?? "", false)
    if (place.kind === "refused") return Effect.succeed(place.error)
    const message = findMessage(store, ctx)
    if (message === undefined) return Effect.succeed(unknownMessage())
    // A bot deletes others' messages only with MANAGE_MESSAGES, which no seeded bot holds.
    if (message.botId !== bot.id) return Effect.succeed(Errors.missingPermissions())
    message.deleted = true
    return Effect.succeed(HttpServerResponse.empty({ status: 204 }))
  }]
]
