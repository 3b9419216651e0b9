/**
 * The sandbox's threads and forum posts as Discord has them (delivery.md §10; DiscordThreads.ts): a
 * message sent into a thread is in the thread's history and not its channel's; a post a forum's
 * webhook opens is a thread of the forum (its id its first message's, owned by the webhook), listed
 * by GET /guilds/{id}/threads/active in Discord's ThreadsResponse, answered by GET /channels/{id},
 * and a message may follow into it; a forum's tags edited through the sandbox's control; Discord's
 * refusals of thread_name and thread_id (220001–220003, over 100 characters).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT1_TOKEN, BOT2_TOKEN, channelId, FORUM_WEBHOOKS, FORUMS, S1_ID, S2_ID, THREADS, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN } from "../../src/sandbox/Seed.ts"
import { assertShape } from "./DiscordShapesCheck.ts"
import type { Answer } from "./SandboxCallFixtures.ts"
import { call, field } from "./SandboxCallFixtures.ts"

const api = (path: string, token = BOT2_TOKEN) =>
  call(`/sandbox/discord/api/v10${path}`, { headers: { authorization: `Bot ${token}` } })
/** Executes a webhook, waiting out its rate limit (5 messages per webhook per 2 s) as a client does. */
const execute = (id: string, token: string, body: unknown, query = "?wait=true"): Effect.Effect<Answer, never, SandboxServer> =>
  Effect.flatMap(
    call(`/sandbox/discord/api/v10/webhooks/${id}/${token}${query}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    }),
    (a) => a.status === 429 ? Effect.andThen(Effect.sleep(Number(field(a.body, "retry_after")) * 1000), execute(id, token, body, query)) : Effect.succeed(a)
  )
const ids = (answer: { readonly body: unknown }) => (answer.body as Array<{ id: string }>).map((m) => m.id)

const THREAD = THREADS[0]!
const FORUM = FORUMS[0]!
const HOOK = FORUM_WEBHOOKS[0]!

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox forum posts and thread histories", (it) => {
  it.effect("a message into a thread is in the thread's history, not its channel's; its channel_id is the thread's", () =>
    Effect.gen(function*() {
      const inChannel = yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "in the channel" })
      const inThread = yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "in the thread" }, `?wait=true&thread_id=${THREAD.id}`)
      assert.strictEqual(field(inThread.body, "channel_id"), THREAD.id)
      assert.strictEqual(field(inChannel.body, "channel_id"), channelId(1, 2))
      const thread = yield* api(`/channels/${THREAD.id}/messages`)
      assert.strictEqual(thread.status, 200, JSON.stringify(thread.body))
      assert.deepStrictEqual(ids(thread), [field(inThread.body, "id")])
      for (const m of thread.body as Array<unknown>) assertShape("MessageResponse", m)
      const channel = ids(yield* api(`/channels/${channelId(1, 2)}/messages`))
      assert.include(channel, field(inChannel.body, "id"))
      assert.notInclude(channel, field(inThread.body, "id"))
      // A bot that is not in the thread's server may not read it (S4 has bot 2 only).
      const s4 = yield* api(`/channels/${THREADS[3]!.id}/messages`, BOT1_TOKEN)
      assert.deepStrictEqual([s4.status, field(s4.body, "code")], [403, 50001])
    }))

  it.effect("a forum's webhook opens a post: a thread of the forum listed as active, its first message found after id − 1; a follow-up goes into it", () =>
    Effect.gen(function*() {
      const body = { content: "the post's message", thread_name: "Release 1.0", applied_tags: [FORUM.tags[0]!.id] }
      const opened = yield* execute(HOOK.id, HOOK.token, body)
      assert.strictEqual(opened.status, 200, JSON.stringify(opened.body))
      const post = String(field(opened.body, "id"))
      assert.strictEqual(field(opened.body, "channel_id"), post, "the first message is in the post, whose id is its own")

      const active = yield* api(`/guilds/${S1_ID}/threads/active`)
      assert.strictEqual(active.status, 200, JSON.stringify(active.body))
      assertShape("ThreadsResponse", active.body)
      const threads = field(active.body, "threads") as Array<Record<string, unknown>>
      assert.deepInclude(threads.find((t) => t["id"] === post)!, {
        type: 11,
        name: "Release 1.0",
        parent_id: FORUM.id,
        guild_id: S1_ID,
        owner_id: HOOK.id,
        applied_tags: [FORUM.tags[0]!.id],
        message_count: 1
      })
      assert.deepStrictEqual(threads.map((t) => t["id"]), [...threads.map((t) => String(t["id"]))].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1)), "newest first")
      assert.include(threads.map((t) => t["id"]), THREAD.id)
      assert.deepInclude((yield* api(`/channels/${post}`)).body as object, { id: post, type: 11, parent_id: FORUM.id })

      const next = yield* execute(HOOK.id, HOOK.token, { content: "a follow-up" }, `?wait=true&thread_id=${post}`)
      assert.strictEqual(next.status, 200, JSON.stringify(next.body))
      assert.deepStrictEqual(ids(yield* api(`/channels/${post}/messages`)), [field(next.body, "id"), post])
      const first = yield* api(`/channels/${post}/messages?limit=1&after=${BigInt(post) - 1n}`)
      assert.deepStrictEqual(ids(first), [post])
      assert.strictEqual(field((first.body as Array<unknown>)[0], "webhook_id"), HOOK.id)
      // A server the bot is not in: Unknown Guild.
      assert.strictEqual((yield* api(`/guilds/${S2_ID}/threads/active`)).status, 404)
    }))

  it.effect("a forum's tags edited as a moderator would (PUT /sandbox/discord/forums/{id}/tags): the channel, the listing and Execute Webhook follow", () =>
    Effect.gen(function*() {
      const forum = FORUMS[2]!
      const hook = FORUM_WEBHOOKS[2]!
      const [news, release] = forum.tags
      const put = (body: unknown, id = forum.id) =>
        call(`/sandbox/discord/forums/${id}/tags`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      const edited = yield* put({ tags: [{ id: news!.id, name: "Headlines" }, { name: "Events" }, { id: "1", name: "Unknown id: new" }] })
      assert.strictEqual(edited.status, 200, JSON.stringify(edited.body))
      const tags = field(edited.body, "tags") as Array<{ id: string; name: string }>
      assert.deepStrictEqual(tags.map((t) => t.name), ["Headlines", "Events", "Unknown id: new"])
      assert.strictEqual(tags[0]!.id, news!.id, "renamed, same id")
      assert.notInclude([news!.id, release!.id, "1"], tags[1]!.id)
      assert.notStrictEqual(tags[2]!.id, "1")
      const channel = (yield* api(`/channels/${forum.id}`)).body as { available_tags: Array<{ id: string; name: string }> }
      assert.deepStrictEqual(channel.available_tags.map((t) => [t.id, t.name]), tags.map((t) => [t.id, t.name]))
      const servers = field((yield* call("/sandbox")).body, "servers") as Array<{ id: string; forums: Array<{ id: string; tags: unknown }> }>
      assert.deepStrictEqual(servers.flatMap((g) => g.forums).find((f) => f.id === forum.id)!.tags, tags)
      // The deleted tag is refused now, the new one taken.
      const gone = yield* execute(hook.id, hook.token, { content: "x", thread_name: "Post", applied_tags: [release!.id] })
      assert.deepStrictEqual([gone.status, field(gone.body, "code")], [400, 50035])
      assert.strictEqual((yield* execute(hook.id, hook.token, { content: "x", thread_name: "Post", applied_tags: [tags[1]!.id] })).status, 200)
      // Refused: an unknown forum, a name twice, a name over 20 characters, not a list.
      assert.strictEqual((yield* put({ tags: [] }, channelId(1, 2))).status, 404)
      for (const body of [{ tags: [{ name: "A" }, { name: "a" }] }, { tags: [{ name: "x".repeat(21) }] }, { tags: "News" }]) {
        assert.strictEqual((yield* put(body)).status, 400, JSON.stringify(body))
      }
    }))

  it.effect("Discord's refusals: no name in a forum (220001), a name and a thread (220002), a name outside a forum (220003), over 100 characters", () =>
    Effect.gen(function*() {
      const code = (answer: { readonly status: number; readonly body: unknown }) => [answer.status, field(answer.body, "code")]
      assert.deepStrictEqual(code(yield* execute(HOOK.id, HOOK.token, { content: "x" })), [400, 220001])
      const opened = yield* execute(HOOK.id, HOOK.token, { content: "x", thread_name: "A post" })
      const post = String(field(opened.body, "id"))
      assert.deepStrictEqual(code(yield* execute(HOOK.id, HOOK.token, { content: "x", thread_name: "B" }, `?thread_id=${post}`)), [400, 220002])
      assert.deepStrictEqual(code(yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "x", thread_name: "Not here" })), [400, 220003])
      assert.deepStrictEqual(code(yield* execute(HOOK.id, HOOK.token, { content: "x", thread_name: "é".repeat(101) })), [400, 50035])
      assert.strictEqual((yield* execute(HOOK.id, HOOK.token, { content: "x", thread_name: "é".repeat(100) })).status, 200)
      // A post of the forum is not a thread of a text channel's webhook.
      assert.deepStrictEqual(code(yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "x" }, `?thread_id=${post}`)), [404, 10003])
    }))
})
