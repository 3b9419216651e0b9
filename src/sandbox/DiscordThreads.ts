/**
 * The sandbox's threads and forum posts (delivery.md §10), as Discord has them: a seeded thread of a
 * server's text channel, and the posts webhooks open in its forum (Execute Webhook with
 * `thread_name`: a public thread of the forum whose id is its first message's, owned by the webhook).
 * - `webhookTarget`: where an executed message goes — `thread_id` a live thread of the webhook's
 *   channel (else 404 Unknown Channel); a forum's webhook needs `thread_name` or `thread_id` (400
 *   220001), not both (220002); `thread_name` elsewhere is 400 220003; `applied_tags` only the
 *   forum's tag ids. A message into a thread is in the thread's history, not its channel's.
 * - routes: `GET /guilds/{id}/threads/active` (ThreadsResponse), deleting a thread or post (what a
 *   test needs to see a feed's thread go), and publishing an announcement channel's message, with
 *   Discord's refusals and its limit of 10 publications per channel per hour.
 * - a forum's tags as a moderator edits them in the client (`PUT /sandbox/discord/forums/{id}/tags`,
 *   a sandbox control): `GET /channels/{id}`, Execute Webhook and `GET /sandbox` follow.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { discordError, Errors } from "./DiscordHttp.ts"
import { botGuild, botOnly, fail, json } from "./DiscordRoutes.ts"
import type { Handler, Method, Options } from "./DiscordRoutes.ts"
import * as Shapes from "./DiscordShapes.ts"
import { lookupChannel } from "./seed/ChannelLookup.ts"
import type { DiscordStore } from "./DiscordState.ts"
import { DiscordState } from "./DiscordState.ts"
import { sandboxRoute } from "./SandboxRoute.ts"
import type { SeedForum, SeedWebhook } from "./Seed.ts"
import { findChannel, findForum, findGuild, findThread, PermissionBits, PUBLIC_THREAD, THREADS } from "./Seed.ts"

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

/** A thread that answers: seeded or opened by a webhook, not deleted. */
export interface LiveThread {
  readonly id: string
  readonly name: string
  readonly parentId: string
  readonly guildId: string
  readonly ownerId: string
  readonly appliedTags: ReadonlyArray<string>
  /** When it was opened (ms), null for the seeded ones. */
  readonly at: number | null
}

export const liveThread = (store: DiscordStore, id: string): LiveThread | undefined => {
  if (store.deletedChannels.has(id)) return undefined
  const seeded = findThread(id)
  if (seeded) {
    const owner = findGuild(seeded.guildId)?.ownerId ?? seeded.guildId
    return { id, name: seeded.name, parentId: seeded.parent_id, guildId: seeded.guildId, ownerId: owner, appliedTags: [], at: null }
  }
  return store.posts.get(id)
}

/** A forum's tags now: as the control route last set them, else the seed's. */
export const forumTagsOf = (store: DiscordStore, forum: SeedForum): ReadonlyArray<{ readonly id: string; readonly name: string }> =>
  store.forumTags.get(forum.id) ?? forum.tags

/** `GET /channels/{id}`: a live thread, a forum with its tags now, or a channel of the seed; with its server. */
export const channelAnswer = (store: DiscordStore, id: string): { readonly guildId: string; readonly body: unknown } | undefined => {
  const thread = liveThread(store, id)
  if (thread) return { guildId: thread.guildId, body: threadResponse(store, thread) }
  const found = store.deletedChannels.has(id) ? undefined : lookupChannel(id)
  const forum = findForum(id)
  if (found === undefined || forum === undefined) return found
  const available = forumTagsOf(store, forum).map((t) => ({ id: t.id, name: t.name, moderated: false, emoji_id: null, emoji_name: null }))
  return { guildId: found.guildId, body: { ...found.body, available_tags: available } }
}

const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00")

/** Discord's ThreadResponse of a live thread. */
export const threadResponse = (store: DiscordStore, t: LiveThread) => {
  const inside = store.messages.filter((m) => m.threadId === t.id)
  return {
    id: t.id,
    type: PUBLIC_THREAD,
    flags: 0,
    guild_id: t.guildId,
    name: t.name,
    parent_id: t.parentId,
    owner_id: t.ownerId,
    last_message_id: inside.at(-1)?.id ?? null,
    rate_limit_per_user: 0,
    thread_metadata: {
      archived: false,
      auto_archive_duration: 10080,
      locked: false,
      archive_timestamp: t.at === null ? "2026-01-01T00:00:00.000000+00:00" : iso(t.at),
      ...(t.at === null ? {} : { create_timestamp: iso(t.at) })
    },
    message_count: inside.length,
    member_count: 0,
    total_message_sent: inside.length,
    ...(findForum(t.parentId) ? { applied_tags: [...t.appliedTags] } : {})
  }
}

/**
 * Where Execute Webhook's message `id` goes (see the module's comment): `into` the thread (undefined:
 * the webhook's channel), or Discord's refusal. A post opened is recorded.
 */
export const webhookTarget = (
  store: DiscordStore,
  webhook: SeedWebhook,
  threadId: string | undefined,
  body: Readonly<Record<string, unknown>>,
  message: { readonly id: string; readonly at: number }
): { readonly error: HttpServerResponse.HttpServerResponse } | { readonly into: string | undefined } => {
  if (threadId !== undefined) {
    const thread = liveThread(store, threadId)
    if (!thread || thread.parentId !== webhook.channelId) return { error: Errors.unknownChannel() }
  }
  const forum = findForum(webhook.channelId)
  const name = typeof body["thread_name"] === "string" && body["thread_name"] !== "" ? body["thread_name"] : undefined
  if (name !== undefined && threadId !== undefined) {
    return { error: discordError(400, "Webhooks posted to forum channels cannot have both a thread_name and thread_id", 220002) }
  }
  if (!forum) return name === undefined ? { into: threadId } : { error: discordError(400, "Webhooks can only create threads in forum channels", 220003) }
  if (threadId !== undefined) return { into: threadId }
  if (name === undefined) return { error: discordError(400, "Webhooks posted to forum channels must have a thread_name or thread_id", 220001) }
  const tags = Array.isArray(body["applied_tags"]) ? body["applied_tags"] as ReadonlyArray<unknown> : []
  const known = forumTagsOf(store, forum)
  if (tags.some((t) => !known.some((f) => f.id === t))) {
    return { error: discordError(400, "Invalid Form Body", 50035, { errors: { applied_tags: { _errors: [{ code: "TAG_INVALID", message: "Unknown tag" }] } } }) }
  }
  store.posts.set(message.id, {
    id: message.id,
    name,
    parentId: forum.id,
    guildId: forum.guildId,
    ownerId: webhook.id,
    appliedTags: tags as ReadonlyArray<string>,
    at: message.at
  })
  return { into: message.id }
}

const MAX_TAGS = 20
const MAX_TAG_NAME = 20

/**
 * `PUT /sandbox/discord/forums/{id}/tags` `{ "tags": [{ "id"?, "name" }] }`: the forum's tags
 * replaced, as a moderator does in the client — a tag given with the id of one it has is renamed
 * (keeps its id), one without an id is new (a fresh id), one left out is deleted. Discord's limits:
 * at most 20 tags, names of 1–20 characters, no name twice.
 */
export const ForumTagsControl = sandboxRoute("PUT", "/sandbox/discord/forums/:id/tags", Effect.gen(function*() {
  const store = yield* DiscordState
  const forum = findForum((yield* HttpRouter.params)["id"] ?? "")
  const problem = (status: number, message: string) => HttpServerResponse.jsonUnsafe({ errors: [{ code: status === 404 ? "Not Found" : "Bad Request", message }] }, { status })
  if (forum === undefined) return problem(404, "no such forum; GET /sandbox lists them")
  const text = yield* (yield* HttpServerRequest.HttpServerRequest).text.pipe(Effect.orElseSucceed(() => ""))
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return problem(400, "the body must be JSON: { \"tags\": [{ \"id\"?, \"name\" }] }")
  }
  const list = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["tags"] : undefined
  const current = forumTagsOf(store, forum)
  if (!Array.isArray(list) || list.length > MAX_TAGS) return problem(400, `tags: an array of at most ${MAX_TAGS} tags`)
  const tags: Array<{ id: string; name: string }> = []
  for (const raw of list as ReadonlyArray<unknown>) {
    const t = typeof raw === "object" && raw !== null ? raw as Record<string, unknown> : {}
    const name = typeof t["name"] === "string" ? t["name"].trim() : ""
    if (name === "" || [...name].length > MAX_TAG_NAME) return problem(400, `tags[${tags.length}].name: 1 to ${MAX_TAG_NAME} characters`)
    if (tags.some((x) => x.name.toLowerCase() === name.toLowerCase())) return problem(400, `tags[${tags.length}].name: "${name}" is there twice`)
    const id = typeof t["id"] === "string" && current.some((c) => c.id === t["id"]) ? t["id"] : store.nextId("35")
    tags.push({ id, name })
  }
  store.forumTags.set(forum.id, tags)
  return HttpServerResponse.jsonUnsafe({ id: forum.id, tags })
}))

export const threadRoutes = (store: DiscordStore): ReadonlyArray<readonly [Method, string, string | undefined, Handler, Options?]> => [
  [
    "GET",
    "/guilds/{id}/threads/active",
    "id",
    // Newest first, as Discord orders them; every live thread of the server (no archived ones in the sandbox).
    botOnly((ctx, bot) => {
      const guild = botGuild(bot, ctx.params["id"])
      if (!guild) return fail(Errors.unknownGuild())
      const live = [...THREADS.map((t) => t.id), ...store.posts.keys()]
        .map((id) => liveThread(store, id))
        .filter((t): t is LiveThread => t !== undefined && t.guildId === guild.id)
        .toSorted((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1))
      return json({ threads: live.map((t) => threadResponse(store, t)), members: [], has_more: false })
    })
  ],
  [
    "DELETE",
    "/channels/{id}",
    "id",
    // Only a thread or a forum post may be deleted here (the seeded channels stay).
    botOnly((ctx, bot) => {
      const id = ctx.params["id"] ?? ""
      const thread = liveThread(store, id)
      if (!thread || !botGuild(bot, thread.guildId)) return fail(Errors.unknownChannel())
      store.deletedChannels.add(id)
      return json(threadResponse(store, thread))
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
