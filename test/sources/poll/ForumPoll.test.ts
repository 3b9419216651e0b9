/**
 * The forum connector (Reddit) against a fake platform API served by a node:http server: a listing
 * gives exactly the expected posts, the requests carry the documented parameters and credentials
 * (an app token, refreshed on a 401), and private, banned or unknown subreddits are `gone`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { emptyPollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"
import { USER_AGENT_PRODUCT } from "../../../src/domain/infra/Version.ts"
import { json, withPoller, pollServerForFile } from "./PollServerFixtures.ts"
import { flip, items, platformOptions } from "./PlatformPollsFixtures.ts"

const server = pollServerForFile()

const options = () => platformOptions(server.url)

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
            url: "https://www.reddit.com/r/typescript/comments/abc2/question/", created_utc: 1717246800.5, is_self: true,
            selftext: "  How do I **narrow** a union?\n\nSee [the docs](https://example.com/docs).  "
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

  it.live("a listing → its posts (permalink, flair, over_18, link or self, a self post's text), with the subreddit icon", () =>
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
          selfText: null,
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
          selfText: "How do I **narrow** a union?\n\nSee [the docs](https://example.com/docs).",
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
