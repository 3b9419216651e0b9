/**
 * Discord's answers as the gateway reads them: the fields it uses of UserPIIResponse, MyGuildResponse,
 * GuildResponse, GuildChannelResponse, GuildRoleResponse, GuildIncomingWebhookResponse and the OAuth2
 * token answer (extra fields are ignored), and their conversion to the ChatPlatform's types (secrets Redacted).
 */
import { Redacted, Schema } from "effect"
import type { PlatformTokens, PlatformWebhook } from "../../../services/platform/ChatPlatform.ts"

export const User = Schema.Struct({
  id: Schema.String,
  username: Schema.String,
  discriminator: Schema.String,
  global_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  avatar: Schema.NullOr(Schema.String),
  locale: Schema.optionalKey(Schema.String),
  bot: Schema.optionalKey(Schema.Boolean)
})
export const GuildSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  icon: Schema.NullOr(Schema.String),
  owner: Schema.Boolean,
  permissions: Schema.String
})
export const Guild = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  icon: Schema.NullOr(Schema.String),
  owner_id: Schema.String
})
export const Channel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.Int,
  guild_id: Schema.optionalKey(Schema.String),
  parent_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  available_tags: Schema.optionalKey(Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String })))
})
export const Role = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  color: Schema.Int,
  permissions: Schema.String,
  position: Schema.Int
})
export const Webhook = Schema.Struct({
  id: Schema.String,
  type: Schema.Int,
  name: Schema.NullOr(Schema.String),
  avatar: Schema.NullOr(Schema.String),
  channel_id: Schema.String,
  guild_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  application_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  token: Schema.optionalKey(Schema.String)
})
export const Tokens = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.String,
  expires_in: Schema.Number,
  scope: Schema.String
})
/** Discord's JSON errors and OAuth2's (RFC 6749 §5.2). */
export const ErrorBody = Schema.Struct({
  code: Schema.optionalKey(Schema.Int),
  message: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.String),
  error_description: Schema.optionalKey(Schema.String)
})

export const toWebhook = (w: typeof Webhook.Type): PlatformWebhook => {
  const base = {
    id: w.id,
    type: w.type,
    name: w.name,
    avatar: w.avatar,
    channel_id: w.channel_id,
    guild_id: w.guild_id ?? null,
    application_id: w.application_id ?? null
  }
  return w.token === undefined ? base : { ...base, token: Redacted.make(w.token) }
}
export const toTokens = (t: typeof Tokens.Type): PlatformTokens => ({
  access_token: Redacted.make(t.access_token),
  refresh_token: Redacted.make(t.refresh_token),
  expires_in: t.expires_in,
  scope: t.scope
})
