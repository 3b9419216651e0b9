/**
 * Answering an interaction, as the platform takes it: the answer itself (inline in the HTTP answer,
 * or `POST /interactions/{id}/{token}/callback`, 204 or with `?with_response=true` an
 * InteractionCallbackResponse), then the interaction's webhook for 15 minutes: follow-ups `POST
 * /webhooks/{application_id}/{token}` (the first one after a deferred answer edits the loading
 * message, as Discord still does) and `GET`/`PATCH`/`DELETE .../messages/@original` (or a
 * follow-up's id). Every call is
 * recorded on the interaction, so the member player can report what the bot did after a deferred
 * answer.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { DiscordContext } from "../DiscordHttp.ts"
import { discordError } from "../DiscordHttp.ts"
import type { DiscordStore } from "../DiscordState.ts"
import { SEED } from "../Seed.ts"
import { answerProblems } from "./AnswerRules.ts"
import type { Route } from "./ChannelMessages.ts"
import { storeMessage } from "./ChannelMessages.ts"
import { applyEdit, checkEdit, checkNewMessage, invalidFormBody, readBody } from "./MessageBody.ts"
import { messageResponse } from "./MessageShapes.ts"
import type { Body, BotMessage, InteractionRecord, WebhookEvent } from "./State.ts"
import { ANSWER_DEADLINE_MS, interactionsOf, modalKey, TOKEN_TTL_MS } from "./State.ts"

const isObject = (u: unknown): u is Body => typeof u === "object" && u !== null && !Array.isArray(u)
const EPHEMERAL = 64
const LOADING = 128

const unknownInteraction = () => discordError(404, "Unknown interaction", 10062)
const unknownWebhook = () => discordError(404, "Unknown Webhook", 10015)
const unknownMessage = () => discordError(404, "Unknown Message", 10008)

const botOf = (record: InteractionRecord) => SEED.bots.find((b) => b.id === record.botId)!

const newMessage = (store: DiscordStore, record: InteractionRecord, body: Body, at: number): BotMessage =>
  storeMessage(store, {
    botId: record.botId,
    channelId: record.channelId,
    guildId: record.guildId,
    dmUserId: undefined,
    interactionId: record.id,
    ephemeralFor: typeof body["flags"] === "number" && (body["flags"] & EPHEMERAL) !== 0 ? record.userId : undefined,
    type: record.type === 2 ? 20 : 0
  }, body, at)

/** What an accepted answer does: a message, a loading message, an edit of the component's message, a modal opened. */
export const applyAnswer = (store: DiscordStore, record: InteractionRecord, answer: Body, at: number): void => {
  const type = answer["type"] as number
  const data = isObject(answer["data"]) ? answer["data"] : {}
  record.callbackType = type
  record.callbackBody = answer
  const state = interactionsOf(store)
  switch (type) {
    case 4:
      record.originalId = newMessage(store, record, data, at).id
      return
    case 5: {
      const flags = (typeof data["flags"] === "number" ? data["flags"] & EPHEMERAL : 0) | LOADING
      record.originalId = newMessage(store, record, { content: "", flags }, at).id
      return
    }
    case 6:
      record.originalId = record.messageId
      return
    case 7: {
      record.originalId = record.messageId
      const message = record.messageId !== undefined ? state.messages.get(record.messageId) : undefined
      if (message !== undefined) message.versions.push({ body: applyEdit(message.versions.at(-1)!.body, data), at })
      return
    }
    case 9:
      state.modals.set(modalKey(record.botId, record.userId), { interactionId: record.id, data, messageId: record.messageId })
      return
  }
}

/** The flags of the message whose component (or modal) made the interaction: an UPDATE_MESSAGE keeps its IS_COMPONENTS_V2. */
export const componentMessageFlags = (store: DiscordStore, record: InteractionRecord): number => {
  const flags = record.messageId !== undefined ? interactionsOf(store).messages.get(record.messageId)?.versions.at(-1)?.body["flags"] : undefined
  return typeof flags === "number" ? flags : 0
}

/** The interaction a token names, while its webhook is open (answered in time, at most 15 minutes old). */
const live = (store: DiscordStore, ctx: DiscordContext, idParam: "application_id" | "id"): InteractionRecord | undefined => {
  const record = interactionsOf(store).byToken.get(ctx.params["token"] ?? "")
  if (record === undefined || record.botId !== ctx.params[idParam]) return undefined
  if (record.invalid || record.callbackType === undefined || ctx.now - record.createdAt > TOKEN_TTL_MS) return undefined
  return record
}

const original = (store: DiscordStore, record: InteractionRecord): BotMessage | undefined => {
  const message = record.originalId !== undefined ? interactionsOf(store).messages.get(record.originalId) : undefined
  return message !== undefined && !message.deleted ? message : undefined
}

const editMessage = (ctx: DiscordContext, record: InteractionRecord, message: BotMessage, body: Body, kind: WebhookEvent["kind"]) => {
  const previous = message.versions.at(-1)!.body
  const edited = applyEdit(previous, body)
  const flags = typeof previous["flags"] === "number" ? previous["flags"] & ~LOADING : undefined
  message.versions.push({ body: flags !== undefined ? { ...edited, flags } : edited, at: ctx.now })
  record.events.push({ kind, message_id: message.id, body })
  return HttpServerResponse.jsonUnsafe(messageResponse(message, botOf(record), ctx.origin))
}

/**
 * `POST /webhooks/{id}/{token}` when the token is an interaction's: a follow-up. Undefined when it
 * is not (the route then executes an incoming webhook).
 */
export const interactionFollowup = (store: DiscordStore, ctx: DiscordContext) => {
  if (!interactionsOf(store).byToken.has(ctx.params["token"] ?? "")) return undefined
  return Effect.gen(function*() {
    const record = live(store, ctx, "id")
    if (record === undefined) return unknownWebhook()
    const read = yield* readBody(store, ctx.request)
    if (!read.ok) return read.error
    const refused = checkNewMessage(read.body, "IncomingWebhookRequestPartial", "followup")
    if (refused !== undefined) return refused
    const loading = original(store, record)
    const first = record.events.every((e) => e.kind !== "followup" && e.kind !== "edit_original")
    if (record.callbackType === 5 && loading !== undefined && first) return editMessage(ctx, record, loading, read.body, "edit_original")
    const message = newMessage(store, record, read.body, ctx.now)
    record.events.push({ kind: "followup", message_id: message.id, body: read.body })
    return HttpServerResponse.jsonUnsafe(messageResponse(message, botOf(record), ctx.origin))
  })
}

type Find = (store: DiscordStore, record: InteractionRecord, ctx: DiscordContext) => BotMessage | undefined

/** `GET`/`PATCH`/`DELETE /webhooks/{application_id}/{token}/messages/<which>` (Discord's Get/Edit/Delete Webhook Message). */
const messageRoutes = (store: DiscordStore, which: "@original" | "{message_id}", find: Find): ReadonlyArray<Route> => {
  const template = `/webhooks/{application_id}/{token}/messages/${which}`
  const kind = which === "@original" ? "original" : "followup"
  return [
    ["GET", template, "application_id", (ctx) => {
      const record = live(store, ctx, "application_id")
      if (record === undefined) return Effect.succeed(unknownWebhook())
      const message = find(store, record, ctx)
      return Effect.succeed(message ? HttpServerResponse.jsonUnsafe(messageResponse(message, botOf(record), ctx.origin)) : unknownMessage())
    }],
    ["PATCH", template, "application_id", (ctx) =>
      Effect.gen(function*() {
        const record = live(store, ctx, "application_id")
        if (record === undefined) return unknownWebhook()
        const message = find(store, record, ctx)
        if (message === undefined) return unknownMessage()
        const read = yield* readBody(store, ctx.request)
        if (!read.ok) return read.error
        const refused = checkEdit(message.versions.at(-1)!.body, read.body, "IncomingWebhookUpdateRequestPartial")
        return refused ?? editMessage(ctx, record, message, read.body, `edit_${kind}`)
      })],
    ["DELETE", template, "application_id", (ctx) => {
      const record = live(store, ctx, "application_id")
      if (record === undefined) return Effect.succeed(unknownWebhook())
      const message = find(store, record, ctx)
      if (message === undefined) return Effect.succeed(unknownMessage())
      message.deleted = true
      record.events.push({ kind: `delete_${kind}`, message_id: message.id, body: undefined })
      return Effect.succeed(HttpServerResponse.empty({ status: 204 }))
    }]
  ]
}

export const interactionRoutes = (store: DiscordStore): ReadonlyArray<Route> => [
  ["POST", "/interactions/{interaction_id}/{token}/callback", "interaction_id", (ctx) =>
    Effect.gen(function*() {
      const record = interactionsOf(store).byToken.get(ctx.params["token"] ?? "")
      if (record === undefined || record.id !== ctx.params["interaction_id"]) return unknownInteraction()
      if (record.invalid || ctx.now - record.createdAt > ANSWER_DEADLINE_MS) return unknownInteraction()
      if (record.callbackType !== undefined) return discordError(400, "Interaction has already been acknowledged.", 40060)
      const read = yield* readBody(store, ctx.request)
      if (!read.ok) return read.error
      const problems = answerProblems(record.type, record.messageId !== undefined, read.body, componentMessageFlags(store, record))
      if (problems.length > 0) return invalidFormBody(problems)
      applyAnswer(store, record, read.body, ctx.now)
      if (ctx.query.get("with_response") !== "true") return HttpServerResponse.empty({ status: 204 })
      const message = record.callbackType === 4 || record.callbackType === 7 ? original(store, record) : undefined
      return HttpServerResponse.jsonUnsafe({
        interaction: {
          id: record.id,
          type: record.type,
          ...(record.originalId !== undefined ? { response_message_id: record.originalId } : {}),
          response_message_loading: record.callbackType === 5,
          response_message_ephemeral: message?.ephemeralFor !== undefined,
          channel_id: record.channelId,
          guild_id: record.guildId
        },
        ...(message !== undefined
          ? { resource: { type: record.callbackType, message: messageResponse(message, botOf(record), ctx.origin) } }
          : {})
      })
    })],
  ...messageRoutes(store, "@original", original),
  // A follow-up (or the original) by its id: a message this interaction's webhook sent.
  ...messageRoutes(store, "{message_id}", (s, record, ctx) => {
    const message = interactionsOf(s).messages.get(ctx.params["message_id"] ?? "")
    return message !== undefined && !message.deleted && message.interactionId === record.id ? message : undefined
  })
]
