/**
 * Preview with reasons, refresh and the delivery log over HTTP, for every feed module (delivery.md
 * §8; issue #15 items 1–3): a feed whose options skip one item and post another; the preview
 * (before the worker polls) gives each item its verdict and every deciding rule; a refresh makes
 * the worker poll at once; what the webhook then gets (the sandbox inbox) is byte for byte the
 * preview's message, and only the items the preview said `post`; the next preview says what
 * happened; the delivery log lists the sent item with its message id and the skipped one with its
 * reason. Nothing about the feed changes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { channelId, CHANNEL_INDEX } from "../../src/sandbox/Seed.ts"
import { SEEN_BEFORE } from "../../src/services/feeds/FeedPreview.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import {
  appLayer,
  asPreviewMessage,
  baselined,
  call,
  createFeed,
  eventually,
  inbox,
  type InboxMessage,
  modulePath,
  publish
} from "./InsightFixtures.ts"

const TEXT = channelId(1, CHANNEL_INDEX.text)
const TEXT2 = channelId(1, CHANNEL_INDEX.text2)

interface Expected {
  readonly event: Record<string, unknown>
  readonly verdict: "post" | "skip"
  readonly reasons: ReadonlyArray<string>
}

interface Case {
  readonly module: string
  /** Where events are published (the sandbox's name of the source). */
  readonly source: string
  readonly feed: (url: string) => Record<string, unknown>
  readonly items: ReadonlyArray<Expected>
}

const CASES: ReadonlyArray<Case> = [
  {
    module: "rss",
    source: "insight-rss",
    feed: (url) => ({ feed_identifier: `${url}/sandbox/rss/insight-rss.xml`, webhook_channel: TEXT, webhook_options: { filter_words: ["launch"] } }),
    items: [
      { event: { type: "post", title: "A boring update" }, verdict: "skip", reasons: ["filter_words: no element in the title"] },
      { event: { type: "post", title: "Big launch today", author: "Ada" }, verdict: "post", reasons: ["filter_words: \"launch\" in the title"] }
    ]
  },
  {
    module: "forum",
    source: "SandboxNews",
    feed: () => ({ feed_identifier: "SandboxNews", webhook_channel: TEXT, webhook_options: { filter_flair: ["Tech"] } }),
    items: [
      { event: { type: "post", title: "Elections", flair: "World", author: "reporter" }, verdict: "skip", reasons: ["filter_flair: flair World is not listed"] },
      { event: { type: "post", title: "New chip", flair: "Tech", author: "geek" }, verdict: "post", reasons: ["filter_flair: flair Tech is listed"] }
    ]
  },
  {
    module: "microblog",
    source: "sandboxbird",
    feed: () => ({ feed_identifier: "sandboxbird", webhook_channel: TEXT, webhook_options: { filter_words: ["ship"], "webhook-name": "Birdwatch" } }),
    items: [
      { event: { type: "post", text: "Lunch break" }, verdict: "skip", reasons: ["filter_words: no element in the text"] },
      { event: { type: "post", text: "Shipping the insight routes" }, verdict: "post", reasons: ["filter_words: \"ship\" in the text"] }
    ]
  },
  {
    module: "video",
    source: "UCsandbox000000000000002",
    feed: () => ({ feed_identifier: "UCsandbox000000000000002", webhook_channel: TEXT, webhook_options: { nsfw: "skip" } }),
    items: [
      { event: { type: "added", title: "Knife skills, graphic", nsfw: true }, verdict: "skip", reasons: ["nsfw: skip — the item is NSFW"] },
      { event: { type: "added", title: "Pasta night", text: "How to cook pasta" }, verdict: "post", reasons: ["nsfw: skip — the item is not NSFW"] }
    ]
  },
  {
    module: "photo",
    source: "sandboxphotos",
    feed: () => ({ feed_identifier: "sandboxphotos", webhook_channel: TEXT, webhook_options: { filter_words: ["sunset"], filter_excl: true } }),
    items: [
      { event: { type: "post", text: "Sunset over the bay" }, verdict: "skip", reasons: ["filter_words (excluded): every element in the caption"] },
      { event: { type: "post", text: "Morning market" }, verdict: "post", reasons: ["filter_words (excluded): \"sunset\" not in the caption"] }
    ]
  }
]

/** Streaming has one event per poll and channel: one live stream, a feed that posts it and one that skips it. */
const STREAMING_FEEDS = [
  { channel: TEXT, game: "Minecraft", verdict: "post", reasons: ["filter_game: the stream started with game 27471, listed"] },
  { channel: TEXT2, game: "Fortnite", verdict: "skip", reasons: ["filter_game: the stream started with game 27471, not listed"] }
] as const

const preview = (m: string, id: string) =>
  Effect.map(call("GET", `${modulePath(m)}/feeds/${id}/preview`), (r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body.items as Array<{ id: string; verdict: string; reasons: Array<string>; message: Record<string, unknown>; url: string; title: string | null }>
  })

const refresh = (m: string, id: string) =>
  Effect.map(call("POST", `${modulePath(m)}/feeds/${id}/refresh`), (r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    assert.deepStrictEqual(r.body, { success: true })
  })

const feedOf = (m: string, id: string) =>
  Effect.map(call("GET", `${modulePath(m)}/feeds`), (r) => (r.body.feeds as Array<{ id: string }>).find((f) => f.id === id))

/**
 * One feed: publish → preview (verdicts, reasons) → refresh → the webhook gets exactly the preview's
 * messages of the `post` items → preview again (what happened) → the delivery log.
 */
const checkFeed = (m: string, feedId: string, published: ReadonlyArray<{ id: string; verdict: string; reasons: ReadonlyArray<string> }>) =>
  Effect.gen(function*() {
    const before = yield* feedOf(m, feedId)
    const first = yield* preview(m, feedId)
    const shown = published.map((p) => {
      const item = first.find((i) => i.id === p.id)
      assert.isDefined(item, `${m}: ${p.id} in the preview ${JSON.stringify(first.map((i) => i.id))}`)
      assert.deepStrictEqual([item!.verdict, item!.reasons], [p.verdict, [...p.reasons]], `${m}: ${p.id}`)
      return item!
    })
    const posts = shown.filter((i) => i.verdict === "post")

    yield* refresh(m, feedId)
    const posted = (messages: ReadonlyArray<InboxMessage>) =>
      messages.filter((msg) => shown.some((i) => String(msg.body["content"]).includes(i.url)))
    yield* eventually(Effect.map(inbox, posted), (ms) => ms.length >= posts.length, `${m}: the messages`)
    yield* Effect.sleep("1 second") // a skipped item posted late would show now
    const got = posted(yield* inbox)
    assert.strictEqual(got.length, posts.length, `${m}: ${JSON.stringify(got)}`)
    for (const [i, msg] of got.entries()) {
      // Byte for byte: the preview's message is what the webhook got (and nothing may ping).
      assert.strictEqual(JSON.stringify(asPreviewMessage(msg.body)), JSON.stringify(posts[i]!.message), `${m}: message ${i}`)
      assert.deepStrictEqual(msg.body["allowed_mentions"], { parse: [] })
    }

    const second = yield* preview(m, feedId)
    for (const item of shown) {
      const now = second.find((i) => i.id === item.id)!
      assert.strictEqual(now.verdict, "skip")
      assert.deepStrictEqual(now.reasons, [item.verdict === "post" ? "already posted" : `already skipped: ${item.reasons.join("; ")}`])
      assert.deepStrictEqual(now.message, item.message, "the message that would be sent is the same")
    }

    const log = yield* call("GET", `${modulePath(m)}/feeds/${feedId}/deliveries`)
    assert.strictEqual(log.status, 200, JSON.stringify(log.body))
    assert.deepInclude(log.body, { page: 1, page_size: 10, page_max: 1 })
    const entries = log.body.deliveries as Array<Record<string, unknown>>
    assert.strictEqual(entries.length, published.length, JSON.stringify(entries))
    for (const item of shown) {
      const entry = entries.find((e) => e["item_id"] === item.id)!
      const message = got.find((msg) => String(msg.body["content"]).includes(item.url))
      assert.deepInclude(entry, item.verdict === "post"
        ? { state: "sent", reason: null, message_id: message!.id, url: item.url, title: item.title }
        : { state: "skipped", reason: item.reasons.join("; "), message_id: null, url: item.url, title: item.title })
    }
    assert.deepStrictEqual(yield* feedOf(m, feedId), before, "the feed itself is unchanged")
  })

for (const db of dbKinds) {
  layer(appLayer(db), { excludeTestServices: true, timeout: 120_000 })(`preview, refresh and log over HTTP (${db})`, (it) => {
    it.effect("every module: verdicts and reasons; the webhook gets byte for byte the preview's messages; the log", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        yield* publish("rss", "insight-rss", { type: "post", title: "Served before the feed existed" })
        const feeds = yield* Effect.forEach(CASES, (c) => Effect.map(createFeed(c.module, c.feed(app.url)), (f) => ({ c, id: f.id })), {
          concurrency: "unbounded"
        })
        const streaming = yield* Effect.forEach(STREAMING_FEEDS, (s) =>
          Effect.map(createFeed("streaming", {
            feed_identifier: "sandboxstreamer",
            webhook_channel: s.channel,
            webhook_options: { filter_game: [s.game] }
          }), (f) => ({ ...s, id: f.id })))
        yield* Effect.forEach([...feeds.map((f) => [f.c.module, f.id] as const), ...streaming.map((s) => ["streaming", s.id] as const)], ([m, id]) =>
          baselined(m, id), { concurrency: "unbounded" })

        // What the source served at the feed's first poll: never posted, and the preview says so.
        const rssFeed = feeds.find((f) => f.c.module === "rss")!
        const before = (yield* preview("rss", rssFeed.id)).find((i) => i.title === "Served before the feed existed")
        assert.deepStrictEqual([before?.verdict, before?.reasons], ["skip", [SEEN_BEFORE]])

        const live = yield* publish("streaming", "sandboxstreamer", { type: "live", title: "Building a castle", game: "minecraft" })
        yield* Effect.forEach(feeds, ({ c, id }) =>
          Effect.gen(function*() {
            const published = []
            for (const item of c.items) {
              const event = yield* publish(c.module, c.source, item.event)
              published.push({ id: event.id, verdict: item.verdict, reasons: item.reasons })
            }
            yield* checkFeed(c.module, id, published)
          }), { concurrency: "unbounded" })

        // Streaming: both feeds judged before the poll, then one refresh for their one source.
        const previews = yield* Effect.forEach(streaming, (s) => preview("streaming", s.id))
        for (const [i, s] of streaming.entries()) {
          const item = previews[i]!.find((p) => p.id === live.id)
          assert.deepStrictEqual([item?.verdict, item?.reasons], [s.verdict, [...s.reasons]], `streaming feed on ${s.game}`)
        }
        yield* checkFeed("streaming", streaming[0].id, [{ id: live.id, verdict: "post", reasons: streaming[0].reasons }])
        const skipped = yield* call("GET", `${modulePath("streaming")}/feeds/${streaming[1].id}/deliveries`)
        assert.deepStrictEqual(
          (skipped.body.deliveries as Array<Record<string, unknown>>).map((d) => [d["item_id"], d["state"], d["reason"]]),
          [[live.id, "skipped", streaming[1].reasons.join("; ")]]
        )
      }))
  })
}
