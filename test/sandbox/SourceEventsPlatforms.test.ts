/**
 * delivery.md §7: events published at the sandbox's platform sources are served by each twin like
 * the real API, and the gateway's real pollers (layers/sources/poll, pointed at the twins as sandbox
 * mode does) read them: Helix streams (batched), YouTube uploads, the X timeline without replies and
 * reposts, Instagram business discovery media.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SandboxState } from "../../src/sandbox/SandboxRoute.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import type { PollResult, PollState } from "../../src/services/sources/SourcePoller.ts"
import { emptyPollState, SourcePoller } from "../../src/services/sources/SourcePoller.ts"
import { call, field } from "./SandboxCallFixtures.ts"
import { Env, find, items, publish, secondsAgo } from "./SourceEventsFixtures.ts"

layer(Env, { excludeTestServices: true })("sandbox sources serve published events", (it) => {
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
})
