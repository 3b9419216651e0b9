/**
 * The Feeds service's resolution of what a create names, over in-memory fakes and the SQL repo on
 * every database kind: feed_identifier to the external id, filter_game and filter_flair to the
 * source's own, every problem in one 400, duplicates, the per-module limit, the lookups; and
 * FeedsConfigEnv (the limit and webhook URL prefixes). Webhooks: FeedsWebhooks.test.ts; updates,
 * deletes and audit: FeedsChanges.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Result } from "effect"
import { AppConfigLive } from "../../src/layers/config/AppConfig.ts"
import { FeedsConfigEnv } from "../../src/layers/config/FeedsConfigEnv.ts"
import { Feeds } from "../../src/services/feeds/Feeds.ts"
import { DEFAULT_WEBHOOK_URL_PREFIXES, FeedsConfig, parseWebhookPrefixes, parseWebhookUrl } from "../../src/services/feeds/FeedsConfig.ts"
import { access, BOT2_ID, ch, FEED_URL, feedsConfig, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN } from "./FeedsFakeFixtures.ts"
import { A1, create, createFails, feedsService, hookUrl, messages, paths, S1_URL } from "./FeedsFixtures.ts"

feedsService("identifiers, options and limits", (test, provide) => {
  test("feed_identifier: resolved to the external id; unknown → 400 naming it; source faults pass through", () =>
    provide(Effect.gen(function*() {
      const s = yield* create("streaming", { feed_identifier: "BobStreams", webhook_channel: ch(1, "text") })
      assert.strictEqual(s.feed_identifier, "8001")
      assert.deepStrictEqual(s.display_info, {
        user_name: "bobstreams",
        display_name: "BobStreams",
        user_url: "https://stream.test/bobstreams",
        game_names: null
      })
      const v = yield* create("video", { feed_identifier: "Carol Videos", webhook_channel: ch(1, "text") })
      assert.strictEqual(v.feed_identifier, "UCabc123")
      assert.strictEqual(v.display_info?.user_name, "@carolvideos")
      const forum = yield* create("forum", { feed_identifier: "r/Effect", webhook_channel: ch(1, "text") })
      assert.strictEqual(forum.feed_identifier, "effect")
      assert.notProperty(forum, "display_info")
      const rss = yield* create("rss", { feed_identifier: FEED_URL, webhook_channel: ch(1, "text") })
      assert.strictEqual(rss.feed_identifier, FEED_URL)
      assert.notProperty(rss, "display_info")

      for (const [module, input] of [["photo", "nobody"], ["forum", "nosuchforum"], ["rss", "https://blog.test/page.html"], ["rss", "https://nowhere.test/"]] as const) {
        const e = yield* createFails(module, { feed_identifier: input, webhook_channel: ch(1, "text") })
        assert.strictEqual(e._tag, "BadRequest", `${module} ${input}`)
        if (e._tag === "BadRequest") assert.deepStrictEqual(paths(e), ["feed_identifier"])
      }
      assert.strictEqual((yield* createFails("photo", { feed_identifier: "down", webhook_channel: ch(1, "text") }))._tag, "ServiceUnavailable")
      assert.strictEqual((yield* createFails("forum", { feed_identifier: "slow", webhook_channel: ch(1, "text") }))._tag, "RequestTimeout")
    })))

  test("every problem of a create is reported together", () =>
    provide(Effect.gen(function*() {
      const e = yield* createFails("streaming", {
        feed_identifier: "nobody",
        webhook_channel: ch(1, "text"),
        webhook_options: { filter_game: ["Fortnite", "No Such Game", "Nor This"] }
      })
      assert.strictEqual(e._tag, "BadRequest")
      if (e._tag === "BadRequest") {
        assert.deepStrictEqual(paths(e), ["feed_identifier", "webhook_options.filter_game[1]", "webhook_options.filter_game[2]"])
      }
    })))

  test("filter_game: names and ids are stored as ids; game_names follow; unknown game → 400 naming filter_game", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("streaming", {
        feed_identifier: "8001",
        webhook_channel: ch(1, "text"),
        webhook_options: { filter_game: ["fortnite", "509658", "33214"], filter_event: ["live"] }
      })
      assert.deepStrictEqual(feed.webhook_options.filter_game, ["33214", "509658"])
      assert.deepStrictEqual(feed.display_info?.game_names, ["Fortnite", "Just Chatting"])
      const e = yield* createFails("streaming", {
        feed_identifier: "8001",
        webhook_channel: ch(1, "news"),
        webhook_options: { filter_game: ["Nope"] }
      })
      assert.strictEqual(e._tag, "BadRequest")
      if (e._tag === "BadRequest") {
        assert.include(messages(e), "filter_game")
        assert.deepStrictEqual(paths(e), ["webhook_options.filter_game[0]"])
      }
      const down = yield* createFails("streaming", {
        feed_identifier: "8001",
        webhook_channel: ch(1, "news"),
        webhook_options: { filter_game: ["down"] }
      })
      assert.strictEqual(down._tag, "ServiceUnavailable")
    })))

  test("filter_flair: checked against the forum's flairs when it lists some, stored in its spelling", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("forum", {
        feed_identifier: "effect",
        webhook_channel: ch(1, "text"),
        webhook_options: { filter_flair: ["news", "QUESTION"] }
      })
      assert.deepStrictEqual(feed.webhook_options.filter_flair, ["News", "Question"])
      const e = yield* createFails("forum", {
        feed_identifier: "effect",
        webhook_channel: ch(1, "news"),
        webhook_options: { filter_flair: ["News", "Memes"] }
      })
      assert.strictEqual(e._tag, "BadRequest")
      if (e._tag === "BadRequest") assert.deepStrictEqual(paths(e), ["webhook_options.filter_flair[1]"])
      // A forum that lists no flairs cannot be checked: the filter is kept as given.
      const quiet = yield* create("forum", {
        feed_identifier: "quiet",
        webhook_channel: ch(1, "text"),
        webhook_options: { filter_flair: ["Anything"] }
      })
      assert.deepStrictEqual(quiet.webhook_options.filter_flair, ["Anything"])
    })))

  test("the same identifier on the same webhook twice in a module → 400; another module or webhook is fine", () =>
    provide(Effect.gen(function*() {
      yield* create("photo", { feed_identifier: "7001", webhook_channel: ch(1, "text") })
      // By name this time, and through the URL of the same webhook.
      const e = yield* createFails("photo", { feed_identifier: "alice.photos", webhook_url: S1_URL })
      assert.strictEqual(e._tag, "BadRequest")
      if (e._tag === "BadRequest") assert.deepStrictEqual(paths(e), ["feed_identifier"])
      yield* create("photo", { feed_identifier: "7001", webhook_channel: ch(1, "news") })
      yield* create("video", { feed_identifier: "UCabc123", webhook_channel: ch(1, "text") })
      assert.strictEqual((yield* Feeds.use((f) => f.list(A1, "photo"))).length, 2)
    })))

  test("limit per module per server: at the limit ok, one past → 400; other modules and servers unaffected", () =>
    provide(
      Effect.gen(function*() {
        const channels = [ch(1, "text"), ch(1, "text2"), ch(1, "news")]
        for (const c of channels) yield* create("rss", { feed_identifier: FEED_URL, webhook_channel: c })
        const e = yield* createFails("rss", { feed_identifier: FEED_URL, webhook_url: hookUrl(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN) })
        assert.strictEqual(e._tag, "BadRequest")
        if (e._tag === "BadRequest") assert.include(messages(e), "3 rss feeds")
        yield* create("photo", { feed_identifier: "7001", webhook_channel: ch(1, "text") })
        yield* create("rss", { feed_identifier: FEED_URL, webhook_channel: ch(4, "text") }, access(BOT2_ID, "300000000000000004"))
      }),
      feedsConfig({ maxFeedsPerModule: 3 })
    ))

  test("a body its schema refused: its problems and every check's 400 (the limit too) in one, nothing written; a fault still wins", () =>
    provide(
      Effect.gen(function*() {
        const schema = { message: "webhook_options.nsfw: expected one of …", additionalProperties: { path: "webhook_options.nsfw", in: "payload" } }
        const refused = (module: "rss" | "photo", body: unknown) =>
          Effect.flip(Feeds.use((f) => f.create(A1, module, Result.fail({ body, problems: [schema] }))))
        for (const c of [ch(1, "text"), ch(1, "text2")]) yield* create("rss", { feed_identifier: FEED_URL, webhook_channel: c })
        const e = yield* refused("rss", { feed_identifier: "https://nowhere.test/", webhook_channel: ch(1, "voice"), webhook_options: { nsfw: 1 } })
        assert.strictEqual(e._tag, "BadRequest")
        if (e._tag === "BadRequest") {
          // The schema's problem first, then the source's, the limit's (no path) and the channel's.
          assert.deepStrictEqual(paths(e), ["webhook_options.nsfw", "feed_identifier", undefined, "webhook_channel"])
          assert.include(messages(e), "2 rss feeds")
        }
        // Every check passes: the schema's problems alone, and still nothing is written.
        const alone = yield* refused("photo", { feed_identifier: "7001", webhook_channel: ch(1, "text"), webhook_options: { nsfw: 1 } })
        assert.deepStrictEqual(alone._tag === "BadRequest" ? alone.problems : alone, [schema])
        assert.strictEqual((yield* Feeds.use((f) => f.list(A1, "rss"))).length, 2)
        assert.strictEqual((yield* Feeds.use((f) => f.list(A1, "photo"))).length, 0)
        // A source that is down answers 503, whatever else the body has.
        assert.strictEqual((yield* refused("photo", { feed_identifier: "down", webhook_channel: ch(1, "text") }))._tag, "ServiceUnavailable")
      }),
      feedsConfig({ maxFeedsPerModule: 2 })
    ))

  test("lookups: getUserId and getGameId; not found → 404, faults as the source reports them", () =>
    provide(Effect.gen(function*() {
      const feeds = yield* Feeds
      assert.deepStrictEqual(yield* feeds.getUserId("photo", "alice.photos"), {
        userId: "7001",
        userName: "alice.photos",
        displayName: "Alice Photos"
      })
      assert.deepStrictEqual(yield* feeds.getUserId("video", "Carol Videos"), {
        userId: "UCabc123",
        userName: "@carolvideos",
        displayName: "Carol Videos"
      })
      assert.deepStrictEqual(yield* feeds.getGameId("Fortnite"), { gameId: "33214", gameName: "Fortnite" })
      assert.strictEqual((yield* Effect.flip(feeds.getUserId("microblog", "nobody")))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(feeds.getGameId("Nope")))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(feeds.getUserId("streaming", "down")))._tag, "ServiceUnavailable")
      assert.strictEqual((yield* Effect.flip(feeds.getGameId("slow")))._tag, "RequestTimeout")
    })))
})

describe("FeedsConfigEnv", () => {
  const load = (env: Record<string, string>) =>
    Effect.gen(function*() {
      return yield* FeedsConfig
    }).pipe(
      Effect.provide(FeedsConfigEnv.pipe(
        Layer.provide(AppConfigLive),
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
      ))
    )

  it.effect("defaults: 50 feeds, the platform's hosts, plus the sandbox's in sandbox mode", () =>
    Effect.gen(function*() {
      const c = yield* load({ SANDBOX: "true", PUBLIC_URL: "http://127.0.0.1:9000" })
      assert.strictEqual(c.maxFeedsPerModule, 50)
      assert.deepStrictEqual(c.webhookUrlPrefixes.slice(0, 4), [...DEFAULT_WEBHOOK_URL_PREFIXES])
      assert.include(c.webhookUrlPrefixes, "http://127.0.0.1:9000/sandbox/discord/api")
      const prefixes = parseWebhookPrefixes(c.webhookUrlPrefixes)
      assert.strictEqual(parseWebhookUrl("http://127.0.0.1:9000/sandbox/discord/api/v10/webhooks/1/t", prefixes)._tag, "Some")
    }))

  it.effect("configurable limit and prefixes; bad values stop start-up naming the variable", () =>
    Effect.gen(function*() {
      const c = yield* load({ SANDBOX: "true", FEEDS_MAX_PER_MODULE: "7", WEBHOOK_URL_PREFIXES: "https://chat.example/api" })
      assert.strictEqual(c.maxFeedsPerModule, 7)
      assert.strictEqual(c.webhookUrlPrefixes[0], "https://chat.example/api")
      assert.notInclude(c.webhookUrlPrefixes, "https://discord.com/api")
      const zero = yield* Effect.flip(load({ SANDBOX: "true", FEEDS_MAX_PER_MODULE: "0" }))
      assert.include(String(zero.message), "FEEDS_MAX_PER_MODULE")
      const bad = yield* Effect.flip(load({ SANDBOX: "true", WEBHOOK_URL_PREFIXES: "ftp://x" }))
      assert.include(String(bad.message), "WEBHOOK_URL_PREFIXES")
    }))
})
