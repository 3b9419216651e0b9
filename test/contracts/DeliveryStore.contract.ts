/**
 * The DeliveryStore contract: what the delivery engine relies on, on every layer. Sources and their
 * poll state; seen ids; deliveries recorded before they are sent (once per feed and item), claimed
 * once, then sent, retried or failed; `sending` rows of a stopped worker failed; the oldest pending
 * first; feed state changes reported once; the status counters; transactions; retention.
 *
 * The layer comes with the stores it reads feeds and bots from (FeedsRepo, Bots: the SQL layer joins
 * their tables) and the Cipher that sealed the webhook tokens. Each test uses sources and webhooks
 * of its own: the layer is built once per block.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { addFeed, BOT, minutesAgo, newIdentifier, newWebhookId, pending, SERVER, statusOf, UNNAMED_BOT } from "./DeliveryStoreFixtures.ts"
import type { DeliveryStoreLayer } from "./DeliveryStoreFixtures.ts"
import { deliveryStoreCrosspostTests } from "./DeliveryStoreCrosspost.contract.ts"
import { deliveryStoreFlowTests } from "./DeliveryStoreFlow.contract.ts"

export const deliveryStoreContract = <E>(name: string, storeLayer: DeliveryStoreLayer<E>) =>
  layer(storeLayer, { excludeTestServices: true, timeout: "60 seconds" })(`DeliveryStore contract (${name})`, (it) => {
    it.effect("a source is created once per (module, identifier), unpolled; read by id, locked, or by its feed", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const identifier = newIdentifier()
        const source = yield* store.upsertSource("rss", identifier)
        assert.deepStrictEqual(source, {
          id: source.id,
          module: "rss",
          identifier,
          pollState: { etag: null, lastModified: null, bodyHash: null, cursor: null },
          baselinedAt: null,
          lastPollAt: null,
          nextPollAt: null,
          lastSuccessAt: null,
          failingSince: null,
          failures: 0,
          lastError: null,
          polledSlot: null,
          successorSlot: null
        })
        assert.deepStrictEqual(yield* store.upsertSource("rss", identifier), source)
        const other = yield* store.upsertSource("microblog", identifier)
        assert.notStrictEqual(other.id, source.id, "another module's source of the same identifier")
        assert.deepStrictEqual(yield* store.source(source.id), Option.some(source))
        assert.deepStrictEqual(yield* store.transaction(store.lockSource(source.id)), Option.some(source))
        const feedId = yield* addFeed({ identifier, webhookId: newWebhookId() })
        assert.deepStrictEqual(yield* store.sourceOfFeed(feedId), Option.some(source))
        assert.isTrue(Option.isNone(yield* store.source("987654321")))
        assert.isTrue(Option.isNone(yield* store.sourceOfFeed("987654321")))
      }))

    it.effect("poll results: success keeps the state and clears failures; a failure counts since when; baseline once", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const { id } = yield* store.upsertSource("rss", newIdentifier())
        const [t1, t2, t3, t4] = [minutesAgo(40), minutesAgo(30), minutesAgo(20), minutesAgo(10)]
        const state = { etag: "\"v1\"", lastModified: "Tue, 01 Apr 2025 10:00:00 GMT", bodyHash: "ab", cursor: { live: true, n: [1] } }
        yield* store.pollSucceeded(id, { state, at: t1, baseline: true })
        const afterFailure = yield* store.pollFailed(id, { message: "timed out", at: t2 })
        assert.deepInclude(afterFailure, { failures: 1, failingSince: t2, lastError: "timed out", lastPollAt: t2, lastSuccessAt: t1 })
        const again = yield* store.pollFailed(id, { message: "HTTP 503", at: t3 })
        assert.deepInclude(again, { failures: 2, failingSince: t2, lastError: "HTTP 503", lastPollAt: t3 })
        const next = { ...state, etag: "\"v2\"" }
        yield* store.pollSucceeded(id, { state: next, at: t4, baseline: true })
        assert.deepInclude(Option.getOrThrow(yield* store.source(id)), {
          pollState: next,
          baselinedAt: t1,
          lastPollAt: t4,
          lastSuccessAt: t4,
          failures: 0,
          failingSince: null,
          lastError: null
        })
        yield* store.pollFailed(id, { message: "gone", at: t4 })
        yield* store.resetFailures(id)
        assert.deepInclude(Option.getOrThrow(yield* store.source(id)), { failures: 0, failingSince: null, lastError: null, lastPollAt: t4 })
        const fresh = yield* store.upsertSource("rss", newIdentifier())
        yield* store.pollSucceeded(fresh.id, { state, at: t1, baseline: false })
        assert.isNull(Option.getOrThrow(yield* store.source(fresh.id)).baselinedAt, "not a baseline: still none")
      }))

    it.effect("a poll's first read: the source with its delivering and failing feeds counted; none for an unknown source", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const identifier = newIdentifier()
        const source = yield* store.upsertSource("rss", identifier)
        assert.deepStrictEqual(yield* store.pollTarget(source.id), Option.some({ source, active: 0, failing: 0 }))
        const [a, b, c] = [
          yield* addFeed({ identifier, webhookId: newWebhookId() }),
          yield* addFeed({ identifier, webhookId: newWebhookId() }),
          yield* addFeed({ identifier, webhookId: newWebhookId() })
        ]
        yield* addFeed({ identifier: newIdentifier(), webhookId: newWebhookId() })
        yield* store.setFeedState([b], ["active"], "failing", "unreachable")
        yield* store.setFeedState([c], ["active"], "disabled", "the webhook is gone")
        yield* store.setNextPoll(source.id, minutesAgo(1))
        const target = Option.getOrThrow(yield* store.pollTarget(source.id))
        assert.deepStrictEqual(target, { source: Option.getOrThrow(yield* store.source(source.id)), active: 2, failing: 1 })
        yield* store.setFeedState([a, b], ["active", "failing"], "disabled", "off")
        assert.deepInclude(Option.getOrThrow(yield* store.pollTarget(source.id)), { active: 0, failing: 0 })
        assert.isTrue(Option.isNone(yield* store.pollTarget("987654321")))
      }))

    it.effect("an unchanged poll in one write (state, slot, next poll); a slot polled already writes nothing; slots only move on", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const { id } = yield* store.upsertSource("rss", newIdentifier())
        const [s1, s2, s3, s4] = [minutesAgo(40), minutesAgo(30), minutesAgo(20), minutesAgo(10)]
        const [n1, n2] = [new Date(Date.now() + 60_000), new Date(Date.now() + 120_000)]
        const state = { etag: "\"v1\"", lastModified: null, bodyHash: "ab", cursor: null }
        yield* store.pollFailed(id, { message: "timed out", at: s1 })
        assert.isTrue(yield* store.pollUnchanged(id, { state, at: s1, slot: s1, next: n1 }))
        const after = Option.getOrThrow(yield* store.source(id))
        assert.deepInclude(after, {
          pollState: state,
          lastPollAt: s1,
          lastSuccessAt: s1,
          failures: 0,
          failingSince: null,
          lastError: null,
          baselinedAt: null,
          polledSlot: s1,
          nextPollAt: n1,
          successorSlot: n1
        })
        // The same slot again (the job delivered twice), or an earlier one: nothing written.
        const other = { ...state, etag: "\"v2\"" }
        assert.isFalse(yield* store.pollUnchanged(id, { state: other, at: s2, slot: s1, next: n2 }))
        assert.isFalse(yield* store.pollUnchanged(id, { state: other, at: s2, slot: minutesAgo(50), next: n2 }))
        assert.deepStrictEqual(Option.getOrThrow(yield* store.source(id)), after)
        // A poll asked for now (no slot) is recorded, and leaves the slot as it was.
        assert.isTrue(yield* store.pollUnchanged(id, { state: other, at: s2, slot: null, next: n2 }))
        assert.deepInclude(Option.getOrThrow(yield* store.source(id)), { pollState: other, lastPollAt: s2, polledSlot: s1, nextPollAt: n2 })
        // The other recorders take the slot too, and never move it back.
        yield* store.pollSucceeded(id, { state, at: s3, baseline: true, slot: s3 })
        assert.deepInclude(Option.getOrThrow(yield* store.source(id)), { polledSlot: s3, baselinedAt: s3 })
        yield* store.pollFailed(id, { message: "HTTP 503", at: s4, slot: s2 })
        assert.deepInclude(Option.getOrThrow(yield* store.source(id)), { polledSlot: s3, failures: 1 })
        yield* store.pollFailed(id, { message: "HTTP 503", at: s4, slot: s4 })
        yield* store.pollSucceeded(id, { state, at: s4, baseline: true })
        assert.deepInclude(Option.getOrThrow(yield* store.source(id)), { polledSlot: s4, failures: 0, successorSlot: n2 })
        assert.isFalse(yield* store.pollUnchanged(id, { state, at: s4, slot: s4, next: n1 }))
        assert.isFalse(yield* store.pollUnchanged("987654321", { state, at: s4, slot: null, next: n1 }), "no such source")
      }))

    it.effect("the feeds of a source, oldest first, each with its bot as actor, options, webhook (and its forum) and state", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const identifier = newIdentifier()
        const [w1, w2] = [newWebhookId(), newWebhookId()]
        const first = yield* addFeed({ identifier, webhookId: w1 })
        const tags = [{ id: "350000000000000101", name: "News" }]
        const second = yield* addFeed({ identifier, webhookId: w2, botId: UNNAMED_BOT, forumTags: tags })
        yield* addFeed({ identifier: newIdentifier(), webhookId: w1 })
        yield* store.setFeedState([second], ["active"], "disabled", "the webhook is gone")
        const feeds = yield* store.feedsOfSource({ module: "rss", identifier })
        assert.deepStrictEqual(feeds.map(({ createdAt: _, ...f }) => f), [
          {
            id: first,
            module: "rss",
            botId: BOT,
            serverId: SERVER,
            feedIdentifier: identifier,
            bot: { userId: BOT, userName: "FeedsBot", avatar: "ab12" },
            state: "active",
            reason: null,
            options: { filter_words: ["spam"], filter_excl: true, custom_header: "News ✓" },
            displayInfo: null,
            webhookId: w1,
            forumTags: null
          },
          {
            id: second,
            module: "rss",
            botId: UNNAMED_BOT,
            serverId: SERVER,
            feedIdentifier: identifier,
            bot: { userId: UNNAMED_BOT, userName: "Feeds bot", avatar: null },
            state: "disabled",
            reason: "the webhook is gone",
            options: { filter_words: ["spam"], filter_excl: true, custom_header: "News ✓" },
            displayInfo: null,
            webhookId: w2,
            forumTags: tags
          }
        ])
        for (const f of feeds) assert.isBelow(Math.abs(f.createdAt.getTime() - Date.now()), 60_000)
        assert.deepStrictEqual(yield* store.feedsOfSource({ module: "microblog", identifier }), [])
      }))

    it.effect("sources to start: next poll unknown or overdue, some feed not disabled; unknown first, then by time", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const make = (nextPoll: Date | null, state: "active" | "disabled" | "none") =>
          Effect.gen(function*() {
            const identifier = newIdentifier()
            const source = yield* store.upsertSource("rss", identifier)
            if (state !== "none") {
              const feedId = yield* addFeed({ identifier, webhookId: newWebhookId() })
              if (state === "disabled") yield* store.setFeedState([feedId], ["active"], "disabled", "off")
            }
            yield* store.setNextPoll(source.id, nextPoll)
            return source.id
          })
        const late = yield* make(new Date("2001-01-02T00:00:00Z"), "active")
        const unknown = yield* make(null, "active")
        const later = yield* make(new Date("2001-01-03T00:00:00Z"), "active")
        const planned = yield* make(new Date(Date.now() + 3_600_000), "active")
        const disabled = yield* make(null, "disabled")
        const orphan = yield* make(null, "none")
        const mine = [late, unknown, later, planned, disabled, orphan]
        const found = (yield* store.sourcesWithoutPoll(new Date(), 10_000)).map((s) => s.id).filter((id) => mine.includes(id))
        assert.deepStrictEqual(found, [unknown, late, later])
        assert.lengthOf(yield* store.sourcesWithoutPoll(new Date(), 1), 1)
        yield* store.setNextPoll(unknown, new Date(Date.now() + 3_600_000))
        assert.notInclude((yield* store.sourcesWithoutPoll(new Date(), 10_000)).map((s) => s.id), unknown)
        assert.isAbove(Option.getOrThrow(yield* store.source(planned)).nextPollAt!.getTime(), Date.now(), "planned: not overdue")
      }))

    it.effect("a locked source is written by one transaction at a time: concurrent read-then-writes all count", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const source = yield* store.upsertSource("rss", newIdentifier())
        const start = new Date("2030-01-01T00:00:00Z")
        yield* store.setNextPoll(source.id, start)
        // Each reads the planned time under the lock, waits, and moves it a minute on.
        const step = store.transaction(Effect.gen(function*() {
          const locked = Option.getOrThrow(yield* store.lockSource(source.id))
          yield* Effect.sleep("20 millis")
          yield* store.setNextPoll(source.id, new Date(locked.nextPollAt!.getTime() + 60_000))
        }))
        yield* Effect.all([step, step, step], { concurrency: "unbounded" })
        assert.deepStrictEqual(Option.getOrThrow(yield* store.source(source.id)).nextPollAt, new Date("2030-01-01T00:03:00Z"))
      }))

    it.effect("seen ids: only those marked, per source; nothing asked, nothing seen", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const a = yield* store.upsertSource("rss", newIdentifier())
        const b = yield* store.upsertSource("rss", newIdentifier())
        yield* store.markSeen(a.id, ["x1", "x2", "ü/3"], new Date())
        yield* store.markSeen(a.id, ["x2"], new Date())
        assert.deepStrictEqual([...(yield* store.seenAmong(a.id, ["x1", "x2", "ü/3", "x4"]))].sort(), ["x1", "x2", "ü/3"])
        assert.deepStrictEqual([...(yield* store.seenAmong(b.id, ["x1"]))], [])
        assert.deepStrictEqual([...(yield* store.seenAmong(a.id, []))], [])
      }))

    it.effect("retention drops old seen ids and old finished deliveries; open ones stay", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const identifier = newIdentifier()
        const webhookId = newWebhookId()
        const source = yield* store.upsertSource("rss", identifier)
        const feedId = yield* addFeed({ identifier, webhookId })
        const longAgo = new Date(Date.now() - 200 * 86_400_000)
        yield* store.markSeen(source.id, ["old"], longAgo)
        yield* store.markSeen(source.id, ["recent"], new Date())
        yield* store.insertDeliveries([pending(feedId, webhookId, "sent-long-ago", longAgo), pending(feedId, webhookId, "open", longAgo)])
        const sent = Option.getOrThrow(yield* store.nextPending(webhookId))
        assert.strictEqual(sent.itemId, "sent-long-ago")
        assert.isTrue(yield* store.claim(sent.id))
        yield* store.markSent(sent.id, "m-1", longAgo)
        const cutoff = new Date(Date.now() - 100 * 86_400_000)
        const removed = yield* store.retention({ seenBefore: cutoff, deliveriesBefore: cutoff })
        assert.isAtLeast(removed.seen, 1)
        assert.isAtLeast(removed.deliveries, 1)
        assert.deepStrictEqual([...(yield* store.seenAmong(source.id, ["old", "recent"]))], ["recent"])
        // The sent row is gone (recording it again is possible); the open one is still next.
        assert.deepStrictEqual((yield* store.insertDeliveries([pending(feedId, webhookId, "sent-long-ago", longAgo)])).length, 1)
        assert.strictEqual(Option.getOrThrow(yield* store.nextPending(webhookId)).itemId, "open")
        assert.strictEqual((yield* statusOf(feedId)).delivered, 1, "the counters stay")
      }))

    deliveryStoreFlowTests(it)
    deliveryStoreCrosspostTests(it)
  })
