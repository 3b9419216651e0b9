/**
 * delivery.md §7: events published at the sandbox's RSS and forum sources are served by each twin
 * like the real API (RSS with ETag/Last-Modified and 304s, the Reddit listing), and the gateway's
 * real pollers (layers/sources/poll, pointed at the twins as sandbox mode does) read them.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import { emptyPollState, SourcePoller } from "../../src/services/sources/SourcePoller.ts"
import { call, field } from "./SandboxCallFixtures.ts"
import { Env, find, items, publish, secondsAgo } from "./SourceEventsFixtures.ts"

layer(Env, { excludeTestServices: true })("sandbox sources serve published events", (it) => {
  it.effect("rss: a published item is in the feed; 304 on If-None-Match / If-Modified-Since; the poller reads it", () =>
    Effect.gen(function*() {
      const poller = yield* SourcePoller
      const server = yield* SandboxServer
      const feedUrl = `${server.url}/sandbox/rss/news.xml`
      const first = yield* poller.poll("rss", feedUrl, emptyPollState)
      assert.includeMembers(items(first).map((i) => i.id), ["sandbox-rss-1", "sandbox-rss-2"])
      const before = yield* call("/sandbox/rss/news.xml")
      const etag = before.headers.get("etag")!
      const lastModified = before.headers.get("last-modified")!
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/)
      assert.strictEqual((yield* call("/sandbox/rss/news.xml", { headers: { "if-none-match": etag } })).status, 304)
      assert.strictEqual((yield* call("/sandbox/rss/news.xml", { headers: { "if-modified-since": lastModified } })).status, 304)
      assert.strictEqual(first._tag === "Items" ? (yield* poller.poll("rss", feedUrl, first.state))._tag : "", "NotModified")

      const at = secondsAgo(30)
      const published = yield* publish("rss", "news", {
        type: "post",
        id: "news-42",
        title: "Breaking & new",
        text: "<p>Body with <b>HTML</b></p>",
        url: "https://example.com/news/42",
        author: "Reporter",
        flair: "World",
        published_at: at
      })
      assert.strictEqual(published.status, 201, JSON.stringify(published.body))
      assert.deepInclude(published.body as object, {
        id: "news-42",
        module: "rss",
        identifier: feedUrl,
        source_id: feedUrl,
        type: "post",
        title: "Breaking & new",
        url: "https://example.com/news/42",
        author: "Reporter",
        nsfw: false,
        published_at: at
      })

      const after = yield* call("/sandbox/rss/news.xml", { headers: { "if-none-match": etag } })
      assert.strictEqual(after.status, 200, "the old ETag no longer matches")
      assert.notStrictEqual(after.headers.get("etag"), etag)
      assert.isAbove(Date.parse(after.headers.get("last-modified")!), Date.parse(lastModified))
      assert.include(after.headers.get("content-type") ?? "", "application/rss+xml")
      assert.strictEqual(
        (yield* call("/sandbox/rss/news.xml", { headers: { "if-modified-since": lastModified } })).status,
        200,
        "modified since the old Last-Modified"
      )

      const second = yield* poller.poll("rss", feedUrl, first._tag === "Items" ? first.state : emptyPollState)
      const item = find<Extract<Item, { module: "rss" }>>(items(second), "news-42")
      assert.strictEqual(item.title, "Breaking & new")
      assert.strictEqual(item.url, "https://example.com/news/42")
      assert.strictEqual(item.author, "Reporter")
      assert.deepStrictEqual(item.categories, ["World"])
      assert.include(item.contentHtml ?? "", "<b>HTML</b>")
      assert.strictEqual(item.publishedAt.toISOString(), at)
      assert.strictEqual(item.feedTitle, "Sandbox News & Updates")
      if (second._tag === "Items") assert.strictEqual((yield* poller.poll("rss", feedUrl, second.state))._tag, "NotModified")
    }))

  it.effect("rss: the Atom feed and a feed created by publishing to a new short name", () =>
    Effect.gen(function*() {
      const poller = yield* SourcePoller
      const server = yield* SandboxServer
      const atom = yield* publish("rss", "atom", { type: "post", title: "Atom two", url: "https://example.com/atom/2" })
      assert.strictEqual(atom.status, 201)
      const atomItems = items(yield* poller.poll("rss", `${server.url}/sandbox/rss/atom.xml`, emptyPollState))
      assert.strictEqual(find<Extract<Item, { module: "rss" }>>(atomItems, String(field(atom.body, "id"))).title, "Atom two")

      assert.strictEqual((yield* call("/sandbox/rss/bench-7.xml")).status, 404, "no such feed yet")
      const created = yield* publish("rss", `${server.url}/sandbox/rss/bench-7.xml`, { type: "post", title: "First of bench-7" })
      assert.strictEqual(created.status, 201)
      assert.strictEqual(field(created.body, "identifier"), `${server.url}/sandbox/rss/bench-7.xml`)
      const fresh = items(yield* poller.poll("rss", `${server.url}/sandbox/rss/bench-7.xml`, emptyPollState))
      assert.deepStrictEqual(fresh.map((i) => i.id), [field(created.body, "id")])
      const index = yield* call("/sandbox")
      assert.include(field(field(index.body, "sources"), "rss") as Array<string>, `${server.url}/sandbox/rss/bench-7.xml`)
    }))

  it.effect("forum: the Reddit listing of new posts (over_18, flair, permalink, subreddit_id); the poller reads it", () =>
    Effect.gen(function*() {
      const poller = yield* SourcePoller
      const published = yield* publish("forum", "SandboxGaming", {
        type: "post",
        id: "abc123",
        title: "Patch notes & <stuff>",
        text: "Self text",
        author: "gamer1",
        flair: "News",
        nsfw: true
      })
      assert.strictEqual(published.status, 201, JSON.stringify(published.body))
      assert.strictEqual(field(published.body, "id"), "t3_abc123")
      const permalink = "https://www.reddit.com/r/SandboxGaming/comments/abc123/patch_notes_stuff/"
      assert.strictEqual(field(published.body, "url"), permalink)

      const raw = yield* call("/sandbox/forum/r/sandboxgaming/new.json?limit=25", { headers: { authorization: "Bearer t" } })
      assert.strictEqual(raw.status, 200)
      assert.strictEqual(field(raw.body, "kind"), "Listing")
      const children = field(field(raw.body, "data"), "children") as Array<{ kind: string; data: Record<string, unknown> }>
      assert.strictEqual(children[0]!.kind, "t3")
      assert.deepInclude(children[0]!.data, {
        id: "abc123",
        name: "t3_abc123",
        title: "Patch notes &amp; &lt;stuff&gt;",
        over_18: true,
        link_flair_text: "News",
        permalink: "/r/SandboxGaming/comments/abc123/patch_notes_stuff/",
        subreddit: "SandboxGaming",
        author: "gamer1"
      })
      assert.match(String(children[0]!.data["subreddit_id"]), /^t5_/)
      const rawJson = yield* call("/sandbox/forum/r/SandboxGaming/new.json?raw_json=1", { headers: { authorization: "Bearer t" } })
      const plain = (field(field(rawJson.body, "data"), "children") as Array<{ data: Record<string, unknown> }>)[0]!.data
      assert.strictEqual(plain["title"], "Patch notes & <stuff>", "raw_json=1: unescaped")
      assert.strictEqual((yield* call("/sandbox/forum/r/SandboxGaming/new.json")).status, 401)
      assert.strictEqual((yield* call("/sandbox/forum/r/SandboxPrivate/new.json", { headers: { authorization: "Bearer t" } })).status, 403)

      const item = find<Extract<Item, { module: "forum" }>>(items(yield* poller.poll("forum", "SandboxGaming", emptyPollState)), "t3_abc123")
      assert.strictEqual(item.title, "Patch notes & <stuff>")
      assert.strictEqual(item.selfText, "Self text", "a text post's body: the embed's description (delivery.md §10)")
      assert.isTrue(item.over18)
      assert.strictEqual(item.flair, "News")
      assert.strictEqual(item.url, permalink)
      assert.strictEqual(item.subreddit, "SandboxGaming")
      assert.match(item.subredditFullname, /^t5_/)
      assert.strictEqual(item.author, "gamer1")
    }))
})
