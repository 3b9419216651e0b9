/**
 * Interactions as the platform builds them (interactions/receiving-and-responding, components/reference):
 * the invoking member with its roles and computed permissions from the seed, the bot's
 * `app_permissions`, the channel, a continuation `token`, `version: 1`; `data` per type — the command;
 * the used component (`custom_id`, `component_type`, its numbered `id`, a select's `values`) with the
 * message it sits on; a modal's submitted values, each input inside the Label (or action row) that
 * held it, as Discord sends them back.
 */
import type { SeedBot, SeedChannel, SeedGuild, SeedUser } from "../Seed.ts"
import { computePermissions } from "../Seed.ts"
import { componentsOut, isoTimestamp, publicUser } from "./MessageShapes.ts"
import type { Body } from "./State.ts"

const isObject = (u: unknown): u is Body => typeof u === "object" && u !== null && !Array.isArray(u)
const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

export interface Where {
  readonly bot: SeedBot
  readonly user: SeedUser
  readonly guild: SeedGuild
  readonly channel: SeedChannel
}

/**
 * What every interaction but PING carries about where it happened and who did it; `permissionsOf`
 * computes a member's bits (the store's, less any a test denied: DiscordStore.permissionsOf).
 */
export const context = (
  { bot, channel, guild, user }: Where,
  permissionsOf: (guild: SeedGuild, userId: string) => bigint | undefined = computePermissions
) => {
  const member = guild.members.find((m) => m.userId === user.id)
  const permissions = (permissionsOf(guild, user.id) ?? 0n).toString()
  return {
    guild_id: guild.id,
    guild: { id: guild.id, locale: "en-US", features: [] },
    channel_id: channel.id,
    channel: {
      id: channel.id,
      type: channel.type,
      guild_id: guild.id,
      name: channel.name,
      parent_id: channel.parent_id,
      position: channel.position,
      topic: channel.topic,
      nsfw: false,
      flags: 0,
      rate_limit_per_user: 0,
      last_message_id: null,
      permissions
    },
    member: {
      user: publicUser(user),
      roles: member?.roles ?? [],
      permissions,
      joined_at: isoTimestamp(Date.UTC(2024, 0, 1)),
      premium_since: null,
      nick: null,
      avatar: null,
      banner: null,
      pending: false,
      mute: false,
      deaf: false,
      flags: 0,
      communication_disabled_until: null,
      unusual_dm_activity_until: null
    },
    app_permissions: (permissionsOf(guild, bot.id) ?? 0n).toString(),
    locale: user.locale,
    guild_locale: "en-US",
    entitlements: [],
    authorizing_integration_owners: { "0": guild.id },
    context: 0,
    attachment_size_limit: 10 * 1024 * 1024
  }
}

/** Every interactive component of a message's components, numbered as the platform numbers them. */
export const interactiveComponents = (components: unknown): ReadonlyArray<Body> => {
  const out: Array<Body> = []
  const walk = (c: unknown): void => {
    if (!isObject(c)) return
    if (typeof c["custom_id"] === "string") out.push(c)
    for (const child of list(c["components"])) walk(child)
    if (isObject(c["accessory"])) walk(c["accessory"])
    if (isObject(c["component"])) walk(c["component"])
  }
  componentsOut(components, true).forEach(walk)
  return out
}

export type Filled = { readonly ok: true; readonly components: ReadonlyArray<unknown> } | { readonly ok: false; readonly problems: ReadonlyArray<string> }

/** What an input shows before the member touches it: a text input's `value`, a string select's default options. */
const shown = (input: Body): string | ReadonlyArray<string> | undefined => {
  if (input["type"] === 4) return typeof input["value"] === "string" ? input["value"] : undefined
  if (input["type"] === 3) {
    return list(input["options"]).flatMap((o) => (isObject(o) && o["default"] === true ? [String(o["value"])] : []))
  }
  return undefined
}

/**
 * A modal filled by the member: `fields` maps each input's custom_id to a string (text input) or an
 * array of option values (string select). An input the test leaves out is submitted as the member sees
 * it: a text input with its preset `value`, a string select with its `default: true` options, else
 * empty. Refused as the client refuses: a required input left empty,
 * a length outside min/max, a choice that is no option, an id that is in no input of the modal.
 */
export const fillModal = (modal: Body, fields: Readonly<Record<string, string | ReadonlyArray<string>>>): Filled => {
  const problems: Array<string> = []
  const used = new Set<string>()
  const answer = (input: Body): Body => {
    const id = String(input["custom_id"])
    used.add(id)
    const value = id in fields ? fields[id] : shown(input)
    if (input["type"] === 4) {
      const text = typeof value === "string" ? value : ""
      if (value !== undefined && typeof value !== "string") problems.push(`${id}: a text input takes a string`)
      const length = [...text].length
      const required = input["required"] !== false
      const min = typeof input["min_length"] === "number" ? input["min_length"] : 0
      const max = typeof input["max_length"] === "number" ? input["max_length"] : 4000
      if (required && length === 0) problems.push(`${id}: required`)
      if (length > 0 && (length < min || length > max)) problems.push(`${id}: length ${length} is outside ${min}–${max}`)
      return { type: 4, id: input["id"], custom_id: id, value: text }
    }
    if (input["type"] === 3) {
      const values = Array.isArray(value) ? value : value === undefined ? [] : [value]
      const options = list(input["options"]).flatMap((o) => (isObject(o) ? [String(o["value"])] : []))
      const min = typeof input["min_values"] === "number" ? input["min_values"] : 1
      const max = typeof input["max_values"] === "number" ? input["max_values"] : 1
      const required = input["required"] !== false
      for (const v of values) if (!options.includes(v)) problems.push(`${id}: ${JSON.stringify(v)} is not one of its options`)
      if ((required || values.length > 0) && (values.length < min || values.length > max)) {
        problems.push(`${id}: ${values.length} chosen, expected ${min}–${max}`)
      }
      return { type: 3, id: input["id"], custom_id: id, values }
    }
    problems.push(`${id}: component type ${String(input["type"])} cannot be filled by the player`)
    return { type: input["type"], id: input["id"], custom_id: id }
  }
  const components = componentsOut(modal["components"], true).map((c) => {
    if (!isObject(c)) return c
    if (c["type"] === 18 && isObject(c["component"])) return { type: 18, id: c["id"], component: answer(c["component"]) }
    if (c["type"] === 1) return { type: 1, id: c["id"], components: list(c["components"]).filter(isObject).map(answer) }
    return { type: c["type"], id: c["id"] }
  })
  for (const key of Object.keys(fields)) if (!used.has(key)) problems.push(`${key}: no input of the open modal has this custom_id`)
  return problems.length > 0 ? { ok: false, problems } : { ok: true, components }
}
