/** What the gateway reads from the chat platform, in the contract's wire names. */
import { Schema } from "effect"

export const User = Schema.Struct({
  username: Schema.String,
  discriminator: Schema.String,
  id: Schema.String,
  avatar: Schema.NullOr(Schema.String),
  locale: Schema.String
}).annotate({ identifier: "User" })
export type User = typeof User.Type

export const Bot = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  icon: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Bot" })
export type Bot = typeof Bot.Type

export const BotsResponse = Schema.Struct({ bots: Schema.Array(Bot) })

export const ServerSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  icon: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ServerSummary" })
export type ServerSummary = typeof ServerSummary.Type

export const ServersResponse = Schema.Struct({ servers: Schema.Array(ServerSummary) })

export const ChannelType = Schema.Literals(["GuildText", "GuildNews", "GuildVoice"])
export type ChannelType = typeof ChannelType.Type

export const Channel = Schema.Struct({ id: Schema.String, name: Schema.String, type: ChannelType }).annotate({
  identifier: "Channel"
})
export type Channel = typeof Channel.Type

export const Role = Schema.Struct({ id: Schema.String, name: Schema.String, color_hex: Schema.String }).annotate({
  identifier: "Role"
})
export type Role = typeof Role.Type

export const Server = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  icon: Schema.NullOr(Schema.String),
  channels: Schema.Array(Channel),
  roles: Schema.Array(Role)
}).annotate({ identifier: "Server" })
export type Server = typeof Server.Type

export const ModuleName = Schema.Literals(["forms", "photo", "forum", "rss", "streaming", "microblog", "video"])
export type ModuleName = typeof ModuleName.Type

export const FeedModuleName = Schema.Literals(["photo", "forum", "rss", "streaming", "microblog", "video"])
export type FeedModuleName = typeof FeedModuleName.Type

export const Module = Schema.Struct({
  name: ModuleName,
  full_name: Schema.String,
  short_description: Schema.String,
  available: Schema.Boolean,
  image: Schema.String
}).annotate({ identifier: "Module" })
export type Module = typeof Module.Type

export const ModulesResponse = Schema.Struct({ modules: Schema.Array(Module) })
