/**
 * What the member player is asked to do (`POST /sandbox/discord/interactions`), turned into the
 * interaction the platform would send: who and where from the seed, the command from the bot's
 * registered commands, the button or select from a message the member can see (any of its versions),
 * the modal the member has open. Anything a person could not do is a 400 naming why.
 */
import { Schema } from "effect"
import type { DiscordStore } from "../DiscordState.ts"
import { randomToken } from "../DiscordState.ts"
import { findGuild, findUser, SEED } from "../Seed.ts"
import type { InteractionType } from "./AnswerRules.ts"
import { context, fillModal, interactiveComponents } from "./BuildInteraction.ts"
import { messageResponse } from "./MessageShapes.ts"
import type { Body, BotMessage, InteractionRecord } from "./State.ts"
import { interactionsOf, modalKey } from "./State.ts"

export const PlayerBody = Schema.Struct({
  bot_id: Schema.String,
  user_id: Schema.optionalKey(Schema.String),
  guild_id: Schema.optionalKey(Schema.String),
  channel_id: Schema.optionalKey(Schema.String),
  action: Schema.Literals(["ping", "command", "click", "select", "submit"]),
  name: Schema.optionalKey(Schema.String),
  custom_id: Schema.optionalKey(Schema.String),
  message_id: Schema.optionalKey(Schema.String),
  values: Schema.optionalKey(Schema.Array(Schema.String)),
  fields: Schema.optionalKey(Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Array(Schema.String)]))),
  interaction_id: Schema.optionalKey(Schema.String),
  timestamp_offset_s: Schema.optionalKey(Schema.Number)
})
export type PlayerBody = typeof PlayerBody.Type

export type Prepared =
  | { readonly ok: true; readonly record: InteractionRecord; readonly payload: Body }
  | { readonly ok: false; readonly message: string }

const refuse = (message: string): Prepared => ({ ok: false, message })

const TYPES = { ping: 1, command: 2, click: 3, select: 3, submit: 5 } as const

/** Every version's components of a message, newest first: a person may still see an older one. */
const componentIn = (m: BotMessage, customId: string, componentType: 2 | 3): Body | undefined => {
  for (const version of [...m.versions].reverse()) {
    const found = interactiveComponents(version.body["components"]).find((c) => c["custom_id"] === customId && c["type"] === componentType)
    if (found !== undefined) return found
  }
  return undefined
}

/** The message the member uses a component of: named, or (ephemeral) the newest one carrying it. */
const messageFor = (store: DiscordStore, body: PlayerBody, userId: string, channelId: string, componentType: 2 | 3) => {
  const seen = (m: BotMessage) =>
    m.botId === body.bot_id && m.channelId === channelId && !m.deleted && (m.ephemeralFor === undefined || m.ephemeralFor === userId)
  const messages = [...interactionsOf(store).messages.values()].filter(seen)
  if (body.message_id !== undefined) return messages.find((m) => m.id === body.message_id)
  return messages.reverse().find((m) => m.ephemeralFor === userId && componentIn(m, body.custom_id ?? "", componentType) !== undefined)
}

export const prepare = (store: DiscordStore, body: PlayerBody, now: number, origin: string): Prepared => {
  const bot = SEED.bots.find((b) => b.id === body.bot_id)
  if (bot === undefined) return refuse(`bot_id ${body.bot_id} is no sandbox bot`)
  const state = interactionsOf(store)
  const type: InteractionType = TYPES[body.action]
  const base = {
    id: body.interaction_id ?? state.nextId("37"),
    application_id: bot.id,
    type,
    token: `sandbox-interaction.${randomToken(48)}`,
    version: 1
  }
  const record = (extra: { userId: string; guildId: string; channelId: string; messageId: string | undefined }): InteractionRecord => ({
    id: base.id,
    token: base.token,
    botId: bot.id,
    type,
    createdAt: now,
    callbackType: undefined,
    callbackBody: undefined,
    originalId: undefined,
    invalid: false,
    events: [],
    ...extra
  })
  if (body.action === "ping") {
    return { ok: true, record: record({ userId: "", guildId: "", channelId: "", messageId: undefined }), payload: base }
  }
  const user = body.user_id !== undefined ? findUser(body.user_id) : undefined
  if (user === undefined) return refuse(`user_id ${String(body.user_id)} is no sandbox user`)
  const guild = body.guild_id !== undefined ? findGuild(body.guild_id) : undefined
  if (guild === undefined) return refuse(`guild_id ${String(body.guild_id)} is no sandbox server`)
  if (!guild.botIds.includes(bot.id)) return refuse(`${bot.name} is not in ${guild.name}`)
  if (guild.ownerId !== user.id && !guild.members.some((m) => m.userId === user.id)) return refuse(`${user.username} is not a member of ${guild.name}`)
  const channel = guild.channels.find((c) => c.id === body.channel_id)
  if (channel === undefined || (channel.type !== 0 && channel.type !== 5)) return refuse(`channel_id ${String(body.channel_id)} is no text channel of ${guild.name}`)
  const where = context({ bot, user, guild, channel }, (g, id) => store.permissionsOf(g, id))
  const ids = { userId: user.id, guildId: guild.id, channelId: channel.id }

  switch (body.action) {
    case "command": {
      const command = (state.commands.get(bot.id) ?? []).find((c) => c["name"] === body.name && (c["type"] ?? 1) === 1)
      if (command === undefined) return refuse(`${bot.name} has registered no command /${String(body.name)}`)
      const contexts = command["contexts"]
      if (Array.isArray(contexts) && !contexts.includes(0)) return refuse(`/${String(body.name)} is not available in servers`)
      const data = { id: command["id"], name: command["name"], type: 1, options: [] }
      return { ok: true, record: record({ ...ids, messageId: undefined }), payload: { ...base, ...where, data } }
    }
    case "click":
    case "select": {
      if (body.custom_id === undefined) return refuse(`${body.action} needs custom_id`)
      const componentType = body.action === "click" ? 2 : 3
      const message = messageFor(store, body, user.id, channel.id, componentType)
      if (message === undefined) {
        return refuse(body.message_id !== undefined
          ? `message ${body.message_id} is not one ${user.username} can see in ${channel.name}`
          : `no ephemeral message of ${bot.name} for ${user.username} carries ${body.custom_id}`)
      }
      const component = componentIn(message, body.custom_id, componentType)
      if (component === undefined) return refuse(`message ${message.id} carries no ${body.action === "click" ? "button" : "select"} ${body.custom_id}`)
      if (component["disabled"] === true) return refuse(`${body.custom_id} is disabled`)
      const values = body.values ?? []
      if (componentType === 3) {
        const options = (Array.isArray(component["options"]) ? component["options"] : []).map((o) => String((o as Body)["value"]))
        const bad = values.filter((v) => !options.includes(v))
        if (bad.length > 0) return refuse(`${bad.join(", ")}: not options of ${body.custom_id}`)
        const min = typeof component["min_values"] === "number" ? component["min_values"] : 1
        const max = typeof component["max_values"] === "number" ? component["max_values"] : 1
        if (values.length < min || values.length > max) return refuse(`${values.length} values chosen, ${body.custom_id} takes ${min}–${max}`)
      }
      const data = { custom_id: body.custom_id, component_type: componentType, id: component["id"], ...(componentType === 3 ? { values } : {}) }
      const payload = { ...base, ...where, data, message: messageResponse(message, bot, origin) }
      return { ok: true, record: record({ ...ids, messageId: message.id }), payload }
    }
    case "submit": {
      const open = state.modals.get(modalKey(bot.id, user.id))
      if (open === undefined) return refuse(`${user.username} has no modal of ${bot.name} open`)
      const customId = String(open.data["custom_id"])
      if (body.custom_id !== undefined && body.custom_id !== customId) return refuse(`the open modal is ${customId}, not ${body.custom_id}`)
      const filled = fillModal(open.data, body.fields ?? {})
      if (!filled.ok) return refuse(`the modal refuses these fields: ${filled.problems.join("; ")}`)
      const message = open.messageId !== undefined ? state.messages.get(open.messageId) : undefined
      const data = { custom_id: customId, components: filled.components }
      const payload = { ...base, ...where, data, ...(message !== undefined ? { message: messageResponse(message, bot, origin) } : {}) }
      return { ok: true, record: record({ ...ids, messageId: message?.id }), payload }
    }
  }
}
