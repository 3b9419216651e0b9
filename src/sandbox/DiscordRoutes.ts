/** What the sandbox's Discord route tables are made of (DiscordApi.ts, DiscordThreads.ts). */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { DiscordContext } from "./DiscordHttp.ts"
import { discordHandler, Errors } from "./DiscordHttp.ts"
import type { SeedBot, SeedGuild } from "./Seed.ts"
import { findGuild } from "./Seed.ts"

export type Options = Parameters<typeof discordHandler>[4]
export type Method = "GET" | "POST" | "DELETE"
export type Handler = (ctx: DiscordContext) => Effect.Effect<HttpServerResponse.HttpServerResponse>

export const json = (body: unknown, status = 200) => Effect.succeed(HttpServerResponse.jsonUnsafe(body, { status }))
export const fail = (response: HttpServerResponse.HttpServerResponse) => Effect.succeed(response)

export const botOnly = (handler: (ctx: DiscordContext, bot: SeedBot) => Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
(ctx: DiscordContext) => ctx.principal?.kind === "bot" ? handler(ctx, ctx.principal.bot) : fail(Errors.unauthorized())

export const botGuild = (bot: SeedBot, guildId: string | undefined): SeedGuild | undefined => {
  const guild = guildId ? findGuild(guildId) : undefined
  return guild && guild.botIds.includes(bot.id) ? guild : undefined
}

