/**
 * The sandbox's threads, forums and crosspost (delivery.md §10): listed per server in GET /sandbox
 * and never in the channel listings; GET /channels/{id} answers them; a webhook message records its
 * thread_id, thread_name and applied_tags; a forum's webhook opens a post and wants a name; the bot
 * publishes an announcement channel's message once (flags bit 1, CROSSPOSTED), at most 10 a channel
 * an hour (then 429), and not once its MANAGE_MESSAGES is taken (`POST /sandbox/discord/permissions`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import {
  BOT1_TOKEN,
  BOT2_ID,
  BOT2_TOKEN,
  channelId,
  FORUM_WEBHOOKS,
  FORUMS,
  PermissionBits,
  S1_ID,
  S3_ID,
  S4_ID,
  SEED,
  THREADS,
  WEBHOOK_S1_ID,
  WEBHOOK_S1_TOKEN
} from "../../src/sandbox/Seed.ts"
import { call, field } from "./SandboxCallFixtures.ts"

const bot2 = { authorization: `Bot ${BOT2_TOKEN}` }
const api = (path: string, init: RequestInit = {}) =>
  call(`/sandbox/discord/api/v10${path}`, { ...init, headers: { "content-type": "application/json", ...bot2, ...init.headers } })
const execute = (id: string, token: string, body: unknown, query = "?wait=true") =>
  call(`/sandbox/discord/api/v10/webhooks/${id}/${token}${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
const inbox = (query: string) => Effect.map(call(`/sandbox/discord/messages${query}`), (a) => field(a.body, "messages") as Array<Record<string, unknown>>)

const THREAD = THREADS[0]!
const FORUM = FORUMS[0]!
const FORUM_HOOK = FORUM_WEBHOOKS[0]!

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox threads, forums and crosspost", (it) => {
  it.effect("GET /sandbox lists each server's threads and forums; the channel listing has neither", () =>
    Effect.gen(function*() {
      const index = yield* call("/sandbox")
      const servers = field(index.body, "servers") as Array<Record<string, unknown>>
      const s1 = servers.find((s) => s["id"] === S1_ID)!
      assert.deepStrictEqual(s1["threads"], [{ id: THREAD.id, name: "feed-updates", parent_id: channelId(1, 2) }])
      const forums = s1["forums"] as Array<Record<string, unknown>>
      assert.deepStrictEqual(forums.map((f) => [f["id"], f["tags"]]), [[FORUM.id, FORUM.tags]])
      assert.match(String(forums[0]!["webhook_url"]), new RegExp(`/sandbox/discord/api/v10/webhooks/${FORUM_HOOK.id}/${FORUM_HOOK.token}$`))
      const channels = (yield* api(`/guilds/${S1_ID}/channels`)).body as Array<{ id: string }>
      assert.isFalse(channels.some((c) => c.id === THREAD.id || c.id === FORUM.id))
      assert.deepInclude((yield* api(`/channels/${THREAD.id}`)).body as object, { id: THREAD.id, type: 11, parent_id: channelId(1, 2), guild_id: S1_ID })
      assert.deepInclude((yield* api(`/channels/${FORUM.id}`)).body as object, { id: FORUM.id, type: 15 })
      assert.strictEqual((yield* api(`/channels/399999999999999999`)).status, 404)
    }))

  it.effect("a message into a thread records thread_id; an unknown or deleted thread is Unknown Channel", () =>
    Effect.gen(function*() {
      const r = yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "in the thread" }, `?wait=true&thread_id=${THREAD.id}`)
      assert.strictEqual(r.status, 200, JSON.stringify(r.body))
      const m = (yield* inbox(`?webhook_id=${WEBHOOK_S1_ID}`)).find((x) => x["id"] === field(r.body, "id"))!
      assert.strictEqual(m["thread_id"], THREAD.id)
      assert.strictEqual((yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "x" }, `?thread_id=${THREADS[1]!.id}`)).status, 404)
      // Deleted (DELETE /channels/{id}): gone from GET /channels/{id}, and a message into it is Unknown Channel.
      assert.strictEqual((yield* api(`/channels/${THREAD.id}`, { method: "DELETE" })).status, 200)
      assert.strictEqual((yield* api(`/channels/${THREAD.id}`)).status, 404)
      const gone = yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "x" }, `?wait=true&thread_id=${THREAD.id}`)
      assert.strictEqual(gone.status, 404)
      assert.strictEqual(field(gone.body, "code"), 10003)
    }))

  it.effect("a forum's webhook opens a post named by thread_name with its tags; without a name it is refused", () =>
    Effect.gen(function*() {
      const none = yield* execute(FORUM_HOOK.id, FORUM_HOOK.token, { content: "no name" })
      assert.strictEqual(none.status, 400)
      assert.strictEqual(field(none.body, "code"), 220001)
      const badTag = yield* execute(FORUM_HOOK.id, FORUM_HOOK.token, { content: "x", thread_name: "Post", applied_tags: ["1"] })
      assert.strictEqual(badTag.status, 400)
      const body = { content: "a post", thread_name: "Hello", applied_tags: [FORUM.tags[1]!.id] }
      const ok = yield* execute(FORUM_HOOK.id, FORUM_HOOK.token, body)
      assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
      const m = (yield* inbox(`?webhook_id=${FORUM_HOOK.id}`)).at(-1)!
      assert.strictEqual(m["thread_id"], field(ok.body, "id"))
      assert.deepStrictEqual(m["body"], body)
    }))

  it.effect("crosspost: flags bit 1 once; twice, or in a text channel, refused", () =>
    Effect.gen(function*() {
      const news = channelId(1, 4)
      const hook = yield* api(`/channels/${news}/webhooks`, { method: "POST", body: JSON.stringify({ name: "News hook" }) })
      assert.strictEqual(hook.status, 200, JSON.stringify(hook.body))
      const posted = yield* execute(String(field(hook.body, "id")), String(field(hook.body, "token")), { content: "publish me" })
      const id = String(field(posted.body, "id"))
      const first = yield* api(`/channels/${news}/messages/${id}/crosspost`, { method: "POST" })
      assert.strictEqual(first.status, 200, JSON.stringify(first.body))
      const m = (yield* inbox(`?channel_id=${news}`)).find((x) => x["id"] === id)!
      assert.strictEqual(m["flags"], 1)
      assert.strictEqual((yield* api(`/channels/${news}/messages/${id}/crosspost`, { method: "POST" })).status, 400)
      const text = yield* execute(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, { content: "not news" })
      const refused = yield* api(`/channels/${SEED.ids.textChannels.s1}/messages/${String(field(text.body, "id"))}/crosspost`, { method: "POST" })
      assert.strictEqual(refused.status, 400)
    }))

  /** A webhook of its own in `channel`, and `n` messages posted through it (a webhook posts 5 per 2 s). */
  const postInto = (channel: string, n: number) =>
    Effect.gen(function*() {
      const hook = yield* api(`/channels/${channel}/webhooks`, { method: "POST", body: JSON.stringify({ name: "News hook" }) })
      assert.strictEqual(hook.status, 200, JSON.stringify(hook.body))
      const ids: Array<string> = []
      while (ids.length < n) {
        const r = yield* execute(String(field(hook.body, "id")), String(field(hook.body, "token")), { content: `news ${ids.length}` })
        if (r.status === 429) yield* Effect.sleep(`${Number(field(r.body, "retry_after")) * 1000} millis`)
        else ids.push(String(field(r.body, "id")))
      }
      return ids
    })

  it.effect("crosspost: 10 a channel an hour, whoever publishes; the 11th 429 with retry_after (scope shared), not published; flags read back", () =>
    Effect.gen(function*() {
      const news = channelId(3, 4)
      const ids = yield* postInto(news, 11)
      for (const [i, id] of ids.slice(0, 10).entries()) {
        // The 10th by the other bot of the server: the limit is the channel's.
        const r = yield* api(`/channels/${news}/messages/${id}/crosspost`, { method: "POST", ...(i === 9 ? { headers: { authorization: `Bot ${BOT1_TOKEN}` } } : {}) })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.strictEqual(field(r.body, "flags"), 1, "the answer is the message, published")
      }
      const over = yield* api(`/channels/${news}/messages/${ids[10]}/crosspost`, { method: "POST" })
      assert.strictEqual(over.status, 429)
      assert.strictEqual(over.headers.get("x-ratelimit-scope"), "shared")
      const wait = Number(field(over.body, "retry_after"))
      assert.isAbove(wait, 3500)
      assert.isAtMost(wait, 3600)
      const read = (yield* api(`/channels/${news}/messages?limit=11`)).body as Array<{ id: string; flags: number }>
      assert.deepStrictEqual(read.map((m) => [m.id, m.flags]), [...ids].reverse().map((id, i) => [id, i === 0 ? 0 : 1]))
      // Another announcement channel has its own 10.
      const other = (yield* postInto(channelId(4, 4), 1))[0]!
      assert.strictEqual((yield* api(`/channels/${channelId(4, 4)}/messages/${other}/crosspost`, { method: "POST" })).status, 200)
    }))

  it.effect("a bot whose MANAGE_MESSAGES is taken: crosspost 403 50013, its server's permissions without the bit; given back, it publishes", () =>
    Effect.gen(function*() {
      const news = channelId(4, 4)
      const [id] = yield* postInto(news, 1)
      const deny = yield* call("/sandbox/discord/permissions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ guild_id: S4_ID, user_id: BOT2_ID, deny: PermissionBits.MANAGE_MESSAGES.toString() })
      })
      assert.strictEqual(deny.status, 200, JSON.stringify(deny.body))
      const refused = yield* api(`/channels/${news}/messages/${id}/crosspost`, { method: "POST" })
      assert.deepStrictEqual([refused.status, field(refused.body, "code")], [403, 50013])
      const guilds = (yield* api("/users/@me/guilds")).body as Array<{ id: string; permissions: string }>
      const s4 = BigInt(guilds.find((g) => g.id === S4_ID)!.permissions)
      assert.strictEqual(s4 & PermissionBits.MANAGE_MESSAGES, 0n)
      assert.notStrictEqual(s4 & PermissionBits.SEND_MESSAGES, 0n, "only the denied bit goes")
      const s3 = BigInt(guilds.find((g) => g.id === S3_ID)!.permissions)
      assert.notStrictEqual(s3 & PermissionBits.MANAGE_MESSAGES, 0n, "other servers keep it")
      assert.strictEqual((yield* call("/sandbox/discord/permissions", { method: "DELETE" })).status, 204)
      assert.strictEqual((yield* api(`/channels/${news}/messages/${id}/crosspost`, { method: "POST" })).status, 200)
      const bad = yield* call("/sandbox/discord/permissions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ guild_id: S4_ID, user_id: BOT2_ID, deny: "MANAGE_MESSAGES" })
      })
      assert.strictEqual(bad.status, 400)
    }))
})
