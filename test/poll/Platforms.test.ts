/**
 * The forum, video, microblog and photo connectors against fake platform APIs served by a
 * node:http server: each listing gives exactly the expected items (ids, urls, times, fields), the
 * requests carry the documented parameters and credentials, and the platform's refusals become
 * PollFailed of the right kind.
 */
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Redacted } from "effect"
import { SourcePollerHttp, type SourcePollerHttpOptions, userAgentOf } from "../../src/layers/sources/poll/SourcePollerHttp.ts"
import { textHash } from "../../src/layers/sources/poll/VideoPoller.ts"
import { emptyPollState, type PollResult, SourcePoller } from "../../src/services/SourcePoller.ts"
import { json, type PollServer, startPollServer, withPoller } from "./PollServer.ts"
import { USER_AGENT_PRODUCT } from "../../src/domain/Version.ts"

let server: PollServer
beforeAll(async () => {
  server = await startPollServer()
})
afterAll(() => server.close())
beforeEach(() => server.reset())

const secret = Redacted.make("s3cret")
const options = (): SourcePollerHttpOptions => ({
  forum: { clientId: "cid", clientSecret: secret, apiUrl: `${server.url}/reddit-api`, authUrl: `${server.url}/reddit`, siteUrl: "https://www.reddit.com" },
  video: { apiKey: Redacted.make("yt-key"), baseUrl: `${server.url}/yt` },
  microblog: { bearerToken: Redacted.make("x-token"), baseUrl: `${server.url}/x` },
  photo: { accessToken: Redacted.make("ig-token"), userId: "900", baseUrl: `${server.url}/ig` }
})
const items = (r: PollResult) => (r._tag === "Items" ? r.items : [])
const flip = (module: "forum" | "video" | "microblog" | "photo", identifier: string) =>
  SourcePoller.use((p) => Effect.flip(p.poll(module, identifier, emptyPollState)))

describe("forum (Reddit)", () => {
  const listing = {
    kind: "Listing",
    data: {
      children: [
        {
          kind: "t3",
          data: {
            id: "abc1", name: "t3_abc1", title: "Release 5.5 & notes", author: "alice", subreddit: "typescript", subreddit_id: "t5_2qh5o",
            over_18: true, link_flair_text: "News", permalink: "/r/typescript/comments/abc1/release_55/", url: "https://devblogs.example.com/ts-5-5",
            created_utc: 1717243200, is_self: false
          }
        },
        {
          kind: "t3",
          data: {
            id: "abc2", name: "t3_abc2", title: "Question", author: "bob", subreddit: "typescript", subreddit_id: "t5_2qh5o",
            over_18: false, link_flair_text: "", permalink: "/r/typescript/comments/abc2/question/",
            url: "https://www.reddit.com/r/typescript/comments/abc2/question/", created_utc: 1717246800.5, is_self: true
          }
        },
        { kind: "t1", data: { id: "c1" } }
      ]
    }
  }
  const routes = (token = "tok1") => {
    server.routes.set("/reddit/api/v1/access_token", json({ access_token: token, token_type: "bearer", expires_in: 3600 }))
    server.routes.set("/reddit-api/r/typescript/new.json", json(listing))
    server.routes.set("/reddit-api/r/typescript/about", json({ kind: "t5", data: { community_icon: "https://styles.example.com/icon.png", icon_img: "" } }))
  }

  it.live("a listing → its posts (permalink, flair, over_18, link or self), with the subreddit icon", () =>
    withPoller(options(), Effect.gen(function*() {
      routes()
      const result = yield* SourcePoller.use((p) => p.poll("forum", "typescript", emptyPollState))
      const common = { module: "forum", subreddit: "typescript", subredditFullname: "t5_2qh5o", subredditIcon: "https://styles.example.com/icon.png" } as const
      assert.deepStrictEqual(items(result), [
        {
          ...common,
          id: "t3_abc1",
          url: "https://www.reddit.com/r/typescript/comments/abc1/release_55/",
          publishedAt: new Date("2024-06-01T12:00:00Z"),
          eventAt: new Date("2024-06-01T12:00:00Z"),
          author: "alice",
          title: "Release 5.5 & notes",
          flair: "News",
          over18: true,
          contentUrl: "https://devblogs.example.com/ts-5-5",
          permalink: "https://www.reddit.com/r/typescript/comments/abc1/release_55/"
        },
        {
          ...common,
          id: "t3_abc2",
          url: "https://www.reddit.com/r/typescript/comments/abc2/question/",
          publishedAt: new Date("2024-06-01T13:00:00.500Z"),
          eventAt: new Date("2024-06-01T13:00:00.500Z"),
          author: "bob",
          title: "Question",
          flair: null,
          over18: false,
          contentUrl: "https://www.reddit.com/r/typescript/comments/abc2/question/",
          permalink: "https://www.reddit.com/r/typescript/comments/abc2/question/"
        }
      ])
      const [token] = server.hits("/reddit/api/v1/access_token")
      assert.strictEqual(token!.headers["authorization"], `Basic ${Buffer.from("cid:s3cret").toString("base64")}`)
      assert.strictEqual(token!.body, "grant_type=client_credentials")
      const [list] = server.hits("/reddit-api/r/typescript/new.json")
      assert.strictEqual(list!.headers["authorization"], "Bearer tok1")
      assert.deepStrictEqual([list!.query.get("limit"), list!.query.get("raw_json")], ["25", "1"])
      assert.strictEqual(list!.headers["user-agent"], `${USER_AGENT_PRODUCT} (+ops@example.org)`)

      // The next poll reuses the token and the icon in the cursor; an unchanged listing is NotModified.
      const again = yield* SourcePoller.use((p) => p.poll("forum", "typescript", result.state))
      assert.strictEqual(again._tag, "NotModified")
      assert.deepStrictEqual([server.hits("/reddit/api/v1/access_token").length, server.hits("/reddit-api/r/typescript/about").length], [1, 1])
    })))

  it.live("a 401 with the cached token fetches a new one and retries once", () =>
    withPoller(options(), Effect.gen(function*() {
      routes()
      yield* SourcePoller.use((p) => p.poll("forum", "typescript", emptyPollState))
      let refused = false
      server.routes.set("/reddit-api/r/typescript/new.json", (req, res) => {
        if (!refused && req.headers["authorization"] === "Bearer tok1") {
          refused = true
          return void res.writeHead(401).end()
        }
        json(listing)(req, res, "")
      })
      server.routes.set("/reddit/api/v1/access_token", json({ access_token: "tok2", expires_in: 3600 }))
      const result = yield* SourcePoller.use((p) => p.poll("forum", "typescript", emptyPollState))
      assert.strictEqual(items(result).length, 2)
      assert.strictEqual(server.hits("/reddit-api/r/typescript/new.json").at(-1)!.headers["authorization"], "Bearer tok2")
    })))

  it.live("private, banned and unknown subreddits are `gone`", () =>
    withPoller(options(), Effect.gen(function*() {
      routes()
      server.routes.set("/reddit-api/r/secret/new.json", json({ reason: "private", message: "Forbidden", error: 403 }, 403))
      server.routes.set("/reddit-api/r/banned/new.json", json({ reason: "banned", message: "Not Found", error: 404 }, 404))
      server.routes.set("/reddit-api/r/nosuchsub/new.json", (_req, res) => res.writeHead(302, { location: "/reddit-api/subreddits/search.json?q=nosuchsub" }).end())
      server.routes.set("/reddit-api/subreddits/search.json", json({ kind: "Listing", data: { children: [{ kind: "t5", data: {} }] } }))
      const secretSub = yield* flip("forum", "secret")
      const banned = yield* flip("forum", "banned")
      const unknown = yield* flip("forum", "nosuchsub")
      assert.deepStrictEqual([secretSub.kind, banned.kind, unknown.kind], ["gone", "gone", "gone"])
      assert.include(secretSub.message, "r/secret is private")
    })))
})

describe("video (YouTube)", () => {
  const CHANNEL = "UC_x5XG1OV2P6uZZ5FSM9Ttw"
  const video = (id: string, title: string, extra: Record<string, unknown> = {}, details: Record<string, unknown> = {}) => ({
    id,
    snippet: {
      publishedAt: "2024-06-01T10:00:00Z", title, description: `About ${title}`, channelTitle: "Google for Developers",
      tags: ["dev"], thumbnails: { default: { url: `https://i.ytimg.com/vi/${id}/default.jpg` }, high: { url: `https://i.ytimg.com/vi/${id}/hqdefault.jpg` } },
      liveBroadcastContent: "none", ...extra
    },
    contentDetails: { duration: "PT1H2M3S", ...details }
  })
  const setup = (videos: () => ReadonlyArray<unknown>, etag: () => string) => {
    server.routes.set("/yt/channels", json({
      items: [{
        id: CHANNEL,
        snippet: { title: "Google for Developers", thumbnails: { high: { url: "https://yt3.example.com/ch.jpg" } } },
        contentDetails: { relatedPlaylists: { uploads: "UU_x5XG1OV2P6uZZ5FSM9Ttw" } }
      }]
    }))
    server.routes.set("/yt/playlistItems", (req, res) => {
      if (req.headers["if-none-match"] === etag()) return void res.writeHead(304, { etag: etag() }).end()
      json({ items: ["v1", "v2", "v3"].map((videoId) => ({ contentDetails: { videoId } })), etag: etag() }, 200, { etag: etag() })(req, res, "")
    })
    server.routes.set("/yt/videos", (req, res) => json({ items: videos().filter((v) => (new URL(req.url!, "http://x").searchParams.get("id") ?? "").includes((v as { id: string }).id)) })(req, res, ""))
  }

  it.live("uploads → `added` items with duration, tags, age restriction; 304 on the next poll; `updated` when a title changes", () =>
    withPoller(options(), Effect.gen(function*() {
      let title = "Launch"
      let etag = "\"e1\""
      setup(() => [
        video("v1", title),
        video("v2", "Premiere", { liveBroadcastContent: "upcoming" }, { duration: "P0D", contentRating: { ytRating: "ytAgeRestricted" } })
      ], () => etag)
      const poller = yield* SourcePoller
      const first = yield* poller.poll("video", CHANNEL, emptyPollState)
      const base = {
        module: "video", channel: "Google for Developers", channelThumbnail: "https://yt3.example.com/ch.jpg", tags: ["dev"],
        publishedAt: new Date("2024-06-01T10:00:00Z")
      } as const
      assert.deepStrictEqual(items(first), [
        {
          ...base, id: "v1", event: "added", url: "https://www.youtube.com/watch?v=v1", watchUrl: "https://www.youtube.com/watch?v=v1",
          eventAt: new Date("2024-06-01T10:00:00Z"), title: "Launch", description: "About Launch", durationSeconds: 3723,
          thumbnail: "https://i.ytimg.com/vi/v1/hqdefault.jpg", ageRestricted: false
        },
        {
          ...base, id: "v2", event: "added", url: "https://www.youtube.com/watch?v=v2", watchUrl: "https://www.youtube.com/watch?v=v2",
          eventAt: new Date("2024-06-01T10:00:00Z"), title: "Premiere", description: "About Premiere", durationSeconds: null,
          thumbnail: "https://i.ytimg.com/vi/v2/hqdefault.jpg", ageRestricted: true
        }
      ])
      assert.strictEqual(first.state.etag, "\"e1\"")
      const [playlist] = server.hits("/yt/playlistItems")
      assert.deepStrictEqual([playlist!.query.get("playlistId"), playlist!.query.get("key"), playlist!.query.get("maxResults")], ["UU_x5XG1OV2P6uZZ5FSM9Ttw", "yt-key", "20"])
      assert.strictEqual(server.hits("/yt/videos")[0]!.query.get("id"), "v1,v2,v3")

      const second = yield* poller.poll("video", CHANNEL, first.state)
      assert.strictEqual(second._tag, "NotModified")
      assert.strictEqual(server.hits("/yt/playlistItems")[1]!.headers["if-none-match"], "\"e1\"")
      assert.deepStrictEqual([server.hits("/yt/channels").length, server.hits("/yt/videos").length], [1, 1])

      title = "Launch (recording)"
      etag = "\"e2\""
      const third = yield* poller.poll("video", CHANNEL, second.state)
      const updated = items(third).filter((i) => i.module === "video" && i.event === "updated")
      assert.strictEqual(updated.length, 1)
      const u = updated[0]!
      assert.strictEqual(u.id, `v1:updated:${textHash("Launch (recording)", "About Launch (recording)")}`)
      assert.deepStrictEqual([u.publishedAt, u.eventAt > u.publishedAt], [new Date("2024-06-01T10:00:00Z"), true])
      assert.deepStrictEqual(items(third).map((i) => i.id).filter((id) => !id.includes(":")), ["v1", "v2"])
    })))

  it.live("an unknown channel is `gone`; a used-up quota is said in words", () =>
    withPoller(options(), Effect.gen(function*() {
      server.routes.set("/yt/channels", json({ items: [] }))
      const gone = yield* flip("video", CHANNEL)
      assert.strictEqual(gone.kind, "gone")
      server.routes.set("/yt/channels", json({ error: { code: 403, errors: [{ reason: "quotaExceeded" }] } }, 403))
      const quota = yield* flip("video", CHANNEL)
      assert.deepStrictEqual([quota.kind, quota.status], ["http", 403])
      assert.include(quota.message, "quota")
      assert.strictEqual((yield* flip("video", "not-a-channel")).kind, "gone")
    })))
})

describe("microblog (X)", () => {
  const timeline = {
    data: [
      { id: "1800000000000000002", text: "Shipping &amp; more &lt;3 https://t.co/x", created_at: "2024-06-01T12:00:00.000Z", author_id: "42", attachments: { media_keys: ["3_1", "7_2"] } },
      { id: "1800000000000000001", text: "truncated…", created_at: "2024-05-31T12:00:00.000Z", author_id: "42", note_tweet: { text: "The whole long post" } }
    ],
    includes: {
      users: [{ id: "42", username: "TwitterDev", name: "Developers", profile_image_url: "https://pbs.twimg.com/p_normal.jpg" }],
      media: [
        { media_key: "3_1", type: "photo", url: "https://pbs.twimg.com/media/a.jpg" },
        { media_key: "7_2", type: "video", preview_image_url: "https://pbs.twimg.com/ext/b.jpg" }
      ]
    },
    meta: { result_count: 2 }
  }

  it.live("a timeline (replies and reposts excluded by the request) → posts with media and unescaped text", () =>
    withPoller(options(), Effect.gen(function*() {
      server.routes.set("/x/2/users/42/tweets", json(timeline))
      const result = yield* SourcePoller.use((p) => p.poll("microblog", "42", emptyPollState))
      const common = { module: "microblog", screenName: "TwitterDev", name: "Developers", profileImage: "https://pbs.twimg.com/p_normal.jpg" } as const
      assert.deepStrictEqual(items(result), [
        {
          ...common, id: "1800000000000000002", url: "https://x.com/TwitterDev/status/1800000000000000002",
          postUrl: "https://x.com/TwitterDev/status/1800000000000000002", publishedAt: new Date("2024-06-01T12:00:00Z"),
          eventAt: new Date("2024-06-01T12:00:00Z"), text: "Shipping & more <3 https://t.co/x",
          mediaUrls: ["https://pbs.twimg.com/media/a.jpg", "https://pbs.twimg.com/ext/b.jpg"]
        },
        {
          ...common, id: "1800000000000000001", url: "https://x.com/TwitterDev/status/1800000000000000001",
          postUrl: "https://x.com/TwitterDev/status/1800000000000000001", publishedAt: new Date("2024-05-31T12:00:00Z"),
          eventAt: new Date("2024-05-31T12:00:00Z"), text: "The whole long post", mediaUrls: []
        }
      ])
      const [req] = server.hits("/x/2/users/42/tweets")
      assert.strictEqual(req!.headers["authorization"], "Bearer x-token")
      assert.strictEqual(req!.query.get("exclude"), "replies,retweets")
      assert.strictEqual(req!.query.get("expansions"), "author_id,attachments.media_keys")
    })))

  it.live("an unknown or suspended user is `gone`; refused credentials are `http` 401", () =>
    withPoller(options(), Effect.gen(function*() {
      server.routes.set("/x/2/users/43/tweets", json({ errors: [{ type: "https://api.twitter.com/2/problems/resource-not-found", title: "Not Found Error" }] }))
      server.routes.set("/x/2/users/44/tweets", json({ title: "Not Found" }, 404))
      server.routes.set("/x/2/users/45/tweets", json({ title: "Unauthorized" }, 401))
      assert.strictEqual((yield* flip("microblog", "43")).kind, "gone")
      assert.strictEqual((yield* flip("microblog", "44")).kind, "gone")
      const refused = yield* flip("microblog", "45")
      assert.deepStrictEqual([refused.kind, refused.status], ["http", 401])
      // A body that is not the documented JSON is `unreadable`, not a crash.
      server.routes.set("/x/2/users/46/tweets", (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>maintenance</html>"))
      server.routes.set("/x/2/users/47/tweets", json({ data: [{ id: 1, text: null }] }))
      assert.strictEqual((yield* flip("microblog", "46")).kind, "unreadable")
      assert.strictEqual((yield* flip("microblog", "47")).kind, "unreadable")
    })))
})

describe("photo (Instagram)", () => {
  const account = (id: string, username: string) => ({
    business_discovery: {
      id, username, name: "The Brand", profile_picture_url: "https://scontent.example.com/p.jpg",
      media: {
        data: [
          { id: "m3", caption: "New #drop #Summer24 #drop", media_type: "VIDEO", media_url: "https://video.example.com/v.mp4", thumbnail_url: "https://scontent.example.com/t.jpg", permalink: "https://www.instagram.com/p/C3/", timestamp: "2024-06-01T12:00:00+0000" },
          { id: "m2", media_type: "CAROUSEL_ALBUM", media_url: "https://scontent.example.com/c.jpg", permalink: "https://www.instagram.com/p/C2/", timestamp: "2024-05-31T12:00:00+0000" }
        ]
      }
    },
    id: "900"
  })

  it.live("business discovery by the name read from the id → media items; the name is kept in the cursor", () =>
    withPoller(options(), Effect.gen(function*() {
      server.routes.set("/ig/178414", json({ username: "thebrand", id: "178414" }))
      server.routes.set("/ig/900", (req, res) => json(account("178414", "thebrand"))(req, res, ""))
      const poller = yield* SourcePoller
      const result = yield* poller.poll("photo", "178414", emptyPollState)
      const common = {
        module: "photo", event: "post", username: "thebrand", fullname: "The Brand", profileUrl: "https://www.instagram.com/thebrand/",
        profilePicture: "https://scontent.example.com/p.jpg"
      } as const
      assert.deepStrictEqual(items(result), [
        {
          ...common, id: "m3", url: "https://www.instagram.com/p/C3/", permalink: "https://www.instagram.com/p/C3/",
          publishedAt: new Date("2024-06-01T12:00:00Z"), eventAt: new Date("2024-06-01T12:00:00Z"), caption: "New #drop #Summer24 #drop",
          mediaUrl: "https://scontent.example.com/t.jpg", hashtags: ["drop", "Summer24"]
        },
        {
          ...common, id: "m2", url: "https://www.instagram.com/p/C2/", permalink: "https://www.instagram.com/p/C2/",
          publishedAt: new Date("2024-05-31T12:00:00Z"), eventAt: new Date("2024-05-31T12:00:00Z"), caption: null,
          mediaUrl: "https://scontent.example.com/c.jpg", hashtags: []
        }
      ])
      assert.deepStrictEqual(result.state.cursor, { username: "thebrand" })
      const discovery = server.hits("/ig/900")[0]!
      assert.strictEqual(discovery.query.get("access_token"), "ig-token")
      assert.match(discovery.query.get("fields") ?? "", /^business_discovery\.username\(thebrand\)\{id,username,name,profile_picture_url,media\.limit\(20\)\{/)
      yield* poller.poll("photo", "178414", result.state)
      assert.strictEqual(server.hits("/ig/178414").length, 1)
    })))

  it.live("a name kept in the cursor that now belongs to another account is read again from the id", () =>
    withPoller(options(), Effect.gen(function*() {
      server.routes.set("/ig/178414", json({ username: "brand_renamed", id: "178414" }))
      server.routes.set("/ig/900", (req, res) => {
        const fields = new URL(req.url!, "http://x").searchParams.get("fields") ?? ""
        json(fields.includes("(thebrand)") ? account("555", "thebrand") : account("178414", "brand_renamed"))(req, res, "")
      })
      const result = yield* SourcePoller.use((p) => p.poll("photo", "178414", { ...emptyPollState, cursor: { username: "thebrand" } }))
      assert.deepStrictEqual([items(result).length, result.state.cursor], [2, { username: "brand_renamed" }])
    })))

  it.live("Graph errors: unknown user (110) is `gone`, a refused token (190) is `http`", () =>
    withPoller(options(), Effect.gen(function*() {
      server.routes.set("/ig/900", json({ error: { code: 110, message: "Invalid user id" } }, 400))
      assert.strictEqual((yield* flip("photo", "someone")).kind, "gone")
      server.routes.set("/ig/900", json({ error: { code: 190, message: "expired" } }, 400))
      const token = yield* flip("photo", "someone")
      assert.strictEqual(token.kind, "http")
      assert.include(token.message, "access token")
    })))
})

describe("configuration", () => {
  it.effect("SourcePollerHttp.config reads the FEED_* variables and the source credentials", () =>
    Effect.gen(function*() {
      const env = {
        FEED_CONTACT: "https://ops.example.org/feeds", FEED_FETCH_TIMEOUT_MS: "8000", FEED_MAX_BODY_BYTES: "2097152",
        FEED_HOST_CONCURRENCY: "3", FEED_OFFLINE_GRACE_SECONDS: "120", YOUTUBE_API_KEY: "k", X_BEARER_TOKEN: ""
      }
      const o = yield* SourcePollerHttp.config.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
      assert.deepStrictEqual(
        [o.contact, o.userAgent, o.maxBodyBytes, o.hostConcurrency, o.offlineGraceSeconds, Duration.toMillis(Duration.fromInputUnsafe(o.timeout!))],
        ["https://ops.example.org/feeds", undefined, 2097152, 3, 120, 8000]
      )
      assert.deepStrictEqual([o.video !== undefined, o.microblog, o.forum, o.rss], [true, undefined, undefined, { allowPrivateAddresses: false }])
      assert.strictEqual(userAgentOf(o), `${USER_AGENT_PRODUCT} (+https://ops.example.org/feeds)`)
      assert.strictEqual(userAgentOf({ userAgent: "custom/1.0" }), "custom/1.0")
    }))
})

describe("not configured", () => {
  it.live("a module without credentials fails `not-configured`, naming the variables", () =>
    withPoller({}, Effect.gen(function*() {
      const e = yield* flip("video", "UC_x5XG1OV2P6uZZ5FSM9Ttw")
      assert.strictEqual(e.kind, "not-configured")
      assert.include(e.message, "YOUTUBE_API_KEY")
      const many = yield* SourcePoller.use((p) => p.pollMany("photo", [{ identifier: "a", previous: emptyPollState }]))
      assert.strictEqual((many.get("a") as { kind: string }).kind, "not-configured")
    })))
})
