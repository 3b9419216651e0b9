/**
 * The sandbox platform's side of HTTP interactions (forms-runtime.md §7), mounted with the other
 * Discord routes: the applications and their commands, bots' channel and direct messages, the
 * interaction callback and webhook routes (all Discord API routes: counted, rate-limited, faultable
 * by their names, e.g. `"POST /channels/{id}/messages"`), the inboxes and the member player.
 */
import { Effect, Layer } from "effect"
import { API, discordHandler, routerPath } from "../DiscordHttp.ts"
import { DiscordState } from "../DiscordState.ts"
import { sandboxRoute } from "../SandboxRoute.ts"
import { SEED } from "../Seed.ts"
import { applicationRoutes } from "./ApplicationRoutes.ts"
import { interactionsUrl, publicKeyHex } from "./BotKeys.ts"
import { channelRoutes } from "./ChannelMessages.ts"
import { InboxRoutes } from "./Inbox.ts"
import { interactionRoutes } from "./InteractionWebhook.ts"
import { PlayerRoute } from "./Player.ts"

export { interactionFollowup } from "./InteractionWebhook.ts"
export { interactionsOf } from "./State.ts"

export const InteractionsRoutes = Layer.unwrap(Effect.gen(function*() {
  const store = yield* DiscordState
  const api = [...applicationRoutes(store), ...channelRoutes(store), ...interactionRoutes(store)].map(([method, template, major, handler]) => {
    const name = `${method} ${template}`
    return sandboxRoute(method, `${API}${routerPath(template)}`, discordHandler(store, name, major, handler), { name })
  })
  return Layer.mergeAll(InboxRoutes(store), PlayerRoute, ...api)
}))

/** The bots as `GET /sandbox` lists them: their application's public key and interactions URL. */
export const botsListing = (origin: string) =>
  SEED.bots.map((b) => ({ id: b.id, name: b.name, public_key: publicKeyHex(b.id), interactions_url: interactionsUrl(origin, b.id) }))

/** The sandbox's control routes, for `GET /sandbox` (issue #31). */
export const CONTROL_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string; readonly purpose: string; readonly example?: unknown }> = [
  { method: "GET", path: "/sandbox", purpose: "this listing: users, bots (keys, interactions URLs), servers, sources, control routes" },
  {
    method: "POST",
    path: "/sandbox/faults",
    purpose: "inject faults: kind 400|401|403|404|429|500|hang|slow on a route by name (and path prefix), or dm_closed for a user_id",
    example: { route: "POST /channels/{id}/messages", kind: "403", count: 1, path: `${API}/channels/${SEED.ids.textChannels.s1}` }
  },
  { method: "DELETE", path: "/sandbox/faults", purpose: "clear every pending fault (and closed DMs)" },
  { method: "GET", path: "/sandbox/stats", purpose: "calls per route name, 429s and invalid requests" },
  { method: "DELETE", path: "/sandbox/stats", purpose: "reset the stats" },
  { method: "GET", path: "/sandbox/discord/messages", purpose: "webhook and bot messages (filter webhook_id, channel_id), latest body and earlier edits" },
  { method: "DELETE", path: "/sandbox/discord/messages", purpose: "empty the channel message inbox" },
  { method: "GET", path: "/sandbox/discord/dms", purpose: "direct messages the bots sent (filter user_id)" },
  {
    method: "POST",
    path: "/sandbox/discord/interactions",
    purpose: "play a member: sign and send an interaction to the bot, check its answer as the platform would",
    example: { bot_id: SEED.ids.bots.bot1, user_id: SEED.ids.users.bob, guild_id: SEED.ids.servers.s1, channel_id: SEED.ids.textChannels.s1, action: "command", name: "submit" }
  },
  { method: "POST", path: "/sandbox/sources/{module}/{identifier}/events", purpose: "publish an event on a source twin" },
  { method: "GET", path: "/sandbox/taskboard/1/organizations/{teamId}/boards", purpose: "the task-board twin's boards of a team (Trello-like)" }
]
