/**
 * delivery.md §10 end to end: the gateway with its worker on a real database, a feed created over
 * HTTP with the new options, an item published to the sandbox source, and exactly the body (and
 * thread) the webhook got; a hostile title pings no one but the feed's roles; a deleted thread
 * disables the feed with its reason, as a deleted webhook does.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID, BOT2_ID, BOT2_TOKEN, channelId, roleId, S1_ID, THREADS } from "../../src/sandbox/Seed.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { eventually } from "../utils/Eventually.ts"

const modulePath = (m: string) => `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/${m}`

interface Message {
  readonly id: string
  readonly channel_id: string
  readonly thread_id?: string
  readonly body: Record<string, unknown>
}

const sandbox = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    })
  })

const publish = (name: string, event: Record<string, unknown>) =>
  Effect.gen(function*() {
    const r = yield* sandbox("POST", `/sandbox/sources/rss/${encodeURIComponent(name)}/events`, event)
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { readonly id: string; readonly url: string }
  })

const inbox = (channel: string) =>
  Effect.map(sandbox("GET", `/sandbox/discord/messages?channel_id=${channel}`), (r) => (r.body as { messages: Array<Message> }).messages)

const createFeed = (body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const res = yield* raw({
      method: "POST",
      token: yield* tokenOf(ALICE_ID),
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    }, `${modulePath("rss")}/feeds`)
    const feed = yield* json(res)
    assert.strictEqual(res.status, 200, JSON.stringify(feed))
    return feed as { readonly id: string }
  })

const status = (id: string) =>
  Effect.flatMap(Effect.flatMap(tokenOf(ALICE_ID), (token) => raw({ token }, `${modulePath("rss")}/feeds/${id}/status`)), json)

const baselined = (id: string) =>
  eventually(status(id), (s) => s.last_poll_at !== null, `feed ${id}: the first poll`).pipe(Effect.andThen(Effect.sleep("1 second")))

const THREAD = THREADS[0]!

for (const db of dbKinds) {
  layer(
    TestApp.layer({ capabilities: { db }, config: { delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1 } } }).pipe(
      Layer.provideMerge(CapturedLogs.layer)
    ),
    { excludeTestServices: true, timeout: 90_000 }
  )(`delivery end to end, §10 options (${db})`, (it) => {
    it.effect("mentions, embed and thread: exactly this body, in the thread; a hostile title pings only the feed's role; the thread deleted → disabled", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const name = `e2e-posting-${db}`
        const channel = channelId(1, 2)
        const before = (yield* inbox(channel)).length
        yield* publish(name, { type: "post", title: "Served before the feed existed" })
        const feed = yield* createFeed({
          feed_identifier: `${app.url}/sandbox/rss/${name}.xml`,
          webhook_channel: channel,
          webhook_options: {
            mention_roles: [roleId(1, 2)],
            embed: true,
            embed_color: "#ff8800",
            thread_id: THREAD.id,
            custom_header: "%title% @everyone <@100000000000000001> <@&320000000000000101>"
          }
        })
        yield* baselined(feed.id)

        const hostile = "Launch @everyone <@&320000000000000101> <@100000000000000002>"
        yield* publish(name, { type: "post", title: hostile, url: "https://example.com/e2e/launch", author: "Ada", text: "Body" })
        const messages = yield* eventually(inbox(channel), (ms) => ms.length > before, "the message")
        const m = messages.at(-1)!
        assert.strictEqual(m.thread_id, THREAD.id)
        const embeds = m.body["embeds"] as Array<Record<string, unknown>>
        assert.deepStrictEqual(m.body, {
          content: `<@&${roleId(1, 2)}>\n${hostile} @everyone <@100000000000000001> <@&320000000000000101>`,
          username: `Sandbox feed ${name}`,
          allowed_mentions: { parse: [], roles: [roleId(1, 2)] },
          embeds: [{
            title: hostile,
            url: "https://example.com/e2e/launch",
            color: 0xff8800,
            timestamp: embeds[0]!["timestamp"],
            author: { name: "Ada" },
            footer: { text: `Sandbox feed ${name}` },
            ...(embeds[0]!["description"] === undefined ? {} : { description: embeds[0]!["description"] })
          }]
        })

        // The thread deleted: the next item is refused (Unknown Channel) and the feed disabled with the reason.
        const deleted = yield* sandbox("DELETE", `/sandbox/discord/api/v10/channels/${THREAD.id}`, undefined, { authorization: `Bot ${BOT2_TOKEN}` })
        assert.strictEqual(deleted.status, 200, JSON.stringify(deleted.body))
        yield* publish(name, { type: "post", title: "After the thread went", url: "https://example.com/e2e/after" })
        const s = yield* eventually(status(feed.id), (s) => s.state === "disabled", "the feed disabled")
        assert.include(s.reason, "thread")
      }))
  })
}
