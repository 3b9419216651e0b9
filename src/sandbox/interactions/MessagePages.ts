/**
 * The paging of `GET /channels/{id}/messages` in the sandbox's Discord API (the route is
 * interactions/ChannelMessages.ts): newest first. `limit` 1–100 (default 50), `before` / `after` / `around` a message
 * id; with `after`, the messages just after it (the oldest of them), still newest first, as Discord
 * does. A bot not in the server, or without VIEW_CHANNEL: 403 50001; without READ_MESSAGE_HISTORY:
 * an empty list (what Discord answers).
 */
import { HttpServerResponse } from "effect/http"
import { discordError } from "../DiscordHttp.ts"

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
