/**
 * The Feeds service's webhooks, over in-memory fakes and the SQL repo on every database kind:
 * webhook_channel (reuse, creation, the channel rules), webhook_url (hosts and versions, a deleted
 * webhook, another server's, one of another channel), the token stored encrypted and never shown,
 * 403 without MANAGE_WEBHOOKS; and parseWebhookUrl. Identifiers, options, duplicates, limits and
 * lookups: FeedsResolution.test.ts; updates, deletes and audit: FeedsChanges.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted, Ref } from "effect"
import { Feeds } from "../../src/services/feeds/Feeds.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import { DEFAULT_WEBHOOK_URL_PREFIXES, parseWebhookPrefixes, parseWebhookUrl } from "../../src/services/feeds/FeedsConfig.ts"
import {
  access,
  BOT1_ID,
  BOT2_ID,
  ch,
  FEED_URL,
  PlatformCalls,
  S1_ID,
  S2_ID,
  testCipher,
  WEBHOOK_S1_ID,
  WEBHOOK_S1_TOKEN,
  WEBHOOK_S3_ID,
  WEBHOOK_S3_TOKEN
} from "./FeedsFakeFixtures.ts"
import { A1, assertNoToken, create, createFails, feedsService, hookUrl, messages, paths, S1_URL } from "./FeedsFixtures.ts"

feedsService("webhooks", (test, provide) => {
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
          "no-avatar-overwrite": false,
          mention_roles: null,
          embed: false,
          embed_color: null,
          thread_id: null,
          forum_thread_name: null,
          forum_tags: null,
          crosspost: false,
          split: false
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
})

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
