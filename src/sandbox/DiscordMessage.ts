/** What Discord checks in a message executed through a webhook, with its error bodies. */
import { discordError } from "./DiscordHttp.ts"
import { invalidFormBody } from "./InvalidFormBody.ts"
import type { MessageRoute } from "./MessageRules.ts"
import { messageProblems } from "./MessageRules.ts"

const invalidField = (field: string, code: string, message: string) =>
  discordError(400, "Invalid Form Body", 50035, { errors: { [field]: { _errors: [{ code, message }] } } })

/**
 * Discord's checks of an executed message: not empty, `content` at most 2,000 characters (counted
 * in code points), `username` 1–80 without "clyde"/"discord", at most 10 embeds,
 * `allowed_mentions.parse` of users/roles/everyone, a `thread_name` of at most 100 characters and at
 * most 5 `applied_tags` (IncomingWebhookRequestPartial). Where a thread_name may go: DiscordThreads.ts.
 * Then, together in one 50035, the problems of `schema` (the route's request schema, where the caller
 * checks one) and Discord's rules beyond it for `route` (MessageRules.ts: flags, embeds' total size,
 * components, allowed mentions).
 */
export const checkMessage = (raw: unknown, route: MessageRoute = "execute", schema?: (body: Record<string, unknown>) => ReadonlyArray<string>) => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { error: discordError(400, "Cannot send an empty message", 50006) } as const
  const body = raw as Record<string, unknown>
  const has = (key: string) => key in body && body[key] !== null && body[key] !== "" && !(Array.isArray(body[key]) && (body[key] as Array<unknown>).length === 0)
  if (!has("content") && !has("embeds") && !has("components") && !has("poll")) {
    return { error: discordError(400, "Cannot send an empty message", 50006) } as const
  }
  const content = body["content"]
  if (content !== undefined && content !== null && typeof content !== "string") {
    return { error: invalidField("content", "BASE_TYPE_STRING", "Must be a string.") } as const
  }
  if (typeof content === "string" && [...content].length > 2000) {
    return { error: invalidField("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.") } as const
  }
  const username = body["username"]
  if (username !== undefined && username !== null) {
    if (typeof username !== "string" || username.length < 1 || username.length > 80) {
      return { error: invalidField("username", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 80 in length.") } as const
    }
    if (/clyde|discord/i.test(username)) {
      return { error: invalidField("username", "USERNAME_INVALID_CONTAINS", "Username cannot contain \"clyde\" or \"discord\"") } as const
    }
  }
  if (Array.isArray(body["embeds"]) && body["embeds"].length > 10) {
    return { error: invalidField("embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.") } as const
  }
  const mentions = body["allowed_mentions"]
  const parse = typeof mentions === "object" && mentions !== null ? (mentions as Record<string, unknown>)["parse"] : undefined
  if (parse !== undefined && (!Array.isArray(parse) || parse.some((p) => p !== "users" && p !== "roles" && p !== "everyone"))) {
    return { error: invalidField("allowed_mentions", "BASE_TYPE_CHOICES", "Value must be one of {'users', 'roles', 'everyone'}.") } as const
  }
  const threadName = body["thread_name"]
  if (threadName !== undefined && threadName !== null && (typeof threadName !== "string" || [...threadName].length > 100)) {
    return { error: invalidField("thread_name", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.") } as const
  }
  const tags = body["applied_tags"]
  if (tags !== undefined && tags !== null && (!Array.isArray(tags) || tags.length > 5 || tags.some((t) => typeof t !== "string"))) {
    return { error: invalidField("applied_tags", "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.") } as const
  }
  const problems = [...(schema?.(body) ?? []), ...messageProblems(body, route)]
  if (problems.length > 0) return { error: invalidFormBody(problems) } as const
  return { body } as const
}
