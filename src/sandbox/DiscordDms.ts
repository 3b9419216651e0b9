/**
 * Direct messages in the sandbox's Discord API (the disable notices of delivery.md §8):
 * `POST /users/@me/channels` `{recipient_id}` (bot only) opens the DM channel of a seeded user
 * (400 50033 for an unknown one); `POST /channels/{id}/messages` into a DM channel posts, unless
 * the bot shares no server with the user (403 50007, as Discord answers). The inbox of DMs:
 * `GET /sandbox/discord/dms?user_id=` → `{ "messages": [ { "id", "user_id", "bot_id", "channel_id",
 * "body", "at" } ] }`, oldest first (a control route: never counted nor faulted).
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import type { DiscordContext } from "./DiscordHttp.ts"
import { discordError, Errors } from "./DiscordHttp.ts"
import { checkMessage } from "./DiscordMessage.ts"
import type { DiscordStore } from "./DiscordState.ts"
import { findUser, SEED } from "./Seed.ts"

interface DmMessage {
  readonly id: string
  readonly userId: string
  readonly botId: string
  readonly channelId: string
  readonly body: unknown
  readonly at: number
}

/** The DM state of one sandbox (kept beside its store, so each sandbox has its own). */
const state = new WeakMap<DiscordStore, { channels: Map<string, { userId: string; botId: string }>; messages: Array<DmMessage> }>()
const of = (store: DiscordStore) => {
  let s = state.get(store)
  if (s === undefined) state.set(store, s = { channels: new Map(), messages: [] })
  return s
}

type Handler = (ctx: DiscordContext) => Effect.Effect<HttpServerResponse.HttpServerResponse>
const json = (body: unknown) => Effect.succeed(HttpServerResponse.jsonUnsafe(body))

export const dmRoutes = (store: DiscordStore): ReadonlyArray<readonly ["POST", string, string | undefined, Handler]> => [
  ["POST", "/users/@me/channels", undefined, (ctx) =>
    Effect.gen(function*() {
      if (ctx.principal?.kind !== "bot") return Errors.unauthorized()
      const bot = ctx.principal.bot
      const body = yield* ctx.request.json.pipe(Effect.catch(() => Effect.succeed(undefined)))
      const recipient = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["recipient_id"] : undefined
      const user = typeof recipient === "string" ? findUser(recipient) : undefined
      if (user === undefined) return discordError(400, "Invalid Recipient(s)", 50033)
      const id = `36${bot.id.slice(-8)}${user.id.slice(-8)}`
      of(store).channels.set(id, { userId: user.id, botId: bot.id })
      return yield* json({ id, type: 1, last_message_id: null, recipients: [{ id: user.id, username: user.username }] })
    })],
  ["POST", "/channels/{id}/messages", "id", (ctx) =>
    Effect.gen(function*() {
      if (ctx.principal?.kind !== "bot") return Errors.unauthorized()
      const bot = ctx.principal.bot
      const channel = of(store).channels.get(ctx.params["id"] ?? "")
      if (channel === undefined || channel.botId !== bot.id) return Errors.unknownChannel()
      if (!SEED.guilds.some((g) => g.botIds.includes(bot.id) && g.members.some((m) => m.userId === channel.userId))) {
        return discordError(403, "Cannot send messages to this user", 50007)
      }
      const raw = yield* ctx.request.json.pipe(Effect.catch(() => Effect.succeed(undefined)))
      const checked = checkMessage(raw)
      if (checked.error) return checked.error
      const message = { id: store.nextId("35"), userId: channel.userId, botId: bot.id, channelId: ctx.params["id"]!, body: checked.body, at: ctx.now }
      of(store).messages.push(message)
      return yield* json({ id: message.id, channel_id: message.channelId, type: 0, ...checked.body })
    })]
]

export const DmInboxRoutes = (store: DiscordStore) =>
  HttpRouter.use((router) =>
    router.add("GET", "/sandbox/discord/dms", (request) =>
      Effect.sync(() => {
        const userId = new URL(request.url, "http://sandbox").searchParams.get("user_id")
        const messages = of(store).messages
          .filter((m) => userId === null || m.userId === userId)
          .map((m) => ({ id: m.id, user_id: m.userId, bot_id: m.botId, channel_id: m.channelId, body: m.body, at: new Date(m.at).toISOString() }))
        return HttpServerResponse.jsonUnsafe({ messages }, { headers: { "cache-control": "no-store" } })
      }))
  ).pipe(Layer.orDie)
