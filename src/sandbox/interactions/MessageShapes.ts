/**
 * A bot's message in Discord's whole shape (MessageResponse of openapi.json): author, timestamp,
 * edited_timestamp, mentions and mention_roles as the allowed mentions let them ping, embeds and
 * components as Discord echoes them (`type: "rich"`, components numbered with `id`, select defaults),
 * attachments with their URLs.
 */
import { publicBotUser } from "../DiscordShapes.ts"
import type { SeedBot, SeedUser } from "../Seed.ts"
import { findUser, SEED } from "../Seed.ts"
import { componentsOut, embedsOut } from "./Echo.ts"
import type { Body, BotMessage } from "./State.ts"

export { componentsOut, embedsOut } from "./Echo.ts"

const isObject = (u: unknown): u is Body => typeof u === "object" && u !== null && !Array.isArray(u)
const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

/** A user as other users see it (UserResponse). */
export const publicUser = (u: SeedUser) => ({
  id: u.id,
  username: u.username,
  avatar: u.avatar,
  discriminator: u.discriminator,
  public_flags: 0,
  flags: 0,
  banner: null,
  accent_color: null,
  global_name: u.global_name,
  avatar_decoration_data: null,
  collectibles: null,
  primary_guild: null
})

/** Discord's timestamp format: ISO 8601 with `+00:00`. */
export const isoTimestamp = (at: number): string => new Date(at).toISOString().replace("Z", "+00:00")

/** Who a message's content pings, as its `allowed_mentions` lets it (absent: everything parses). */
const mentionsOf = (body: Body, guildId: string | undefined) => {
  const content = typeof body["content"] === "string" ? body["content"] : ""
  const allowed = isObject(body["allowed_mentions"]) ? body["allowed_mentions"] : undefined
  const parse = allowed === undefined ? ["users", "roles", "everyone"] : list(allowed["parse"])
  const listed = (key: string) => (allowed === undefined ? [] : list(allowed[key]))
  const userIds = [...content.matchAll(/<@!?(\d{17,20})>/g)].map((m) => m[1]!)
    .filter((id) => parse.includes("users") || listed("users").includes(id))
  const guild = SEED.guilds.find((g) => g.id === guildId)
  const roleIds = [...content.matchAll(/<@&(\d{17,20})>/g)].map((m) => m[1]!)
    .filter((id) => guild?.roles.some((r) => r.id === id) === true)
    .filter((id) => parse.includes("roles") || listed("roles").includes(id))
  return {
    mentions: [...new Set(userIds)].flatMap((id) => {
      const user = findUser(id)
      return user ? [publicUser(user)] : []
    }),
    mention_roles: [...new Set(roleIds)],
    mention_everyone: /@(everyone|here)/.test(content) && parse.includes("everyone")
  }
}

export interface StoredAttachment {
  readonly id: string
  readonly filename: string
  readonly size: number
}

export const attachmentsOf = (body: Body): ReadonlyArray<StoredAttachment> =>
  list(body["attachments"]).flatMap((a) =>
    isObject(a) && typeof a["filename"] === "string"
      ? [{ id: String(a["id"] ?? "0"), filename: a["filename"], size: typeof a["size"] === "number" ? a["size"] : 0 }]
      : []
  )

/** An attachment's media type, as its attachment object and its URL give it. */
export const contentTypeOf = (filename: string): string => filename.endsWith(".txt") ? "text/plain; charset=utf-8" : "application/octet-stream"

/** Where an attachment's file is served (Discord: `https://cdn.discordapp.com/attachments/{channel_id}/{attachment_id}/{filename}`). */
export const attachmentUrl = (origin: string, channelId: string, a: StoredAttachment): string =>
  `${origin}/sandbox/discord/attachments/${channelId}/${a.id}/${encodeURIComponent(a.filename)}`

/** The nonce the message was created with, echoed as Discord does (absent when none was sent). */
const nonceOf = (body: Body) =>
  typeof body["nonce"] === "string" || typeof body["nonce"] === "number" ? { nonce: body["nonce"] } : {}

/** The message as the platform answers it (MessageResponse). */
export const messageResponse = (m: BotMessage, bot: SeedBot, origin: string) => {
  const latest = m.versions[m.versions.length - 1]!
  const body = latest.body
  const flags = typeof body["flags"] === "number" ? body["flags"] : 0
  return {
    id: m.id,
    type: m.type,
    content: typeof body["content"] === "string" ? body["content"] : "",
    channel_id: m.channelId,
    author: publicBotUser(bot),
    attachments: attachmentsOf(body).map((a) => ({
      id: a.id,
      filename: a.filename,
      size: a.size,
      url: attachmentUrl(origin, m.channelId, a),
      proxy_url: attachmentUrl(origin, m.channelId, a),
      content_type: contentTypeOf(a.filename)
    })),
    embeds: embedsOut(body["embeds"]),
    ...mentionsOf(body, m.guildId),
    pinned: false,
    tts: body["tts"] === true,
    timestamp: isoTimestamp(m.versions[0]!.at),
    edited_timestamp: m.versions.length > 1 ? isoTimestamp(latest.at) : null,
    flags,
    components: componentsOut(body["components"]),
    ...nonceOf(m.versions[0]!.body),
    ...(m.interactionId !== undefined ? { application_id: bot.id, webhook_id: bot.id } : {})
  }
}

/** A message's body for the inbox: as sent, its attachments by name. */
export const inboxBody = (body: Body): Body =>
  "attachments" in body ? { ...body, attachments: attachmentsOf(body).map((a) => a.filename) } : body
