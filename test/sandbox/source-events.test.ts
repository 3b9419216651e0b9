/**
 * delivery.md §7: events published at the sandbox sources are served by each twin like the real API,
 * and the gateway's real pollers (layers/sources/poll, pointed at the twins as sandbox mode does)
 * read them: RSS with ETag/Last-Modified and 304s, the Reddit listing, Helix streams (batched),
 * YouTube uploads, the X timeline without replies and reposts, Instagram business discovery media.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { SourcePollerHttp } from "../../src/layers/sources/poll/SourcePollerHttp.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxState } from "../../src/sandbox/SandboxRoute.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { SOURCES_LISTING } from "../../src/sandbox/sources/Seed.ts"
import type { Item } from "../../src/services/delivery/Item.ts"
import type { PollResult, PollState } from "../../src/services/SourcePoller.ts"
import { emptyPollState, SourcePoller } from "../../src/services/SourcePoller.ts"
import { call, field } from "./SandboxCall.ts"

const Poller = Layer.unwrap(Effect.map(SandboxServer, (server) =>
  SourcePollerHttp.layer({
    ...SourcePollerHttp.fromExternalSources(SandboxMode.sourcesOptions(server.url, "5 seconds")),
    timeout: "5 seconds",
    offlineGraceSeconds: 0
  })
)).pipe(Layer.provide(FetchHttpClient.layer))

const Env = Poller.pipe(Layer.provideMerge(SandboxServer.layer()))

const post = (path: string, body: unknown) =>
  call(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
const publish = (module: string, identifier: string, body: unknown) =>
  post(`/sandbox/sources/${module}/${encodeURIComponent(identifier)}/events`, body)

const items = (r: PollResult): ReadonlyArray<Item> => {
  assert.strictEqual(r._tag, "Items")
  return r._tag === "Items" ? r.items : []
}
const find = <I extends Item>(list: ReadonlyArray<Item>, id: string) => {
  const found = list.find((i) => i.id === id)
  assert.isDefined(found, `item ${id} in ${JSON.stringify(list.map((i) => i.id))}`)
  return found as I
}

const secondsAgo = (s: number) => new Date(Math.floor(Date.now() / 1000) * 1000 - s * 1000).toISOString()

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
      assert.isTrue(item.over18)
      assert.strictEqual(item.flair, "News")
      assert.strictEqual(item.url, permalink)
      assert.strictEqual(item.subreddit, "SandboxGaming")
      assert.match(item.subredditFullname, /^t5_/)
      assert.strictEqual(item.author, "gamer1")
    }))

  it.effect("streaming: Helix streams, batched; live with the seeded game until offline; the poller reads both", () =>
    Effect.gen(function*() {
      const poller = yield* SourcePoller
      const state = yield* SandboxState
      const ids = ["41000001", "41000002", "41000003"]
      const sources = ids.map((identifier) => ({ identifier, previous: emptyPollState }))
      const baseline = yield* poller.pollMany("streaming", sources)
      for (const id of ids) assert.strictEqual((baseline.get(id) as PollResult)._tag, "Items")

      const live = yield* publish("streaming", "sandboxstreamer", { type: "live", title: "Building a castle", game: "minecraft" })
      assert.strictEqual(live.status, 201, JSON.stringify(live.body))
      assert.deepInclude(live.body as object, { type: "live", game: "Minecraft", game_id: "27471", source_id: "41000001", url: "https://www.twitch.tv/sandboxstreamer" })
      const streamId = String(field(live.body, "id"))

      const helix = yield* call(`/sandbox/streaming/helix/streams?${ids.map((id) => `user_id=${id}`).join("&")}&first=100`, {
        headers: { "client-id": "c", authorization: "Bearer t" }
      })
      assert.strictEqual(helix.status, 200)
      const data = field(helix.body, "data") as Array<Record<string, unknown>>
      assert.strictEqual(data.length, 1)
      assert.deepInclude(data[0]!, {
        id: streamId,
        user_id: "41000001",
        user_login: "sandboxstreamer",
        user_name: "SandboxStreamer",
        game_id: "27471",
        game_name: "Minecraft",
        type: "live",
        title: "Building a castle"
      })
      assert.deepStrictEqual(field(helix.body, "pagination"), {})
      const tooMany = Array.from({ length: 101 }, (_, i) => `user_id=${i + 1}`).join("&")
      assert.strictEqual((yield* call(`/sandbox/streaming/helix/streams?${tooMany}`, { headers: { "client-id": "c", authorization: "Bearer t" } })).status, 400)

      yield* state.resetStats
      const previous = new Map(ids.map((id) => {
        const r = baseline.get(id) as PollResult
        return [id, r.state] as const
      }))
      const afterLive = yield* poller.pollMany("streaming", ids.map((identifier) => ({ identifier, previous: previous.get(identifier)! })))
      assert.strictEqual((yield* state.stats).calls["GET /sandbox/streaming/helix/streams"], 1, "three channels, one Helix call")
      const liveItem = find<Extract<Item, { module: "streaming" }>>(items(afterLive.get("41000001") as PollResult), streamId)
      assert.strictEqual(liveItem.event, "live")
      assert.strictEqual(liveItem.game, "Minecraft")
      assert.strictEqual(liveItem.gameId, "27471")
      assert.strictEqual(liveItem.status, "Building a castle")

      // A game change during the stream is the same stream: no new id.
      const changed = yield* publish("streaming", "41000001", { type: "live", game: "Fortnite" })
      assert.strictEqual(field(changed.body, "id"), streamId)
      const offline = yield* publish("streaming", "sandboxstreamer", { type: "offline" })
      assert.strictEqual(offline.status, 201)
      assert.strictEqual(field(offline.body, "id"), `${streamId}:offline`)
      let st: PollState = (afterLive.get("41000001") as PollResult).state
      const seenOffline = yield* poller.poll("streaming", "41000001", st)
      st = seenOffline.state
      const ended = yield* poller.poll("streaming", "41000001", st)
      const offItem = find<Extract<Item, { module: "streaming" }>>(items(ended), `${streamId}:offline`)
      assert.strictEqual(offItem.event, "offline")
      assert.strictEqual(offItem.game, "Minecraft", "the game the stream started with")
    }))

  it.effect("video: uploads playlist, videos with duration and age restriction; updated changes title and description", () =>
    Effect.gen(function*() {
      const poller = yield* SourcePoller
      const channel = "UCsandbox000000000000002"
      assert.strictEqual((yield* poller.poll("video", channel, emptyPollState))._tag, "Items", "no uploads yet: an empty baseline")
      const added = yield* publish("video", channel, {
        type: "added",
        id: "vid00000001",
        title: "Pasta night",
        text: "How to cook pasta",
        nsfw: true,
        duration: "PT1H2M3S",
        published_at: secondsAgo(60)
      })
      assert.strictEqual(added.status, 201, JSON.stringify(added.body))
      assert.strictEqual(field(added.body, "url"), "https://www.youtube.com/watch?v=vid00000001")

      const key = "key=k"
      const channels = yield* call(`/sandbox/video/youtube/v3/channels?part=snippet,contentDetails&id=${channel}&${key}`)
      const uploads = (field(channels.body, "items") as Array<any>)[0].contentDetails.relatedPlaylists.uploads
      assert.strictEqual(uploads, "UUsandbox000000000000002")
      const listing = yield* call(`/sandbox/video/youtube/v3/playlistItems?part=contentDetails&playlistId=${uploads}&maxResults=20&${key}`)
      assert.strictEqual(listing.status, 200)
      assert.deepStrictEqual((field(listing.body, "items") as Array<any>).map((i) => i.contentDetails.videoId), ["vid00000001"])
      const etag = listing.headers.get("etag")!
      assert.strictEqual(
        (yield* call(`/sandbox/video/youtube/v3/playlistItems?part=contentDetails&playlistId=${uploads}&maxResults=20&${key}`, { headers: { "if-none-match": etag } })).status,
        304
      )
      const videos = yield* call(`/sandbox/video/youtube/v3/videos?part=snippet,contentDetails,statistics&id=vid00000001&${key}`)
      const video = (field(videos.body, "items") as Array<any>)[0]
      assert.strictEqual(video.snippet.title, "Pasta night")
      assert.strictEqual(video.snippet.channelTitle, "Sandbox Cooking")
      assert.strictEqual(video.contentDetails.duration, "PT1H2M3S")
      assert.deepStrictEqual(video.contentDetails.contentRating, { ytRating: "ytAgeRestricted" })
      assert.strictEqual(video.statistics.viewCount, "0")

      const firstPoll = yield* poller.poll("video", channel, emptyPollState)
      const item = find<Extract<Item, { module: "video" }>>(items(firstPoll), "vid00000001")
      assert.strictEqual(item.event, "added")
      assert.strictEqual(item.title, "Pasta night")
      assert.strictEqual(item.description, "How to cook pasta")
      assert.strictEqual(item.durationSeconds, 3723)
      assert.isTrue(item.ageRestricted)
      assert.strictEqual(item.channel, "Sandbox Cooking")

      const updated = yield* publish("video", channel, { type: "updated", id: "vid00000001", title: "Pasta night (remastered)" })
      assert.strictEqual(updated.status, 201)
      assert.deepInclude(updated.body as object, { id: "vid00000001", type: "updated", title: "Pasta night (remastered)", text: "How to cook pasta" })
      const after = yield* call(`/sandbox/video/youtube/v3/videos?part=snippet&id=vid00000001&${key}`)
      assert.strictEqual((field(after.body, "items") as Array<any>)[0].snippet.title, "Pasta night (remastered)")
      // As on YouTube: the snippet of the uploads listing shows the new title, its contentDetails do not change.
      const snippetListing = yield* call(`/sandbox/video/youtube/v3/playlistItems?part=snippet&playlistId=${uploads}&${key}`)
      assert.strictEqual((field(snippetListing.body, "items") as Array<any>)[0].snippet.title, "Pasta night (remastered)")
      assert.strictEqual(
        (yield* call(`/sandbox/video/youtube/v3/playlistItems?part=contentDetails&playlistId=${uploads}&maxResults=20&${key}`, { headers: { "if-none-match": etag } })).status,
        304
      )
      // The poller reads the listing with its snippet, so the edit reaches it as an `updated` event.
      const afterEdit = items(yield* poller.poll("video", channel, firstPoll.state))
      const edited = afterEdit.find((i) => i.module === "video" && i.event === "updated")
      assert.isDefined(edited, "an edited title is reported as updated")
      assert.strictEqual((edited as Extract<Item, { module: "video" }>).title, "Pasta night (remastered)")
    }))

  it.effect("microblog: the X timeline; exclude=replies,retweets honoured; media expansions; long posts in note_tweet", () =>
    Effect.gen(function*() {
      const poller = yield* SourcePoller
      const user = "1500000000000000002"
      const at = secondsAgo(120)
      const plain = yield* publish("microblog", "gatewaynews", { type: "post", text: "Fish & chips <3", media: ["https://example.com/a.jpg", "https://example.com/b.jpg"], published_at: at })
      assert.strictEqual(plain.status, 201, JSON.stringify(plain.body))
      const plainId = String(field(plain.body, "id"))
      assert.strictEqual(field(plain.body, "url"), `https://x.com/gatewaynews/status/${plainId}`)
      const reply = yield* publish("microblog", "gatewaynews", { type: "post", text: "@someone a reply", reply_to: plainId })
      const repost = yield* publish("microblog", user, { type: "post", text: "someone else's post", repost_of: "1" })
      const long = "x".repeat(300) + " end"
      const longPost = yield* publish("microblog", "gatewaynews", { type: "post", text: long })
      for (const r of [reply, repost, longPost]) assert.strictEqual(r.status, 201)

      const auth = { headers: { authorization: "Bearer t" } }
      const all = yield* call(`/sandbox/microblog/2/users/${user}/tweets?max_results=10`, auth)
      assert.strictEqual((field(all.body, "data") as Array<unknown>).length, 4)
      const filtered = yield* call(
        `/sandbox/microblog/2/users/${user}/tweets?exclude=replies,retweets&max_results=20&tweet.fields=created_at,author_id,attachments,note_tweet&expansions=author_id,attachments.media_keys&media.fields=type,url&user.fields=username,name,profile_image_url`,
        auth
      )
      const data = field(filtered.body, "data") as Array<Record<string, any>>
      assert.deepStrictEqual(data.map((t) => t.id), [String(field(longPost.body, "id")), plainId], "newest first, no reply, no repost")
      const tweet = data[1]!
      assert.strictEqual(tweet["text"], "Fish &amp; chips &lt;3", "X escapes &, <, >")
      assert.strictEqual(tweet["created_at"], at.replace("Z", "").replace(/(\.\d{3})?$/, ".000Z"))
      assert.strictEqual(tweet["author_id"], user)
      assert.strictEqual(tweet["attachments"].media_keys.length, 2)
      const includes = field(filtered.body, "includes") as Record<string, any>
      assert.deepStrictEqual(includes["media"].map((m: any) => m.url), ["https://example.com/a.jpg", "https://example.com/b.jpg"])
      assert.strictEqual(includes["users"][0].username, "gatewaynews")
      assert.strictEqual(data[0]!["note_tweet"].text, long)
      assert.strictEqual([...data[0]!["text"]].length, 280)
      assert.deepInclude(field(filtered.body, "meta") as object, { result_count: 2 })
      assert.strictEqual((yield* call(`/sandbox/microblog/2/users/${user}/tweets?max_results=200`, auth)).status, 400)
      const unknown = yield* call("/sandbox/microblog/2/users/1500000000000000999/tweets", auth)
      assert.strictEqual(unknown.status, 200)
      assert.isDefined(field(unknown.body, "errors"))

      const polled = items(yield* poller.poll("microblog", user, emptyPollState))
      assert.sameMembers(polled.map((i) => i.id), [plainId, String(field(longPost.body, "id"))])
      const item = find<Extract<Item, { module: "microblog" }>>(polled, plainId)
      assert.strictEqual(item.text, "Fish & chips <3")
      assert.deepStrictEqual(item.mediaUrls, ["https://example.com/a.jpg", "https://example.com/b.jpg"])
      assert.strictEqual(item.screenName, "gatewaynews")
      assert.strictEqual(item.publishedAt.toISOString(), at)
      assert.strictEqual(find<Extract<Item, { module: "microblog" }>>(polled, String(field(longPost.body, "id"))).text, long)
    }))

  it.effect("photo: business discovery media (caption, media_url, permalink, timestamp); the poller reads them", () =>
    Effect.gen(function*() {
      const poller = yield* SourcePoller
      const at = secondsAgo(300)
      const published = yield* publish("photo", "sandboxphotos", { type: "post", text: "Sunset #beach #sandbox", media: ["https://example.com/sunset.jpg"], published_at: at })
      assert.strictEqual(published.status, 201, JSON.stringify(published.body))
      const id = String(field(published.body, "id"))
      const permalink = String(field(published.body, "url"))
      assert.match(permalink, /^https:\/\/www\.instagram\.com\/p\/[A-Za-z0-9_-]+\/$/)

      const fields = "business_discovery.username(sandboxphotos){id,username,name,profile_picture_url,media.limit(5){id,caption,media_type,media_url,permalink,timestamp}}"
      const raw = yield* call(`/sandbox/photo/17841400000000001?fields=${encodeURIComponent(fields)}&access_token=t`)
      assert.strictEqual(raw.status, 200, JSON.stringify(raw.body))
      const account = field(raw.body, "business_discovery") as Record<string, any>
      assert.deepInclude(account, { id: "17841400000000101", username: "sandboxphotos", name: "Sandbox Photos" })
      assert.deepStrictEqual(account["media"].data[0], {
        id,
        caption: "Sunset #beach #sandbox",
        media_type: "IMAGE",
        media_url: "https://example.com/sunset.jpg",
        permalink,
        timestamp: at.replace(/\.\d{3}Z$/, "+0000")
      })
      const bad = yield* call(`/sandbox/photo/17841400000000001?fields=${encodeURIComponent("business_discovery.username(sandboxphotos){nope}")}&access_token=t`)
      assert.strictEqual(bad.status, 400)

      const item = find<Extract<Item, { module: "photo" }>>(items(yield* poller.poll("photo", "17841400000000101", emptyPollState)), id)
      assert.strictEqual(item.caption, "Sunset #beach #sandbox")
      assert.strictEqual(item.mediaUrl, "https://example.com/sunset.jpg")
      assert.strictEqual(item.url, permalink)
      assert.deepStrictEqual(item.hashtags, ["beach", "sandbox"])
      assert.strictEqual(item.publishedAt.toISOString(), at)
    }))

  it.effect("publish problems come in the envelope: 400 (every field), 404 unknown source or video, 409 reused id or not live", () =>
    Effect.gen(function*() {
      const codes = (body: unknown) => (field(body, "errors") as Array<{ code: string; additionalProperties?: { path?: string } }>)
      const bad = yield* publish("rss", "news", { type: "live", nsfw: "yes", published_at: "yesterday", url: "ftp://x" })
      assert.strictEqual(bad.status, 400)
      assert.sameMembers(codes(bad.body).map((e) => e.additionalProperties?.path), ["type", "nsfw", "published_at", "url"])
      assert.strictEqual(codes(bad.body)[0]!.code, "Bad Request")
      assert.strictEqual((yield* publish("rss", "news", {})).status, 400, "type is required")
      assert.strictEqual((yield* call("/sandbox/sources/rss/news/events", { method: "POST", body: "not json" })).status, 400)
      assert.strictEqual((yield* publish("forum", "NoSuchForum", { type: "post" })).status, 404)
      assert.strictEqual((yield* publish("nosuchmodule", "x", { type: "post" })).status, 404)
      const noId = yield* publish("video", SOURCES_LISTING.video[0]!, { type: "updated", title: "x" })
      assert.strictEqual(noId.status, 400)
      assert.strictEqual(codes(noId.body)[0]!.additionalProperties?.path, "id")
      assert.strictEqual((yield* publish("video", SOURCES_LISTING.video[0]!, { type: "updated", id: "nonexistent", title: "x" })).status, 404)
      assert.strictEqual((yield* publish("rss", "news", { type: "post", id: "sandbox-rss-1" })).status, 409)
      const notLive = yield* publish("streaming", "speedrunsam", { type: "offline" })
      assert.strictEqual(notLive.status, 409)
      assert.strictEqual(codes(notLive.body)[0]!.code, "Conflict")
      const game = yield* publish("streaming", "speedrunsam", { type: "live", game: "Not A Game" })
      assert.strictEqual(game.status, 400)
      assert.strictEqual(codes(game.body)[0]!.additionalProperties?.path, "game")
      // Publishing is a control route: neither counted nor faulted.
      const stats = yield* call("/sandbox/stats")
      assert.isUndefined((field(stats.body, "calls") as Record<string, number>)["POST /sandbox/sources/{module}/{identifier}/events"])
    }))
})
