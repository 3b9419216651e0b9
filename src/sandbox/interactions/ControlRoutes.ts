/**
 * The sandbox's control routes as `GET /sandbox` lists them (issue #31): method, path and a one-line
 * purpose each, with an example body where one helps. Kept here, beside the newest of them.
 */
import { API } from "../DiscordHttp.ts"
import { SEED } from "../Seed.ts"

/** The sandbox's control routes, for `GET /sandbox` (issue #31). */
export const CONTROL_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string; readonly purpose: string; readonly example?: unknown }> = [
  { method: "GET", path: "/sandbox", purpose: "this listing: users, bots (keys, interactions URLs), servers, sources, control routes" },
  {
    method: "POST",
    path: "/sandbox/faults",
    purpose: "inject faults: kind 400|401|403|404|429|500|hang|slow|cut|cut-after on a route by name (as in /sandbox/stats; * for any) and path prefix, count times (1), or dm_closed for a user_id",
    example: { route: "POST /channels/{id}/messages", kind: "403", count: 1, path: `${API}/channels/${SEED.ids.textChannels.s1}` }
  },
  { method: "DELETE", path: "/sandbox/faults", purpose: "clear every pending fault (and closed DMs)" },
  {
    method: "POST",
    path: "/sandbox/discord/permissions",
    purpose: "take permission bits (decimal, as Discord writes them) from a member of a server, e.g. a bot's MANAGE_MESSAGES (8192)",
    example: { guild_id: SEED.ids.servers.s1, user_id: SEED.ids.bots.bot2, deny: "8192" }
  },
  { method: "DELETE", path: "/sandbox/discord/permissions", purpose: "give every member back the permissions of the seed" },
  { method: "GET", path: "/sandbox/stats", purpose: "calls per route name, 429s and invalid requests" },
  { method: "DELETE", path: "/sandbox/stats", purpose: "reset the stats" },
  { method: "GET", path: "/sandbox/discord/messages", purpose: "webhook and bot messages (filter webhook_id, channel_id), latest body and earlier edits" },
  { method: "DELETE", path: "/sandbox/discord/messages", purpose: "empty the channel message inbox" },
  { method: "GET", path: "/sandbox/discord/dms", purpose: "direct messages the bots sent (filter user_id)" },
  { method: "GET", path: "/sandbox/discord/attachments/{channel_id}/{attachment_id}/{filename}", purpose: "a file attached to a bot's message: its attachment's url, as Discord's CDN serves it" },
  {
    method: "PUT",
    path: "/sandbox/discord/forums/{id}/tags",
    purpose: "replace a forum's tags as a moderator would (an id kept renames that tag, none adds one, one left out is deleted)",
    example: { tags: [{ id: "350000000000000101", name: "Headlines" }, { name: "Events" }] }
  },
  {
    method: "POST",
    path: "/sandbox/discord/interactions",
    purpose: "play a member: sign and send an interaction to the bot, check its answer as the platform would",
    example: { bot_id: SEED.ids.bots.bot1, user_id: SEED.ids.users.bob, guild_id: SEED.ids.servers.s1, channel_id: SEED.ids.textChannels.s1, action: "command", name: "submit" }
  },
  { method: "POST", path: "/sandbox/sources/{module}/{identifier}/events", purpose: "publish an event on a source twin" },
  { method: "GET", path: "/sandbox/push", purpose: "the WebSub and EventSub subscriptions and deliveries" },
  { method: "POST", path: "/sandbox/push/websub/publish", purpose: "notify a video channel's WebSub subscribers ({channel_id, forge?, unsigned?})" },
  { method: "POST", path: "/sandbox/push/replay", purpose: "resend a push delivery exactly as it went ({index?})" },
  { method: "POST", path: "/sandbox/push/eventsub/send", purpose: "send an EventSub notification ({broadcaster_user_id, type, forge?, age_seconds?})" },
  { method: "POST", path: "/sandbox/push/eventsub/revoke", purpose: "revoke EventSub subscriptions ({broadcaster_user_id, type?, reason?})" },
  { method: "GET", path: "/sandbox/taskboard/1/organizations/{teamId}/boards", purpose: "the task-board twin's boards of a team (Trello-like)" },
  {
    method: "POST",
    path: "/sandbox/taskboard/1/cards",
    purpose: "the task-board twin (Trello REST under /sandbox/taskboard: boards' lists and labels, cards, attachments; faults by e.g. \"POST /1/cards\")"
  },
  { method: "GET", path: "/sandbox/taskboard/cards", purpose: "the cards created on the task-board twin (filter board_id), with list, labels and attachments" },
  { method: "DELETE", path: "/sandbox/taskboard/boards/{id}", purpose: "delete a task-board twin board (its routes then answer 404)" }
]
