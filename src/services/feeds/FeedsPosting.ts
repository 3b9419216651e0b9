/**
 * The input rules of delivery.md §10 that need the feed's server: `mention_roles` are roles of that
 * server (never @everyone, whose id is the server's), `thread_id` is a thread of that server (of the
 * webhook's channel when it is known), and `crosspost: true` needs an announcement channel where the
 * bot holds MANAGE_MESSAGES. The schema has already judged each value's shape (domain/Feed.ts).
 * `postingProblems` is the pure rule; `FeedsPosting.make` asks the chat platform what it needs.
 */
import { Effect, Option } from "effect"
import { BadRequest } from "../../domain/infra/Errors.ts"
import type { Problem } from "../../domain/infra/Errors.ts"
import type { WebhookOptionsInput } from "../../domain/feeds/Feed.ts"
import type { PlatformChannel, PlatformError } from "../platform/ChatPlatform.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import type { ServerAccess } from "../platform/Directory.ts"
import type { FeedsError } from "./FeedsProblems.ts"

/** Discord's MANAGE_MESSAGES (1 << 13) and ADMINISTRATOR (1 << 3). */
export const MANAGE_MESSAGES = 1n << 13n
const ADMINISTRATOR = 1n << 3n
/** Discord's channel types: announcement (GuildNews) and the three thread types. */
export const ANNOUNCEMENT = 5
export const THREAD_TYPES: ReadonlyArray<number> = [10, 11, 12]

const problem = (path: string, message: string): Problem => ({ message: `${path}: ${message}`, additionalProperties: { path } })

/** What the rules know of the server besides `access`. */
export interface PostingFacts {
  /** The channel the feed's webhook posts to, when known. */
  readonly channelId: string | undefined
  /** The bot's permissions in the server (asked only for `crosspost: true`). */
  readonly botPermissions: bigint | undefined
  /** The channel `thread_id` names, as the platform answered (None: it does not know it). */
  readonly thread: Option.Option<PlatformChannel & { readonly parent_id?: string | null }> | undefined
}

/** Every problem of the options against the feed's server (empty: none). */
export const postingProblems = (
  access: Pick<ServerAccess, "serverId" | "roles" | "channels">,
  options: WebhookOptionsInput | undefined,
  facts: PostingFacts
): ReadonlyArray<Problem> => {
  const out: Array<Problem> = []
  const roles = options?.mention_roles ?? []
  roles.forEach((id, i) => {
    const path = `webhook_options.mention_roles[${i}]`
    if (id === access.serverId) out.push(problem(path, "@everyone cannot be mentioned by a feed; name a role of the server."))
    else if (!access.roles.some((r) => r.id === id)) out.push(problem(path, `${id} is not a role of this server.`))
  })
  const threadId = options?.thread_id
  if (threadId !== undefined && threadId !== null && facts.thread !== undefined) {
    const path = "webhook_options.thread_id"
    const t = facts.thread
    if (Option.isNone(t) || (t.value.guild_id !== undefined && t.value.guild_id !== access.serverId)) {
      out.push(problem(path, `${threadId} is not a thread of this server.`))
    } else if (!THREAD_TYPES.includes(t.value.type)) {
      out.push(problem(path, `${threadId} is a channel, not a thread; pass the channel as webhook_channel instead.`))
    } else if (facts.channelId !== undefined && t.value.parent_id !== undefined && t.value.parent_id !== facts.channelId) {
      out.push(problem(path, `thread ${threadId} is not in the webhook's channel ${facts.channelId}.`))
    }
  }
  if (options?.crosspost === true && facts.channelId !== undefined) {
    const path = "webhook_options.crosspost"
    const channel = access.channels.find((c) => c.id === facts.channelId)
    const perms = facts.botPermissions ?? 0n
    if (channel === undefined || channel.type !== ANNOUNCEMENT) {
      out.push(problem(path, `channel ${facts.channelId} is not an announcement channel; only their messages can be published.`))
    } else if ((perms & (MANAGE_MESSAGES | ADMINISTRATOR)) === 0n) {
      out.push(problem(path, `the bot lacks the MANAGE_MESSAGES permission in channel ${facts.channelId}, which publishing needs; grant it or set crosspost to false.`))
    }
  }
  return out
}

const platformFault = (e: PlatformError): FeedsError =>
  e._tag === "PlatformRejected" ? BadRequest.of(`The chat platform refused a check of the options (${e.status}).`) : e

export const FeedsPosting = {
  /** Needs ChatPlatform. */
  make: Effect.gen(function*() {
    const platform = yield* ChatPlatform
    const check = (
      access: ServerAccess,
      options: WebhookOptionsInput | undefined,
      channelId: string | undefined
    ): Effect.Effect<void, FeedsError> =>
      Effect.gen(function*() {
        const botPermissions = options?.crosspost === true && channelId !== undefined
          ? yield* platform.getBotGuilds(access.botToken).pipe(
            Effect.mapError(platformFault),
            Effect.map((gs) => {
              const g = gs.find((s) => s.id === access.serverId)
              return g === undefined ? 0n : BigInt(g.permissions)
            })
          )
          : undefined
        const threadId = options?.thread_id
        const thread = threadId === undefined || threadId === null
          ? undefined
          : yield* platform.getChannel(access.botToken, threadId).pipe(
            Effect.map(Option.some),
            Effect.catchTag("PlatformRejected", (e) =>
              e.status === 404 || e.status === 403 ? Effect.succeed(Option.none()) : Effect.fail(platformFault(e)))
          )
        const problems = postingProblems(access, options, { channelId, botPermissions, thread })
        if (problems.length > 0) return yield* BadRequest.many(problems)
      })
    return { check }
  })
}
