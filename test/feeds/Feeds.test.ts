/**
 * The Feeds service over in-memory fakes (and the SQL repo on every database kind): webhook
 * resolution, identifier and option resolution, duplicates, limits, scoping, audit, and secrecy of
 * webhook tokens.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Redacted, Ref } from "effect"
import { SqlClient } from "effect/sql"
import type { Feed, FeedCreate } from "../../src/domain/Feed.ts"
import type { FeedModuleName } from "../../src/domain/Platform.ts"
import { AppConfigLive } from "../../src/layers/config/AppConfig.ts"
import { FeedsConfigEnv } from "../../src/layers/config/FeedsConfigEnv.ts"
import { Feeds } from "../../src/services/Feeds.ts"
import { DEFAULT_WEBHOOK_URL_PREFIXES, FeedsConfig, parseWebhookPrefixes, parseWebhookUrl } from "../../src/services/FeedsConfig.ts"
import { FeedsRepoSql } from "../../src/layers/sql/FeedsRepoSql.ts"
import { FeedsRepo } from "../../src/services/FeedsRepo.ts"
import { AuditLogMemoryStore } from "../layers/AuditLogMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import {
  access,
  BOT1_ID,
  BOT2_ID,
  ch,
  FEED_URL,
  feedsConfig,
  feedsTestLayer,
  PlatformCalls,
  S1_ID,
  S2_ID,
  S3_ID,
  testCipher,
  WEBHOOK_S1_ID,
  WEBHOOK_S1_TOKEN,
  WEBHOOK_S3_ID,
  WEBHOOK_S3_TOKEN
} from "./fakes.ts"

const A1 = access(BOT2_ID, S1_ID)
const hookUrl = (id: string, token: string, base = "https://discord.com/api") => `${base}/webhooks/${id}/${token}`
const S1_URL = hookUrl(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN)

const create = <M extends FeedModuleName>(module: M, body: FeedCreate<M>, a = A1) => Feeds.use((f) => f.create(a, module, body))
const createFails = <M extends FeedModuleName>(module: M, body: FeedCreate<M>, a = A1) => Effect.flip(create(module, body, a))
const messages = (e: { readonly problems: ReadonlyArray<{ readonly message: string }> }) => e.problems.map((p) => p.message).join(" | ")
const paths = (e: { readonly problems: ReadonlyArray<{ readonly additionalProperties?: Record<string, unknown> }> }) =>
  e.problems.map((p) => p.additionalProperties?.path)

const secrets = [WEBHOOK_S1_TOKEN, WEBHOOK_S3_TOKEN, "created-token-", "secret"]
const assertNoToken = (value: unknown) => {
  const json = JSON.stringify(value)
  for (const s of secrets) assert.notInclude(json, s)
}

type Services = Layer.Success<ReturnType<typeof feedsTestLayer>>
type Provide<R> = <A, E>(self: Effect.Effect<A, E, Services>, config?: Layer.Layer<FeedsConfig>) => Effect.Effect<A, E, R>
type Test<R> = (name: string, self: () => Effect.Effect<unknown, unknown, R>) => void

/** Every service case, registered once per repo kind. Each case builds fresh fakes. */
const registerSuite = <R>(test: Test<R>, provide: Provide<R>) => {
  test("webhook_channel: reuses the webhook the bot owns there; the answer has no token", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("photo", { feed_identifier: "alice.photos", webhook_channel: ch(1, "text") })
      assert.deepStrictEqual(feed, {
        id: feed.id,
        feed_identifier: "7001",
        webhook_options: {
          filter_mode: "OR",
          nsfw: null,
          filter_words: null,
          filter_excl: false,
          filter_event: null,
          custom_header: null,
          "webhook-name": null,
          "no-username-overwrite": false,
          "no-avatar-overwrite": false
        },
        display_info: { user_name: "alice.photos", display_name: "Alice Photos", user_url: "https://photo.test/alice.photos" },
        webhook_info: { name: "FeedsBot S1", avatar: null, channel_id: ch(1, "text") }
      })
      assert.match(feed.id, /^[1-9][0-9]*$/)
      const calls = yield* PlatformCalls
      assert.deepStrictEqual(yield* Ref.get(calls.created), [])
      assertNoToken(feed)
      assertNoToken(yield* Feeds.use((f) => f.list(A1, "photo")))
    })))

  test("webhook_channel without a usable webhook: one is created, named by webhook-name or the default", () =>
    provide(Effect.gen(function*() {
      const a = yield* create("microblog", {
        feed_identifier: "9001",
        webhook_channel: ch(1, "news"),
        webhook_options: { "webhook-name": "Carol's posts" }
      })
      assert.strictEqual(a.webhook_info.name, "Carol's posts")
      assert.strictEqual(a.webhook_info.channel_id, ch(1, "news"))
      const b = yield* create("rss", { feed_identifier: FEED_URL, webhook_channel: ch(1, "text2") })
      assert.strictEqual(b.webhook_info.name, "Feeds")
      // The next feed in that channel reuses the created webhook.
      yield* create("photo", { feed_identifier: "7001", webhook_channel: ch(1, "text2") })
      const calls = yield* PlatformCalls
      assert.deepStrictEqual(yield* Ref.get(calls.created), [
        { channelId: ch(1, "news"), name: "Carol's posts" },
        { channelId: ch(1, "text2"), name: "Feeds" }
      ])
      assertNoToken([a, b])
    })))

  test("the stored token is the Cipher's output, bound to the webhook id", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("video", { feed_identifier: "@carolvideos", webhook_url: S1_URL })
      const stored = yield* FeedsRepo.use((r) => r.find({ botId: BOT2_ID, serverId: S1_ID, module: "video" }, feed.id))
      if (stored._tag === "None") return assert.fail("not stored")
      assert.notInclude(stored.value.webhook.tokenEnc, WEBHOOK_S1_TOKEN)
      const token = yield* testCipher.decrypt(stored.value.webhook.tokenEnc, `feed-webhook:${WEBHOOK_S1_ID}`)
      assert.strictEqual(Redacted.value(token), WEBHOOK_S1_TOKEN)
    })))

  test("bot without MANAGE_WEBHOOKS → 403 naming MANAGE_WEBHOOKS", () =>
    provide(Effect.gen(function*() {
      const e = yield* createFails("photo", { feed_identifier: "7001", webhook_channel: ch(2, "text") }, access(BOT1_ID, S2_ID))
      assert.strictEqual(e._tag, "Forbidden")
      if (e._tag !== "Forbidden") return
      assert.include(messages(e), "MANAGE_WEBHOOKS")
    })))

  test("webhook_channel must be a text or news channel of the server", () =>
    provide(Effect.gen(function*() {
      for (const channel of [ch(3, "text"), ch(1, "voice"), ch(1, "category"), "999"]) {
        const e = yield* createFails("photo", { feed_identifier: "7001", webhook_channel: channel })
        assert.strictEqual(e._tag, "BadRequest", channel)
        if (e._tag === "BadRequest") assert.deepStrictEqual(paths(e), ["webhook_channel"])
      }
    })))

  test("webhook_url: accepted on every platform host and API version; anything else → 400", () =>
    provide(Effect.gen(function*() {
      const ok = [
        S1_URL,
        hookUrl(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, "https://discordapp.com/api"),
        hookUrl(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, "https://canary.discord.com/api/v10"),
        hookUrl(WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, "https://ptb.discord.com/api/v9")
      ]
      for (const [i, url] of ok.entries()) {
        // Different identifiers: the same one on the same webhook would be a duplicate.
        const id = ["7001", "alice.photos", "Alice Photos"][i]
        if (id === undefined) {
          yield* create("rss", { feed_identifier: FEED_URL, webhook_url: url })
        } else {
          yield* create(i === 0 ? "photo" : i === 1 ? "microblog" : "video", {
            feed_identifier: i === 0 ? "7001" : i === 1 ? "carol" : "UCabc123",
            webhook_url: url
          })
        }
      }
      const bad = [
        "not a url",
        `http://discord.com/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`,
        `https://discord.com.evil.test/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`,
        `https://evil.test/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`,
        `https://discord.com/api/webhooks/${WEBHOOK_S1_ID}`,
        `https://discord.com/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}/github`,
        `https://discord.com/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}?wait=true`,
        `https://discord.com/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`,
        `https://user:pw@discord.com/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`
      ]
      for (const url of bad) {
        const e = yield* createFails("photo", { feed_identifier: "7001", webhook_url: url })
        assert.strictEqual(e._tag, "BadRequest", url)
        if (e._tag === "BadRequest") {
          assert.deepStrictEqual(paths(e), ["webhook_url"])
          assert.notInclude(messages(e), WEBHOOK_S1_TOKEN)
        }
      }
    })))

  test("webhook_url of a deleted or unknown webhook → 400 saying so", () =>
    provide(Effect.gen(function*() {
      const e = yield* createFails("photo", { feed_identifier: "7001", webhook_url: hookUrl(WEBHOOK_S1_ID, "wrong-token") })
      assert.strictEqual(e._tag, "BadRequest")
      if (e._tag === "BadRequest") assert.include(messages(e), "deleted")
    })))

  test("a webhook of another server → 400", () =>
    provide(Effect.gen(function*() {
      const e = yield* createFails("photo", { feed_identifier: "7001", webhook_url: hookUrl(WEBHOOK_S3_ID, WEBHOOK_S3_TOKEN) })
      assert.strictEqual(e._tag, "BadRequest")
      if (e._tag === "BadRequest") {
        assert.include(messages(e), "another server")
        assert.notInclude(messages(e), WEBHOOK_S3_TOKEN)
      }
    })))

  test("webhook_url and webhook_channel: the webhook must belong to that channel", () =>
    provide(Effect.gen(function*() {
      const e = yield* createFails("photo", { feed_identifier: "7001", webhook_url: S1_URL, webhook_channel: ch(1, "news") })
      assert.strictEqual(e._tag, "BadRequest")
      if (e._tag === "BadRequest") assert.deepStrictEqual(paths(e), ["webhook_channel"])
      const ok = yield* create("photo", { feed_identifier: "7001", webhook_url: S1_URL, webhook_channel: ch(1, "text") })
      assert.strictEqual(ok.webhook_info.channel_id, ch(1, "text"))
      const calls = yield* PlatformCalls
      assert.deepStrictEqual(yield* Ref.get(calls.created), [])
    })))

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

  test("update replaces the options: omitted options return to their defaults; game_names follow filter_game", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("streaming", {
        feed_identifier: "8001",
        webhook_channel: ch(1, "text"),
        webhook_options: { filter_game: ["Fortnite"], custom_header: "LIVE", "no-avatar-overwrite": true }
      })
      assert.deepStrictEqual(feed.display_info?.game_names, ["Fortnite"])
      const updated = yield* Feeds.use((f) => f.update(A1, "streaming", feed.id, { filter_event: ["offline"], "webhook-name": "x".repeat(32) }))
      assert.deepStrictEqual(updated, {
        ...feed,
        webhook_options: {
          filter_event: ["offline"],
          filter_game: null,
          custom_header: null,
          "webhook-name": "x".repeat(32),
          "no-username-overwrite": false,
          "no-avatar-overwrite": false
        },
        display_info: { ...feed.display_info!, game_names: null }
      })
      const again = yield* Feeds.use((f) => f.update(A1, "streaming", feed.id, { filter_game: ["509658"] }))
      assert.deepStrictEqual(again.display_info?.game_names, ["Just Chatting"])
      assert.deepStrictEqual(again.webhook_options.filter_game, ["509658"])
      const bad = yield* Effect.flip(Feeds.use((f) => f.update(A1, "streaming", feed.id, { filter_game: ["Nope"] })))
      assert.strictEqual(bad._tag, "BadRequest")
      const listed = yield* Feeds.use((f) => f.list(A1, "streaming"))
      assert.deepStrictEqual(listed, [again])
      assertNoToken(listed)
    })))

  test("update and delete of an unknown feed, or one of another server, bot or module → 404", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("photo", { feed_identifier: "7001", webhook_channel: ch(1, "text") })
      const others: ReadonlyArray<readonly [ReturnType<typeof access>, FeedModuleName, string]> = [
        [access(BOT2_ID, S3_ID), "photo", feed.id],
        [access(BOT1_ID, S1_ID), "photo", feed.id],
        [A1, "video", feed.id],
        [A1, "photo", "999999"]
      ]
      for (const [a, m, id] of others) {
        assert.strictEqual((yield* Effect.flip(Feeds.use((f) => f.update(a, m, id, {}))))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(Feeds.use((f) => f.remove(a, m, id))))._tag, "NotFound")
        if (a !== A1 || m !== "photo") {
          assert.deepStrictEqual((yield* Feeds.use((f) => f.list(a, m))).map((x: Feed) => x.id), [])
        }
      }
      yield* Feeds.use((f) => f.remove(A1, "photo", feed.id))
      assert.strictEqual((yield* Effect.flip(Feeds.use((f) => f.remove(A1, "photo", feed.id))))._tag, "NotFound")
      assert.deepStrictEqual(yield* Feeds.use((f) => f.list(A1, "photo")), [])
    })))

  test("audit: PUSH, PATCH, DELETE with the module and the numeric id; nothing about the token", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("microblog", { feed_identifier: "carol", webhook_url: S1_URL })
      yield* Feeds.use((f) => f.update(A1, "microblog", feed.id, { filter_mode: "AND" }))
      yield* Feeds.use((f) => f.remove(A1, "microblog", feed.id))
      const store = yield* AuditLogMemoryStore
      const entries = yield* Ref.get(store.entries)
      assert.deepStrictEqual(
        entries.map((e) => [e.eventType, e.module, e.itemIdentifier, e.botId, e.serverId, e.userId]),
        ["PUSH", "PATCH", "DELETE"].map((t) => [t, "microblog", Number(feed.id), BOT2_ID, S1_ID, A1.actor.userId])
      )
      for (const e of entries) assert.include(e.eventString, `microblog feed ${feed.id}`)
      assertNoToken(entries)
    })))

  test("audit unavailable: the change is not made (one transaction)", () =>
    provide(Effect.gen(function*() {
      const store = yield* AuditLogMemoryStore
      yield* Ref.set(store.unavailable, true)
      const e = yield* createFails("photo", { feed_identifier: "7001", webhook_channel: ch(1, "text") })
      assert.strictEqual(e._tag, "ServiceUnavailable")
      yield* Ref.set(store.unavailable, false)
      assert.deepStrictEqual(yield* Feeds.use((f) => f.list(A1, "photo")), [])
      const feed = yield* create("photo", { feed_identifier: "7001", webhook_channel: ch(1, "text") })
      yield* Ref.set(store.unavailable, true)
      assert.strictEqual((yield* Effect.flip(Feeds.use((f) => f.remove(A1, "photo", feed.id))))._tag, "ServiceUnavailable")
      yield* Ref.set(store.unavailable, false)
      assert.strictEqual((yield* Feeds.use((f) => f.list(A1, "photo"))).length, 1)
    })))

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
}

describe("Feeds service (memory repo)", () => {
  registerSuite<never>((name, self) => it.effect(name, self), (self, config) => Effect.provide(self, feedsTestLayer(config)))
})

for (const kind of dbKinds) {
  layer(testDb(kind), { excludeTestServices: true })(`Feeds service (${kind} repo)`, (it) => {
    // One database per kind; each case starts from an empty feeds table (cases run one at a time).
    const clear = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM feeds`)
    registerSuite<SqlClient.SqlClient>(
      (name, self) => it.effect(name, self),
      (self, config) => Effect.andThen(Effect.orDie(clear), Effect.provide(self, feedsTestLayer(config, FeedsRepoSql)))
    )
  })
}

describe("parseWebhookUrl", () => {
  it("accepts configured bases (the sandbox's too) and nothing else", () => {
    const prefixes = parseWebhookPrefixes([...DEFAULT_WEBHOOK_URL_PREFIXES, "http://127.0.0.1:8080/sandbox/discord/api/v10"])
    assert.deepStrictEqual(
      Option.getOrThrow(parseWebhookUrl("http://127.0.0.1:8080/sandbox/discord/api/v10/webhooks/123/abc-DEF_1", prefixes)),
      { id: "123", token: "abc-DEF_1" }
    )
    assert.strictEqual(parseWebhookUrl("http://127.0.0.1:8080/sandbox/discord/api/webhooks/123/abc", prefixes)._tag, "Some")
    assert.strictEqual(parseWebhookUrl("http://127.0.0.1:8081/sandbox/discord/api/webhooks/123/abc", prefixes)._tag, "None")
    assert.strictEqual(parseWebhookUrl("https://DISCORD.com/api/webhooks/123/abc", prefixes)._tag, "Some")
    assert.strictEqual(parseWebhookUrl("http://127.0.0.1:8080/webhooks/123/abc", prefixes)._tag, "None")
    assert.strictEqual(parseWebhookUrl("https://discord.com/api/webhooks/123/abc", parseWebhookPrefixes([]))._tag, "None")
  })
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
