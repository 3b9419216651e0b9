/**
 * `GET /channels/{id}/messages` in the sandbox's Discord API: the channel's messages as Discord
 * answers them to a bot (MessageResponse, the webhook's messages with `webhook_id` and the webhook
 * as `author`), newest first. `limit` 1–100 (default 50), `before` / `after` / `around` a message
 * id; with `after`, the messages just after it (the oldest of them), still newest first, as Discord
 * does. A bot not in the server, or without VIEW_CHANNEL: 403 50001; without READ_MESSAGE_HISTORY:
 * an empty list (what Discord answers).
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { DiscordContext } from "./DiscordHttp.ts"
import { discordError, Errors } from "./DiscordHttp.ts"
import * as Shapes from "./DiscordShapes.ts"
import type { DiscordStore, WebhookMessage } from "./DiscordState.ts"
import type { SeedWebhook } from "./Seed.ts"
import { computePermissions, findChannel, PermissionBits } from "./Seed.ts"

/** What a page is cut by: Discord's query of the route. */
export interface PageQuery {
  readonly limit: number
  readonly before?: string | undefined
  readonly after?: string | undefined
  readonly around?: string | undefined
}

const SNOWFLAKE = /^\d{1,20}$/

/** The page of `messages` (any order) Discord would answer for `query`: newest first. */
export const pageOfMessages = <M extends { readonly id: string }>(messages: ReadonlyArray<M>, query: PageQuery): Array<M> => {
  const newestFirst = [...messages].sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0))
  if (query.before !== undefined) {
    const before = BigInt(query.before)
    return newestFirst.filter((m) => BigInt(m.id) < before).slice(0, query.limit)
  }
  if (query.after !== undefined) {
    const after = BigInt(query.after)
    const later = newestFirst.filter((m) => BigInt(m.id) > after)
    return later.slice(Math.max(0, later.length - query.limit))
  }
  if (query.around !== undefined) {
    const around = BigInt(query.around)
    const index = newestFirst.findIndex((m) => BigInt(m.id) <= around)
    const start = Math.max(0, (index < 0 ? newestFirst.length : index) - Math.floor(query.limit / 2))
    return newestFirst.slice(start, start + query.limit)
  }
  return newestFirst.slice(0, query.limit)
}

const invalidForm = (field: string, message: string) =>
  discordError(400, "Invalid Form Body", 50035, { errors: { [field]: { _errors: [{ code: "NUMBER_TYPE_MAX", message }] } } })

/** The query of the route, or Discord's 400 for a bad one. */
export const readPageQuery = (query: URLSearchParams): PageQuery | { readonly error: HttpServerResponse.HttpServerResponse } => {
  const rawLimit = query.get("limit")
  const limit = rawLimit === null ? 50 : Number(rawLimit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return { error: invalidForm("limit", "int value should be between 1 and 100.") }
  for (const key of ["before", "after", "around"] as const) {
    const value = query.get(key)
    if (value !== null && !SNOWFLAKE.test(value)) return { error: invalidForm(key, "Value \"" + value + "\" is not snowflake.") }
  }
  return {
    limit,
    before: query.get("before") ?? undefined,
    after: query.get("after") ?? undefined,
    around: query.get("around") ?? undefined
  }
}

/** A message's webhook as Discord shows it, also after the webhook was deleted. */
const authorOf = (store: DiscordStore, m: WebhookMessage): SeedWebhook =>
  store.webhooks.get(m.webhookId) ??
    { id: m.webhookId, name: "Deleted webhook", avatar: null, channelId: m.channelId, guildId: m.guildId, applicationId: "", token: "" }

export const channelMessageRoutes = (
  store: DiscordStore
): ReadonlyArray<readonly ["GET", string, string | undefined, (ctx: DiscordContext) => Effect.Effect<HttpServerResponse.HttpServerResponse>]> => [
  ["GET", "/channels/{id}/messages", "id", (ctx) =>
    Effect.sync(() => {
      if (ctx.principal?.kind !== "bot") return Errors.unauthorized()
      const bot = ctx.principal.bot
      const found = ctx.params["id"] ? findChannel(ctx.params["id"]) : undefined
      if (found === undefined) return Errors.unknownChannel()
      const permissions = found.guild.botIds.includes(bot.id) ? computePermissions(found.guild, bot.id) ?? 0n : 0n
      if ((permissions & PermissionBits.VIEW_CHANNEL) === 0n) return Errors.missingAccess()
      const query = readPageQuery(ctx.query)
      if ("error" in query) return query.error
      if ((permissions & PermissionBits.READ_MESSAGE_HISTORY) === 0n) return HttpServerResponse.jsonUnsafe([])
      const page = pageOfMessages(store.messages.filter((m) => m.channelId === found.channel.id), query)
      return HttpServerResponse.jsonUnsafe(
        page.map((m) => Shapes.webhookMessage(m, authorOf(store, m), (m.body ?? {}) as Readonly<Record<string, unknown>>))
      )
    })]
]
