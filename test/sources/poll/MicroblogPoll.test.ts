/**
 * The microblog connector (X) against a fake platform API served by a node:http server: a timeline
 * gives exactly the expected posts (media, unescaped and long text), the request excludes replies and
 * reposts, and the platform's refusals become PollFailed of the right kind.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { emptyPollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"
import { json, withPoller, pollServerForFile } from "./PollServerFixtures.ts"
import { flip, items, platformOptions } from "./PlatformPollsFixtures.ts"

const server = pollServerForFile()

const options = () => platformOptions(server.url)

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
