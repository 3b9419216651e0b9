/**
 * The sandbox's thread and announcement-channel routes (delivery.md §10): deleting a thread (what a
 * test needs to see a feed's thread go) and publishing a message to the following servers.
 */
import { discordError, Errors } from "./DiscordHttp.ts"
import { botGuild, botOnly, fail, json } from "./DiscordRoutes.ts"
import type { Handler, Method, Options } from "./DiscordRoutes.ts"
import { lookupChannel } from "./seed/ChannelLookup.ts"
import * as Shapes from "./DiscordShapes.ts"
import type { DiscordStore } from "./DiscordState.ts"
import { computePermissions, findChannel, findThread, PermissionBits } from "./Seed.ts"

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
      if (((computePermissions(found.guild, bot.id) ?? 0n) & PermissionBits.MANAGE_MESSAGES) === 0n) {
        return fail(discordError(403, "Missing Permissions", 50013))
      }
      const message = store.messages.find((m) => m.id === ctx.params["message_id"] && m.channelId === found.channel.id)
      if (!message) return fail(discordError(404, "Unknown Message", 10008))
      // Discord: publishing twice is refused (40033 "This message has already been crossposted").
      if (((message.flags ?? 0) & 1) !== 0) return fail(discordError(400, "This message has already been crossposted.", 40033))
      message.flags = (message.flags ?? 0) | 1
      const webhook = store.webhooks.get(message.webhookId)
      return json(webhook ? Shapes.webhookMessage(message, webhook, message.body as Record<string, unknown>) : { id: message.id })
    })
  ],
]
