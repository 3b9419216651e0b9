/**
 * The Feeds service's changes, over in-memory fakes and the SQL repo on every database kind: an
 * update replaces the options, updates and deletes outside the feed's server, bot or module are 404,
 * and every change is audited in its transaction (none made when the audit log is down). Webhooks:
 * FeedsWebhooks.test.ts; identifiers, options, limits and lookups: FeedsResolution.test.ts.
 */
import { assert } from "@effect/vitest"
import { Effect, Ref, Result } from "effect"
import type { Feed } from "../../src/domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { Feeds } from "../../src/services/feeds/Feeds.ts"
import { AuditLogMemoryStore } from "../layers/AuditLogMemory.ts"
import { access, BOT1_ID, BOT2_ID, ch, S1_ID, S3_ID } from "./FeedsFakeFixtures.ts"
import { A1, assertNoToken, create, createFails, feedsService, S1_URL } from "./FeedsFixtures.ts"

feedsService("updates, deletes and audit", (test, provide) => {
  test("update replaces the options: omitted options return to their defaults; game_names follow filter_game", () =>
    provide(Effect.gen(function*() {
      const feed = yield* create("streaming", {
        feed_identifier: "8001",
        webhook_channel: ch(1, "text"),
        webhook_options: { filter_game: ["Fortnite"], custom_header: "LIVE", "no-avatar-overwrite": true }
      })
      assert.deepStrictEqual(feed.display_info?.game_names, ["Fortnite"])
      const updated = yield* Feeds.use((f) => f.update(A1, "streaming", feed.id, Result.succeed({ filter_event: ["offline"], "webhook-name": "x".repeat(32) })))
      assert.deepStrictEqual(updated, {
        ...feed,
        webhook_options: {
          filter_event: ["offline"],
          filter_game: null,
          custom_header: null,
          "webhook-name": "x".repeat(32),
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
        display_info: { ...feed.display_info!, game_names: null }
      })
      const again = yield* Feeds.use((f) => f.update(A1, "streaming", feed.id, Result.succeed({ filter_game: ["509658"] })))
      assert.deepStrictEqual(again.display_info?.game_names, ["Just Chatting"])
      assert.deepStrictEqual(again.webhook_options.filter_game, ["509658"])
      const bad = yield* Effect.flip(Feeds.use((f) => f.update(A1, "streaming", feed.id, Result.succeed({ filter_game: ["Nope"] }))))
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
        assert.strictEqual((yield* Effect.flip(Feeds.use((f) => f.update(a, m, id, Result.succeed({})))))._tag, "NotFound")
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
      yield* Feeds.use((f) => f.update(A1, "microblog", feed.id, Result.succeed({ filter_mode: "AND" })))
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

})
