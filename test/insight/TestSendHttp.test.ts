/**
 * Test message, refresh cool-downs, the delivery log's paging rules and isolation over HTTP
 * (delivery.md §8; issue #15 item 2, item 3 in part): the test message posts the newest item once,
 * rendered as usual whatever the filters, and is audited; a second one within 10 s, or a second
 * refresh of a source within 60 s, is 429 with Retry-After and retry_after; neither changes the feed;
 * another server's or bot's feed is 404; bad paging is a 400 naming the parameter.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOB_ID, BOT1_ID, BOT2_ID, channelId, CHANNEL_INDEX, S1_ID, S4_ID } from "../../src/sandbox/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { appLayer, asPreviewMessage, baselined, call, createFeed, inbox, modulePath, publish, sandbox } from "./InsightFixtures.ts"

const path = (id: string, route: string) => `${modulePath("rss")}/feeds/${id}/${route}`

/** A 429 as the contract writes it: Retry-After (whole seconds, 1..max) equal to retry_after. */
const assertBusy = (r: { status: number; headers: Headers; body: any }, max: number) => {
  assert.strictEqual(r.status, 429, JSON.stringify(r.body))
  const header = Number(r.headers.get("retry-after"))
  assert.isTrue(Number.isInteger(header) && header >= 1 && header <= max, `Retry-After ${r.headers.get("retry-after")}`)
  assert.strictEqual(r.body.errors[0].code, "Too Many Requests")
  assert.strictEqual(r.body.errors[0].additionalProperties.retry_after, header)
}

for (const db of dbKinds) {
  layer(appLayer(db), { excludeTestServices: true, timeout: 90_000 })(`test message and refresh over HTTP (${db})`, (it) => {
    it.effect("test message: the newest item once, filters ignored, audited; 429 within 10 s; the feed unchanged", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        yield* publish("rss", "insight-send", { type: "post", title: "Older item", published_at: new Date(Date.now() - 60_000).toISOString() })
        const feed = yield* createFeed("rss", {
          feed_identifier: `${app.url}/sandbox/rss/insight-send.xml`,
          webhook_channel: channelId(1, CHANNEL_INDEX.text),
          webhook_options: { filter_words: ["nothing matches this"], "webhook-name": "Tester" }
        })
        yield* baselined("rss", feed.id)
        const newest = yield* publish("rss", "insight-send", { type: "post", title: "Newest item", url: "https://example.com/insight/newest" })
        const before = yield* call("GET", `${modulePath("rss")}/feeds`)
        const preview = (yield* call("GET", path(feed.id, "preview"))).body.items as Array<any>
        assert.strictEqual(preview[0].id, newest.id, "newest first")
        assert.strictEqual(preview[0].verdict, "skip", "the filter stands in the way of delivery, not of the test")

        const sent = yield* call("POST", path(feed.id, "test"))
        assert.strictEqual(sent.status, 200, JSON.stringify(sent.body))
        assert.strictEqual(sent.body.success, true)
        assert.match(sent.body.message_id, /^\d+$/)
        const again = yield* call("POST", path(feed.id, "test"))
        assertBusy(again, 10)
        assert.include(again.body.errors[0].message, "10 seconds")

        const messages = (yield* inbox).filter((m) => String(m.body["content"]).includes("https://example.com/insight/newest"))
        assert.strictEqual(messages.length, 1, JSON.stringify(messages))
        assert.strictEqual(messages[0]!.id, sent.body.message_id)
        assert.strictEqual(JSON.stringify(asPreviewMessage(messages[0]!.body)), JSON.stringify(preview[0].message), "rendered as usual")
        assert.deepStrictEqual(asPreviewMessage(messages[0]!.body), {
          content: "New item found in Sandbox feed insight-send!\nhttps://example.com/insight/newest",
          username: "Tester",
          avatar_url: null,
          allowed_mentions: { parse: [] }
        })

        const logs = yield* call("GET", `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/logs?module=rss`)
        const entry = (logs.body.logs as Array<any>)[0]
        assert.deepInclude(entry, { event_type: "PUSH", item_identifier: Number(feed.id), user_id: ALICE_ID, module_name: "rss" })
        assert.include(entry.event_string, "test message")
        assert.strictEqual((logs.body.logs as Array<any>).filter((e) => e.event_string.includes("test message")).length, 1)

        assert.deepStrictEqual((yield* call("GET", `${modulePath("rss")}/feeds`)).body, before.body, "the feed is unchanged")
        const status = (yield* call("GET", path(feed.id, "status"))).body
        assert.deepInclude(status, { state: "active", delivered: 0 }, "a test message is not a delivery")
        assert.deepStrictEqual((yield* call("GET", path(feed.id, "deliveries"))).body, { deliveries: [], page: 1, page_size: 10, page_max: 1 })
      }))

    it.effect("refresh: polls now; 429 within 60 s for any feed of the same source; other sources are free; a refused test message", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        yield* publish("rss", "insight-refresh", { type: "post", title: "First" })
        const url = `${app.url}/sandbox/rss/insight-refresh.xml`
        const a = yield* createFeed("rss", { feed_identifier: url, webhook_channel: channelId(1, CHANNEL_INDEX.text) })
        const b = yield* createFeed("rss", { feed_identifier: url, webhook_channel: channelId(1, CHANNEL_INDEX.text2) })
        yield* baselined("rss", a.id)
        const polledBefore = (yield* call("GET", path(a.id, "status"))).body.last_poll_at
        const first = yield* call("POST", path(a.id, "refresh"))
        assert.deepStrictEqual([first.status, first.body], [200, { success: true }])
        assertBusy(yield* call("POST", path(a.id, "refresh")), 60)
        assertBusy(yield* call("POST", path(b.id, "refresh")), 60)
        // The poll ran: the source's last poll moved, though its slot is a month away.
        let polled = polledBefore
        for (let i = 0; i < 80 && polled === polledBefore; i++) {
          yield* Effect.sleep("250 millis")
          polled = (yield* call("GET", path(a.id, "status"))).body.last_poll_at
        }
        assert.notStrictEqual(polled, polledBefore, "refreshed")
        // The webhook refuses the test message: 400 saying why, and the feed stays as it was (not disabled).
        const fault = yield* sandbox("POST", "/sandbox/faults", { route: "POST /webhooks/{id}/{token}", kind: "401", count: 1 })
        assert.isTrue(fault.status < 300, JSON.stringify(fault.body))
        const refused = yield* call("POST", path(b.id, "test"))
        assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
        assert.include(refused.body.errors[0].message, "refused the webhook's token")
        assert.deepInclude((yield* call("GET", path(b.id, "status"))).body, { state: "active", reason: null })

        yield* publish("rss", "insight-other", { type: "post", title: "Elsewhere" })
        const other = yield* createFeed("rss", { feed_identifier: `${app.url}/sandbox/rss/insight-other.xml`, webhook_channel: channelId(1, CHANNEL_INDEX.text) })
        assert.strictEqual((yield* call("POST", path(other.id, "refresh"))).status, 200)
      }))

    it.effect("the log's paging rules; another server's or bot's feed is 404; bad ids 400; a failing source 503", () =>
      Effect.gen(function*() {
        const feeds = (yield* call("GET", `${modulePath("rss")}/feeds`)).body.feeds as Array<{ id: string }>
        const id = feeds[0]!.id
        for (const [query, param] of [["page=0", "page"], ["page_size=0", "page_size"], ["page_size=101", "page_size"], ["page=abc", "page"]]) {
          const r = yield* call("GET", `${path(id, "deliveries")}?${query}`)
          assert.strictEqual(r.status, 400, `${query}: ${JSON.stringify(r.body)}`)
          assert.strictEqual(r.body.errors[0].additionalProperties.path, param)
        }
        const above = yield* call("GET", `${path(id, "deliveries")}?page=7&page_size=100`)
        assert.deepStrictEqual(above.body, { deliveries: [], page: 7, page_size: 100, page_max: 1 })

        const elsewhere = [
          { user: BOB_ID, prefix: modulePath("rss", BOT2_ID, S4_ID) },
          { user: ALICE_ID, prefix: modulePath("rss", BOT1_ID, S1_ID) }
        ]
        for (const { prefix, user } of elsewhere) {
          for (const [method, route] of [["GET", "preview"], ["POST", "test"], ["POST", "refresh"], ["GET", "deliveries"]] as const) {
            const r = yield* call(method, `${prefix}/feeds/${id}/${route}`, { user })
            assert.strictEqual(r.status, 404, `${prefix} ${route}: ${JSON.stringify(r.body)}`)
          }
        }
        assert.strictEqual((yield* call("GET", path("999999999", "preview"))).status, 404)

        // The source failing now: the preview answers 503 with Retry-After, never a 500.
        const send = feeds.find((f) => (f as { feed_identifier?: string }).feed_identifier?.endsWith("/insight-send.xml"))!
        const fault = yield* sandbox("POST", "/sandbox/faults", { route: "GET /sandbox/rss/{feed}", kind: "500", count: 10, path: "/sandbox/rss/insight-send.xml" })
        assert.isTrue(fault.status < 300, JSON.stringify(fault.body))
        const failing = yield* call("GET", path(send.id, "preview"))
        assert.strictEqual(failing.status, 503, JSON.stringify(failing.body))
        assert.match(failing.headers.get("retry-after") ?? "", /^\d+$/)
        assert.include(failing.body.errors[0].message, "The feed's source could not be read now")
        assert.strictEqual((yield* call("GET", path("abc", "deliveries"))).status, 400)
      }))

    it.effect("two items of the same second: the preview's newest and the test message's item are the one published last", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const second = new Date(Math.floor(Date.now() / 1000) * 1000 - 5_000).toISOString()
        yield* publish("rss", "insight-tie", { type: "post", title: "Tie, published first", url: "https://example.com/tie/first", published_at: second })
        const last = yield* publish("rss", "insight-tie", { type: "post", title: "Tie, published last", url: "https://example.com/tie/last", published_at: second })
        const feed = yield* createFeed("rss", { feed_identifier: `${app.url}/sandbox/rss/insight-tie.xml`, webhook_channel: channelId(1, CHANNEL_INDEX.text) })
        const preview = (yield* call("GET", path(feed.id, "preview"))).body.items as Array<any>
        assert.deepStrictEqual(preview.map((i) => i.title), ["Tie, published last", "Tie, published first"], "newest first")
        assert.strictEqual(preview[0].id, last.id)
        const sent = yield* call("POST", path(feed.id, "test"))
        assert.strictEqual(sent.status, 200, JSON.stringify(sent.body))
        const message = (yield* inbox).find((m) => m.id === sent.body.message_id)
        assert.include(String(message?.body["content"]), "https://example.com/tie/last", "the test message sends the newest")
      }))
  })
}
