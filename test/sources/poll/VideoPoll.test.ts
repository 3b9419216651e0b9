/**
 * The video connector (YouTube) against a fake platform API served by a node:http server: uploads
 * give exactly the expected items (duration, tags, age restriction, `updated` on a new title), the
 * requests carry the documented parameters and the key, an unknown channel is `gone`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { emptyPollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"
import { textHash } from "../../../src/layers/sources/poll/VideoPoller.ts"
import { json, withPoller, pollServerForFile } from "./PollServerFixtures.ts"
import { flip, items, platformOptions } from "./PlatformPollsFixtures.ts"

const server = pollServerForFile()

const options = () => platformOptions(server.url)

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
