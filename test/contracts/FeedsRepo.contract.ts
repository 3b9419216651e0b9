/**
 * The FeedsRepo contract: feeds round-trip with their typed options, scoped to (bot, server, module);
 * duplicates and the limit are decided with the insert; a failed transaction rolls back; the webhook's
 * forum tags are kept, replaced or cleared as asked. On every layer.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Layer } from "effect"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import type { NewFeed } from "../../src/services/feeds/FeedsRepo.ts"

const BOT = "200000000000000002"
const SERVER = "300000000000000001"
export const scope = { botId: BOT, serverId: SERVER, module: "streaming" } as const

/** A feed of `module` (streaming unless said), with options of that module: the SQL layer decodes them by it. */
export const feed = (identifier: string, webhookId = "330000000000000101", module: FeedModuleName = "streaming"): NewFeed => ({
  ...scope,
  module,
  feedIdentifier: identifier,
  webhookOptions: module === "streaming"
    ? { filter_event: ["live"], filter_game: ["33214"], custom_header: "héllo ✓", "webhook-name": null }
    : { custom_header: "héllo ✓", "webhook-name": null },
  displayInfo: { user_name: "alice", display_name: "Alice", user_url: "https://example.test/alice", game_names: ["Fortnite"] },
  webhook: { id: webhookId, tokenEnc: "v1.k1.nonce.cipher", name: "Feeds", avatar: null, channelId: "310000000000000102", forumTags: null }
})

export const feedsRepoContract = (name: string, repoLayer: Layer.Layer<FeedsRepo, unknown>) =>
  layer(repoLayer, { excludeTestServices: true })(`FeedsRepo contract (${name})`, (it) => {
    it.effect("round trip: insert, find, list, count, update options, remove", () =>
      Effect.gen(function*() {
        const repo = yield* FeedsRepo
        const r = yield* repo.insert(feed("1001"), 50)
        assert.strictEqual(r._tag, "Inserted")
        if (r._tag !== "Inserted") return
        assert.match(r.feed.id, /^[1-9][0-9]*$/)
        assert.deepStrictEqual(r.feed, { ...feed("1001"), id: r.feed.id })
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(scope, r.feed.id)), r.feed)

        const second = yield* repo.insert(feed("1002"), 50)
        assert.strictEqual(second._tag, "Inserted")
        assert.deepStrictEqual((yield* repo.list(scope)).map((f) => f.feedIdentifier), ["1001", "1002"])
        assert.strictEqual(yield* repo.count(scope), 2)

        const updated = yield* repo.updateOptions(scope, r.feed.id, { filter_event: null }, null)
        assert.deepStrictEqual(Option.getOrThrow(updated).webhookOptions, { filter_event: null })
        assert.isNull(Option.getOrThrow(updated).displayInfo)
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(scope, r.feed.id)), Option.getOrThrow(updated))

        assert.isTrue(yield* repo.remove(scope, r.feed.id))
        assert.isFalse(yield* repo.remove(scope, r.feed.id))
        assert.isTrue(Option.isNone(yield* repo.find(scope, r.feed.id)))
        assert.isTrue(Option.isNone(yield* repo.updateOptions(scope, r.feed.id, {}, null)))
      }))

    it.effect("same identifier on the same webhook is a duplicate; on another webhook it is not", () =>
      Effect.gen(function*() {
        const repo = yield* FeedsRepo
        const s = { ...scope, module: "video" } as const
        const first = yield* repo.insert(feed("chan", undefined, "video"), 50)
        assert.strictEqual(first._tag, "Inserted")
        assert.strictEqual((yield* repo.insert(feed("chan", undefined, "video"), 50))._tag, "Duplicate")
        assert.strictEqual((yield* repo.insert(feed("chan", "330000000000000999", "video"), 50))._tag, "Inserted")
        // Same identifier and webhook in another module is another feed.
        assert.strictEqual((yield* repo.insert(feed("chan", undefined, "photo"), 50))._tag, "Inserted")
        assert.strictEqual(yield* repo.count(s), 2)
      }))

    it.effect("the limit is checked with the insert: at the limit → LimitReached", () =>
      Effect.gen(function*() {
        const repo = yield* FeedsRepo
        const s = { ...scope, module: "rss" } as const
        const results = yield* Effect.forEach(
          ["a", "b", "c", "d", "e"],
          (id) => repo.transaction(repo.insert(feed(id, undefined, "rss"), 3)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r._tag === "Inserted").length, 3)
        assert.deepStrictEqual(results.filter((r) => r._tag === "LimitReached"), [
          { _tag: "LimitReached", limit: 3 },
          { _tag: "LimitReached", limit: 3 }
        ])
        assert.strictEqual(yield* repo.count(s), 3)
      }))

    it.effect("another server's, bot's or module's feed is invisible", () =>
      Effect.gen(function*() {
        const repo = yield* FeedsRepo
        const r = yield* repo.insert(feed("mine", undefined, "forum"), 50)
        if (r._tag !== "Inserted") return assert.fail(r._tag)
        for (const other of [
          { botId: BOT, serverId: "300000000000000003", module: "forum" },
          { botId: "200000000000000001", serverId: SERVER, module: "forum" },
          { botId: BOT, serverId: SERVER, module: "rss" }
        ] as const) {
          assert.isTrue(Option.isNone(yield* repo.find(other, r.feed.id)))
          assert.isTrue(Option.isNone(yield* repo.updateOptions(other, r.feed.id, {}, null)))
          assert.isFalse(yield* repo.setForumTags(other, r.feed.id, []))
          assert.isFalse(yield* repo.remove(other, r.feed.id))
          assert.notInclude((yield* repo.list(other)).map((f) => f.id), r.feed.id)
        }
        assert.isTrue(Option.isSome(yield* repo.find({ ...scope, module: "forum" }, r.feed.id)))
      }))

    it.effect("forum tags: stored with the feed, kept by an update that does not read them, replaced or cleared", () =>
      Effect.gen(function*() {
        const repo = yield* FeedsRepo
        const s = { ...scope, module: "rss" } as const
        const tags = [{ id: "350000000000000101", name: "News" }, { id: "350000000000000102", name: "Säkerhet ✓" }]
        const base = feed("forum-feed", "330000000000000111", "rss")
        const r = yield* repo.insert({ ...base, webhook: { ...base.webhook, forumTags: tags } }, 50)
        if (r._tag !== "Inserted") return assert.fail(r._tag)
        assert.deepStrictEqual(r.feed.webhook.forumTags, tags)
        const tagsOf = Effect.map(repo.find(s, r.feed.id), (f) => Option.getOrThrow(f).webhook.forumTags)
        assert.deepStrictEqual(yield* tagsOf, tags)

        yield* repo.updateOptions(s, r.feed.id, { custom_header: "kept" }, null)
        assert.deepStrictEqual(yield* tagsOf, tags, "undefined keeps them")
        const renamed = [{ id: "350000000000000101", name: "Announcements" }]
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.updateOptions(s, r.feed.id, {}, null, renamed)).webhook.forumTags, renamed)
        assert.deepStrictEqual(yield* tagsOf, renamed)
        assert.isTrue(yield* repo.setForumTags(s, r.feed.id, []))
        assert.deepStrictEqual(yield* tagsOf, [], "a forum without tags")
        yield* repo.updateOptions(s, r.feed.id, {}, null, null)
        assert.isNull(yield* tagsOf, "no longer a forum")
        assert.isTrue(yield* repo.setForumTags(s, r.feed.id, tags))
        assert.deepStrictEqual(yield* tagsOf, tags)
        assert.isFalse(yield* repo.setForumTags(s, "999999", tags), "no such feed")
      }))

    it.effect("a failure inside transaction rolls the insert back", () =>
      Effect.gen(function*() {
        const repo = yield* FeedsRepo
        const s = { ...scope, module: "microblog" } as const
        const failed = yield* repo.transaction(
          Effect.andThen(repo.insert(feed("rolled-back", undefined, "microblog"), 50), Effect.fail(ServiceUnavailable.of("audit down", 5)))
        ).pipe(Effect.flip)
        assert.strictEqual(failed._tag, "ServiceUnavailable")
        assert.strictEqual(yield* repo.count(s), 0)
      }))
  })
