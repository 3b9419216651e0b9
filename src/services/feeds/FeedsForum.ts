/**
 * Whether a feed's webhook posts in a forum channel, and that forum's tags (delivery.md §10: a forum
 * webhook opens one post per item, named by `forum_thread_name`, tagged with the tags `forum_tags`
 * names). A webhook in a forum that is sent no `thread_name` is refused by the platform (400, code
 * 220001 "Webhooks posted to forum channels must have a thread_name or thread_id"), so the worker
 * must know before it renders. Read when a feed is created or updated and when its test message is
 * sent, and stored with the feed (FeedsRepo `webhook.forumTags`): the worker never asks.
 *
 * `forumOf` is the rule; `FeedsForum.make` reads the channel: the server's channel listing says
 * first (a text or news channel is no forum: nothing to ask); otherwise the channel is read now,
 * uncached (GET /channels/{id}, whose forum carries `available_tags`), so a renamed or added tag
 * counts from the next read. A channel the bot may not see (403/404) is judged by the listing,
 * else taken as no forum.
 */
import { Effect } from "effect"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { ForumTag } from "../delivery/render/ForumPost.ts"
import type { PlatformChannel, PlatformError } from "../platform/ChatPlatform.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import type { ServerAccess } from "../platform/Directory.ts"

/** Discord's channel types whose webhooks open a post per message: GUILD_FORUM (15) and GUILD_MEDIA (16). */
export const FORUM_TYPES: ReadonlyArray<number> = [15, 16]

/** The forum's tags (`[]` for a forum without any) when `channel` is a forum; null when it is not. */
export const forumOf = (channel: Pick<PlatformChannel, "type" | "available_tags">): ReadonlyArray<ForumTag> | null =>
  FORUM_TYPES.includes(channel.type) ? (channel.available_tags ?? []).map((t) => ({ id: t.id, name: t.name })) : null

const platformFault = (e: PlatformError): ServiceUnavailable | Exclude<PlatformError, { readonly _tag: "PlatformRejected" }> =>
  e._tag !== "PlatformRejected"
    ? e
    : e.status === 401
    ? ServiceUnavailable.of("The chat platform refused the bot's credentials.", 60)
    : ServiceUnavailable.of(`The chat platform refused to show the webhook's channel (${e.status}).`, 10)

export const FeedsForum = {
  /** Needs ChatPlatform. */
  make: Effect.gen(function*() {
    const platform = yield* ChatPlatform
    /** The forum the webhook's channel `channelId` is (its tags), or null; a platform outage is a 503 (408 on a time-out). */
    const read = (access: Pick<ServerAccess, "botToken" | "channels">, channelId: string) => {
      const listed = access.channels.find((c) => c.id === channelId)
      if (listed !== undefined && !FORUM_TYPES.includes(listed.type)) return Effect.succeed(null)
      return platform.getChannel(access.botToken, channelId).pipe(
        Effect.map(forumOf),
        Effect.catchTag("PlatformRejected", (e) =>
          e.status === 403 || e.status === 404
            ? Effect.succeed(listed === undefined ? null : forumOf(listed))
            : Effect.fail(platformFault(e)))
      )
    }
    return { read }
  })
}
