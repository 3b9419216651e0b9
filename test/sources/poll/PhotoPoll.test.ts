/**
 * The photo connector (Instagram) against a fake platform API served by a node:http server: business
 * discovery gives exactly the expected media items, the account's name is kept in the cursor and read
 * again from the id when it changes hands, and Graph errors become PollFailed of the right kind.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { emptyPollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"
import { json, withPoller, pollServerForFile } from "./PollServerFixtures.ts"
import { flip, items, platformOptions } from "./PlatformPollsFixtures.ts"

const server = pollServerForFile()

const options = () => platformOptions(server.url)

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
