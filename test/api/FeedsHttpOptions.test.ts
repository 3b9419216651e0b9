/**
 * The feed-connector modules' options over HTTP, on a real database: names resolved to ids (games,
 * flairs), every problem of a body in one 400 naming its path, repeated elements, the fields a PATCH
 * may not change; and the lookups (getUserId, getGameId). Creates, webhooks and secrecy:
 * FeedsHttpWrites.test.ts; a source that times out or is down: FeedsHttpOutages.test.ts.
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { channelId } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { TestApp } from "../utils/TestApp.ts"
import { assertBad, call, feedsOverHttp, modulePath, webhookCreations } from "./FeedsHttpFixtures.ts"
import type { FeedModule } from "./FeedsHttpFixtures.ts"

feedsOverHttp("options and lookups", (it) => {
  describe("options and immutability", () => {
    it.effect("streaming filter_game: names resolve to ids, game_names shown; an unknown game → 400 naming it", () =>
      Effect.gen(function*() {
        const r = yield* call("POST", `${modulePath("streaming")}/feeds`, {
          feed_identifier: "speedrunsam",
          webhook_channel: channelId(1, 2),
          webhook_options: { filter_game: ["Minecraft", "33214"] }
        })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.deepStrictEqual(r.body.webhook_options.filter_game, ["27471", "33214"])
        assert.deepStrictEqual(r.body.display_info.game_names, ["Minecraft", "Fortnite"])
        const bad = yield* call("POST", `${modulePath("streaming")}/feeds`, {
          feed_identifier: "pixelpainter",
          webhook_channel: channelId(1, 2),
          webhook_options: { filter_game: ["Minecraft", "No Such Game"] }
        })
        assertBad(bad, "webhook_options.filter_game[1]", "unknown game")
        const patched = yield* call("PATCH", `${modulePath("streaming")}/feeds/${r.body.id}`, { webhook_options: {} })
        assert.strictEqual(patched.body.webhook_options.filter_game, null)
        assert.strictEqual(patched.body.display_info.game_names, null)
      }))

    it.effect("every problem in one answer: unknown user, unknown game and a voice webhook_channel", () =>
      Effect.gen(function*() {
        const before = yield* webhookCreations
        const r = yield* call("POST", `${modulePath("streaming")}/feeds`, {
          feed_identifier: "nosuchstreamer",
          webhook_channel: channelId(1, 5),
          webhook_options: { filter_game: ["No Such Game"] }
        })
        assertBad(r, "feed_identifier", "unknown user")
        assertBad(r, "webhook_options.filter_game[0]", "unknown game")
        assertBad(r, "webhook_channel", "voice channel")
        assert.strictEqual(r.body.errors.length, 3, JSON.stringify(r.body))
        // A bad webhook_url is reported with the source's problems too, and nothing was created.
        const url = yield* call("POST", `${modulePath("streaming")}/feeds`, {
          feed_identifier: "nosuchstreamer",
          webhook_url: "not a url"
        })
        assertBad(url, "feed_identifier", "unknown user (url)")
        assertBad(url, "webhook_url", "bad webhook_url")
        assert.strictEqual(yield* webhookCreations, before)
      }))

    it.effect("an unknown option, an option of another module, a value outside its rule, an extra key → 400 naming it", () =>
      Effect.gen(function*() {
        const url = `${(yield* TestApp).url}${RSS_PATHS.atom}`
        const post = (options: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
          call("POST", `${modulePath("rss")}/feeds`, { feed_identifier: url, webhook_channel: channelId(1, 2), webhook_options: options, ...extra })
        assertBad(yield* post({ bogus: true }), "webhook_options.bogus", "unknown option")
        assertBad(yield* post({ filter_event: ["post"] }), "webhook_options.filter_event", "other module's option")
        assertBad(yield* post({ filter_flair: ["News"] }), "webhook_options.filter_flair", "forum option on rss")
        assertBad(yield* post({ "webhook-name": "x".repeat(33) }), "webhook_options.webhook-name", "webhook-name too long")
        assertBad(yield* post({ custom_header: "x".repeat(1025) }), "webhook_options.custom_header", "custom_header too long")
        assertBad(yield* post({ filter_mode: "XOR" }), "webhook_options.filter_mode", "filter_mode")
        assertBad(yield* post({ nsfw: "maybe" }), "webhook_options.nsfw", "nsfw")
        assertBad(yield* post({}, { colour: "red" }), "colour", "extra key")
        const several = yield* post({ bogus: 1, filter_mode: "XOR" })
        assert.strictEqual(several.status, 400)
        assert.isAtLeast(several.body.errors.length, 2, JSON.stringify(several.body))
        const photo = yield* call("POST", `${modulePath("photo")}/feeds`, {
          feed_identifier: "sandboxphotos",
          webhook_channel: channelId(1, 2),
          webhook_options: { filter_event: ["live"] }
        })
        assertBad(photo, "webhook_options.filter_event[0]", "photo event")
        // Forum flairs are checked against the forum's own list (case-insensitively, stored in its spelling).
        const flair = (flairs: ReadonlyArray<string>) =>
          call("POST", `${modulePath("forum")}/feeds`, {
            feed_identifier: "SandboxNews",
            webhook_channel: channelId(1, 3),
            webhook_options: { filter_flair: flairs }
          })
        assertBad(yield* flair(["Tech", "Gossip"]), "webhook_options.filter_flair[1]", "unknown flair")
        const okFlair = yield* flair(["tech"])
        assert.strictEqual(okFlair.status, 200, JSON.stringify(okFlair.body))
        assert.deepStrictEqual(okFlair.body.webhook_options.filter_flair, ["Tech"])
      }))

    it.effect("a repeated element of a list option → 400 naming it; no message names an internal schema", () =>
      Effect.gen(function*() {
        const events = yield* call("POST", `${modulePath("video")}/feeds`, {
          feed_identifier: "Sandbox Channel",
          webhook_channel: channelId(1, 2),
          webhook_options: { filter_event: ["added", "added"], filter_words: ["cat", " Cat"] }
        })
        assertBad(events, "webhook_options.filter_event[1]", "repeated event")
        assertBad(events, "webhook_options.filter_words[1]", "repeated word")
        assert.include(events.body.errors.map((e: { message: string }) => e.message).join("\n"), "filter_event")
        const games = yield* call("POST", `${modulePath("streaming")}/feeds`, {
          feed_identifier: "speedrunsam",
          webhook_channel: channelId(1, 2),
          webhook_options: { filter_game: ["Minecraft", "minecraft"] }
        })
        assertBad(games, "webhook_options.filter_game[1]", "repeated game")
        const url = `${(yield* TestApp).url}${RSS_PATHS.atom}`
        const shapes = [
          { feed_identifier: url, webhook_channel: channelId(1, 2), webhook_options: "nope" },
          { feed_identifier: url, webhook_channel: channelId(1, 2), webhook_options: null },
          { feed_identifier: 5, webhook_channel: 7, webhook_options: { filter_mode: 3, nsfw: 1, filter_words: "a" } },
          "a string"
        ]
        for (const body of shapes) {
          const r = yield* call("POST", `${modulePath("rss")}/feeds`, body)
          assert.strictEqual(r.status, 400, JSON.stringify(r.body))
          for (const e of r.body.errors as Array<{ message: string }>) {
            assert.notMatch(e.message, /[a-z]+_webhook_options|_feed_(create|update)|_input\b|Expected [a-z]+ \|/, e.message)
          }
        }
        const object = yield* call("POST", `${modulePath("rss")}/feeds`, shapes[0])
        assertBad(object, "webhook_options", "not an object")
        assert.include(object.body.errors[0].message, "expected an object")
      }))

    it.effect("PATCH with feed_identifier, webhook_channel or webhook_url, or without webhook_options → 400", () =>
      Effect.gen(function*() {
        const url = `${(yield* TestApp).url}${RSS_PATHS.rss}`
        const created = yield* call("POST", `${modulePath("rss")}/feeds`, { feed_identifier: url, webhook_channel: channelId(1, 3) })
        assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        const path = `${modulePath("rss")}/feeds/${created.body.id}`
        assertBad(yield* call("PATCH", path, { webhook_options: {}, feed_identifier: url }), "feed_identifier", "feed_identifier")
        assertBad(yield* call("PATCH", path, { webhook_options: {}, webhook_channel: channelId(1, 2) }), "webhook_channel", "webhook_channel")
        assertBad(yield* call("PATCH", path, { webhook_options: {}, webhook_url: "https://discord.com/api/webhooks/1/x" }), "webhook_url", "webhook_url")
        assertBad(yield* call("PATCH", path, {}), "webhook_options", "no options")
        assertBad(yield* call("PATCH", path, { webhook_options: { filter_game: ["x"] } }), "webhook_options.filter_game", "patch foreign option")
        const bad = yield* call("PATCH", `${modulePath("rss")}/feeds/abc`, { webhook_options: {} })
        assertBad(bad, "feedId", "feed id")
        const still = yield* call("GET", `${modulePath("rss")}/feeds`)
        assert.deepStrictEqual(still.body.feeds.find((f: { id: string }) => f.id === created.body.id), created.body)
      }))
  })

  describe("lookups", () => {
    it.effect("getUserId finds users and channels, 404 otherwise; getGameId finds games, 404 otherwise", () =>
      Effect.gen(function*() {
        const found: ReadonlyArray<readonly [FeedModule, string, Record<string, string>]> = [
          ["photo", "sandboxphotos", { userId: "17841400000000101", userName: "sandboxphotos", displayName: "Sandbox Photos" }],
          ["streaming", "SandboxStreamer", { userId: "41000001", userName: "sandboxstreamer", displayName: "SandboxStreamer" }],
          ["microblog", "gatewaynews", { userId: "1500000000000000002", userName: "gatewaynews", displayName: "Gateway News" }],
          ["video", "UCsandbox000000000000003", { userId: "UCsandbox000000000000003", userName: "@sandboxmusic", displayName: "Sandbox Music" }],
          ["video", "Sandbox Cooking", { userId: "UCsandbox000000000000002", userName: "UCsandbox000000000000002", displayName: "Sandbox Cooking" }]
        ]
        for (const [m, name, expected] of found) {
          const r = yield* call("GET", `${modulePath(m)}/getUserId/${encodeURIComponent(name)}`)
          assert.strictEqual(r.status, 200, `${m} ${name}: ${JSON.stringify(r.body)}`)
          assert.deepStrictEqual(r.body, expected)
        }
        for (const m of ["photo", "streaming", "microblog", "video"] as const) {
          const r = yield* call("GET", `${modulePath(m)}/getUserId/nosuchuserxyz`)
          assert.strictEqual(r.status, 404, `${m}: ${JSON.stringify(r.body)}`)
          assert.strictEqual(r.body.errors[0].code, "Not Found")
        }
        const game = yield* call("GET", `${modulePath("streaming")}/getGameId/${encodeURIComponent("Just Chatting")}`)
        assert.strictEqual(game.status, 200, JSON.stringify(game.body))
        assert.deepStrictEqual(game.body, { gameId: "509658", gameName: "Just Chatting" })
        const noGame = yield* call("GET", `${modulePath("streaming")}/getGameId/${encodeURIComponent("No Such Game")}`)
        assert.strictEqual(noGame.status, 404, JSON.stringify(noGame.body))
        // forum and rss have no lookups.
        assert.strictEqual((yield* call("GET", `${modulePath("forum")}/getUserId/x`)).status, 404)
        assert.strictEqual((yield* call("GET", `${modulePath("photo")}/getGameId/x`)).status, 404)
      }))
  })
})
