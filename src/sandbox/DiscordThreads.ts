/**
 * The sandbox's thread and announcement-channel routes (delivery.md §10): deleting a thread (what a
 * test needs to see a feed's thread go) and publishing a message to the following servers, with
 * Discord's refusals and its limit of 10 publications per channel per hour.
 */
import { HttpServerResponse } from "effect/http"
import { discordError, Errors } from "./DiscordHttp.ts"
import { botGuild, botOnly, fail, json } from "./DiscordRoutes.ts"
import type { Handler, Method, Options } from "./DiscordRoutes.ts"
import { lookupChannel } from "./seed/ChannelLookup.ts"
import * as Shapes from "./DiscordShapes.ts"
import type { DiscordStore } from "./DiscordState.ts"
import { findChannel, findThread, PermissionBits } from "./Seed.ts"

/** Discord's limit on publishing: 10 messages per announcement channel per hour (a rolling hour here). */
export const PUBLISHES_PER_WINDOW = 10
export const PUBLISH_WINDOW_MS = 3_600_000

/**
 * The 429 past that limit: the wait in the body's `retry_after` (seconds), which clients are to
 * trust over the headers for this route, and the scope `shared` (the channel's limit, not the caller's).
 */
const publishLimited = (waitMs: number) => {
  const retryAfter = Math.max(0.001, waitMs / 1000)
  return HttpServerResponse.jsonUnsafe(
    { message: "You are being rate limited.", retry_after: Number(retryAfter.toFixed(3)), global: false, code: 0 },
    { status: 429, headers: { "retry-after": String(Math.ceil(retryAfter)), "x-ratelimit-scope": "shared" } }
  )
}

export const threadRoutes = (store: DiscordStore): ReadonlyArray<readonly [Method, string, string | undefined, Handler, Options?]> => [
  [
    "DELETE",
    "/channels/{id}",
    "id",
    // Only a thread may be deleted here (the seeded channels stay): what a test needs to see a feed's thread go.
    botOnly((ctx, bot) => {
      const id = ctx.params["id"] ?? ""
      const thread = store.deletedChannels.has(id) ? undefined : findThread(id)
      if (!thread || !botGuild(bot, thread.guildId)) return fail(Errors.unknownChannel())
      store.deletedChannels.add(id)
      return json(lookupChannel(id)!.body)
    })
  ],
  [
    "POST",
    "/channels/{id}/messages/{message_id}/crosspost",
    "id",
    botOnly((ctx, bot) => {
      const found = findChannel(ctx.params["id"] ?? "")
      if (!found || !botGuild(bot, found.guild.id)) return fail(Errors.unknownChannel())
      if (found.channel.type !== 5) return fail(discordError(400, "Cannot execute action on this channel type", 50024))
      if (((store.permissionsOf(found.guild, bot.id) ?? 0n) & PermissionBits.MANAGE_MESSAGES) === 0n) {
        return fail(Errors.missingPermissions())
      }
      const message = store.messages.find((m) => m.id === ctx.params["message_id"] && m.channelId === found.channel.id)
      if (!message) return fail(discordError(404, "Unknown Message", 10008))
      // Discord: publishing twice is refused (40033 "This message has already been crossposted").
      if (((message.flags ?? 0) & 1) !== 0) return fail(discordError(400, "This message has already been crossposted.", 40033))
      // The platform's limit: 10 publications per announcement channel per hour, whoever publishes.
      const recent = (store.published.get(found.channel.id) ?? []).filter((at) => at > ctx.now - PUBLISH_WINDOW_MS)
      if (recent.length >= PUBLISHES_PER_WINDOW) return fail(publishLimited(recent[0]! + PUBLISH_WINDOW_MS - ctx.now))
      store.published.set(found.channel.id, [...recent, ctx.now])
      message.flags = (message.flags ?? 0) | 1
      const webhook = store.webhooks.get(message.webhookId)
      return json(webhook ? Shapes.webhookMessage(message, webhook, message.body as Record<string, unknown>) : { id: message.id, flags: message.flags })
    })
  ]
]
