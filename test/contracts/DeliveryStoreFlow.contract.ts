/**
 * The DeliveryStore contract, second half: a delivery's life (recorded `pending` before it is sent,
 * claimed once, then `sent`, retried or `failed`), the `sending` rows a send with no answer leaves
 * (uncertain, reconciled by the next job), the order of sending, feed states, status counters and transactions. Registered by
 * `deliveryStoreContract` (DeliveryStore.contract.ts) in its block.
 */
import { assert } from "@effect/vitest"
import type { Vitest } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { Bots } from "../../src/services/platform/Bots.ts"
import type { Cipher } from "../../src/services/infra/Cipher.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import type { FeedStatus } from "../../src/services/delivery/DeliveryStore.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import { addFeed, BOT, minutesAgo, newIdentifier, newWebhookId, pending, SERVER, skipped, statusOf } from "./DeliveryStoreFixtures.ts"

const next = (webhookId: string) => Effect.map(DeliveryStore.use((s) => s.nextPending(webhookId)), Option.getOrThrow)
const nextItem = (webhookId: string) =>
  Effect.map(DeliveryStore.use((s) => s.nextPending(webhookId)), Option.match({ onNone: () => null, onSome: (d) => d.itemId }))

/** A feed on a webhook of its own, on a source of its own. */
const feedOnWebhook = Effect.gen(function*() {
  const webhookId = newWebhookId()
  const feedId = yield* addFeed({ identifier: newIdentifier(), webhookId })
  return { feedId, webhookId }
})

export const deliveryStoreFlowTests = (it: Vitest.MethodsNonLive<DeliveryStore | FeedsRepo | Bots | Cipher>) => {
  it.effect("recorded once per (feed, item): a second record is not returned and not counted; skips are counted", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      const first = [pending(feedId, webhookId, "i1", minutesAgo(3)), skipped(feedId, webhookId, "i2", "older than 24 h")]
      assert.deepStrictEqual(yield* store.insertDeliveries(first), first)
      const again = [pending(feedId, webhookId, "i1", minutesAgo(3)), skipped(feedId, webhookId, "i2", "filter"), skipped(feedId, webhookId, "i3", "nsfw")]
      assert.deepStrictEqual(yield* store.insertDeliveries(again), [again[2]])
      assert.deepStrictEqual(yield* store.insertDeliveries([]), [])
      assert.deepInclude(yield* statusOf(feedId), { state: "active", reason: null, delivered: 0, skipped: 2, lastDeliveryAt: null })
    }))

  it.effect("the oldest pending first (by event time), whole: body, token, attempts, the feed and its bot", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      const other = yield* feedOnWebhook
      const identifier = newIdentifier()
      const feed = yield* FeedsRepo.use((r) => r.find({ botId: BOT, serverId: SERVER, module: "rss" }, feedId))
      yield* store.insertDeliveries([
        pending(feedId, webhookId, "newer", minutesAgo(1)),
        skipped(feedId, webhookId, "skip", "filter"),
        pending(feedId, webhookId, "older", minutesAgo(9)),
        pending(other.feedId, other.webhookId, "elsewhere", minutesAgo(60))
      ])
      const open = yield* next(webhookId)
      assert.deepStrictEqual({ ...open, webhookToken: open.webhookToken && Redacted.value(open.webhookToken) }, {
        id: open.id,
        itemId: "older",
        webhookId,
        body: { content: "**older** ✓", username: "News", allowed_mentions: { parse: [] } },
        attempts: 0,
        feed: {
          id: feedId,
          module: "rss",
          botId: BOT,
          serverId: SERVER,
          feedIdentifier: Option.getOrThrow(feed).feedIdentifier,
          bot: { userId: BOT, userName: "FeedsBot", avatar: "ab12" },
          state: "active",
          reason: null
        },
        webhookToken: `token-of-${webhookId}`,
        crosspost: false
      })
      assert.isTrue(Option.isNone(yield* store.nextPending(newWebhookId())), "a webhook with nothing to send")
      // A token the configured keys cannot open: the delivery still comes, without a token.
      const sealedWrong = newWebhookId()
      const broken = yield* addFeed({ identifier, webhookId: sealedWrong, sealed: false })
      yield* store.insertDeliveries([pending(broken, sealedWrong, "b1", minutesAgo(2))])
      assert.isNull((yield* next(sealedWrong)).webhookToken)
    }))

  it.effect("record before send: claimed once (pending → sending), then sent with its message id and counted once", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      yield* store.insertDeliveries([pending(feedId, webhookId, "a", minutesAgo(5)), pending(feedId, webhookId, "b", minutesAgo(4))])
      const a = yield* next(webhookId)
      assert.isTrue(yield* store.claim(a.id))
      assert.isFalse(yield* store.claim(a.id), "someone else has it")
      assert.strictEqual(yield* nextItem(webhookId), "b", "a claimed delivery is not next")
      const at = minutesAgo(1)
      yield* store.markSent(a.id, "msg-a", at)
      yield* store.markSent(a.id, "msg-a", at)
      assert.deepInclude(yield* statusOf(feedId), { delivered: 1, lastDeliveryAt: at })
      assert.isFalse(yield* store.claim(a.id), "a sent delivery is not claimed again")
      // A message the platform took without an id (no `wait`) is sent all the same.
      const b = yield* next(webhookId)
      yield* store.claim(b.id)
      yield* store.markSent(b.id, null, at)
      assert.isNull(yield* nextItem(webhookId))
      assert.strictEqual((yield* statusOf(feedId)).delivered, 2)
    }))

  it.effect("retry puts it back with its attempts; failed ends it; sent wins over a sweep that failed it", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      yield* store.insertDeliveries([pending(feedId, webhookId, "r", minutesAgo(5)), pending(feedId, webhookId, "f", minutesAgo(4))])
      const r = yield* next(webhookId)
      yield* store.claim(r.id)
      yield* store.markRetry(r.id, "429 from the platform")
      const retried = yield* next(webhookId)
      assert.deepInclude(retried, { id: r.id, itemId: "r", attempts: 1 })
      yield* store.markRetry(r.id, "not claimed: no effect")
      yield* store.claim(r.id)
      assert.strictEqual((yield* next(webhookId)).itemId, "f")
      yield* store.markFailed(r.id, "the webhook is gone")
      assert.isFalse(yield* store.claim(r.id), "failed for good")
      const f = yield* next(webhookId)
      yield* store.markFailed(f.id, "the body is too large")
      assert.isNull(yield* nextItem(webhookId), "a pending delivery fails too")
      // The platform answered after a sweep failed it: the truth is sent, and it counts.
      yield* store.markSent(r.id, "msg-late", minutesAgo(1))
      assert.strictEqual((yield* statusOf(feedId)).delivered, 1)
    }))

  it.effect("a `sending` row is not offered again; the next pending is; another webhook's row is untouched", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      const other = yield* feedOnWebhook
      yield* store.insertDeliveries([
        pending(feedId, webhookId, "s1", minutesAgo(5)),
        pending(feedId, webhookId, "p1", minutesAgo(4)),
        pending(other.feedId, other.webhookId, "o1", minutesAgo(5))
      ])
      yield* store.claim((yield* next(webhookId)).id)
      const o1 = yield* next(other.webhookId)
      yield* store.claim(o1.id)
      assert.strictEqual(yield* nextItem(webhookId), "p1")
      assert.isNull(yield* nextItem(other.webhookId))
      yield* store.markRetry(o1.id, "still sending elsewhere: back to pending")
      assert.strictEqual(yield* nextItem(other.webhookId), "o1", "the other webhook's row was untouched")
    }))

  it.effect("sends with no answer: the webhook's `sending` rows whole (channel, bot token, when, why); reclaimed once more; recorded ids found", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      const other = yield* feedOnWebhook
      yield* store.insertDeliveries([
        pending(feedId, webhookId, "u1", minutesAgo(5)),
        pending(feedId, webhookId, "p1", minutesAgo(4)),
        pending(other.feedId, other.webhookId, "o1", minutesAgo(5))
      ])
      assert.deepStrictEqual(yield* store.uncertainSends(webhookId), [])
      const u1 = yield* next(webhookId)
      const claimedFrom = Date.now() - 5_000
      assert.isTrue(yield* store.claim(u1.id))
      yield* store.claim((yield* next(other.webhookId)).id)
      yield* store.markUncertain(u1.id, "the chat platform did not answer within 10 seconds")
      const [found, ...more] = yield* store.uncertainSends(webhookId)
      assert.deepStrictEqual(more, [], "that webhook's only; pending ones are not uncertain")
      assert.deepStrictEqual(
        { ...found!, webhookToken: found!.webhookToken && Redacted.value(found!.webhookToken), botToken: found!.botToken && Redacted.value(found!.botToken), sentAt: null },
        {
          ...u1,
          webhookToken: `token-of-${webhookId}`,
          attempts: 1,
          sentAt: null,
          reason: "the chat platform did not answer within 10 seconds",
          channelId: "310000000000000102",
          botToken: "bot-token"
        }
      )
      assert.isAtLeast(found!.sentAt.getTime(), claimedFrom)
      assert.isTrue(yield* store.reclaim(u1.id))
      assert.strictEqual((yield* store.uncertainSends(webhookId))[0]!.attempts, 2)
      assert.include(yield* store.webhooksWithPending(new Date(Date.now() + 60_000), 10_000), webhookId, "a `sending` row the repair pass finds")
      yield* store.markSent(u1.id, "msg-u1", minutesAgo(0))
      assert.isFalse(yield* store.reclaim(u1.id), "not sending any more")
      yield* store.markUncertain(u1.id, "no effect once sent")
      assert.deepStrictEqual(yield* store.uncertainSends(webhookId), [])
      assert.deepStrictEqual([...(yield* store.recordedMessageIds(webhookId, ["msg-u1", "msg-x"]))], ["msg-u1"])
      assert.deepStrictEqual([...(yield* store.recordedMessageIds(other.webhookId, ["msg-u1"]))], [], "another webhook's")
      assert.deepStrictEqual([...(yield* store.recordedMessageIds(webhookId, []))], [])
      assert.strictEqual((yield* statusOf(feedId)).delivered, 1)
    }))

  it.effect("a disabled feed sends nothing; its pending fail; webhooks with old pending are found", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      yield* store.insertDeliveries([pending(feedId, webhookId, "d1", minutesAgo(5)), pending(feedId, webhookId, "d2", minutesAgo(4))])
      assert.include(yield* store.webhooksWithPending(new Date(Date.now() + 60_000), 10_000), webhookId)
      assert.notInclude(yield* store.webhooksWithPending(minutesAgo(60), 10_000), webhookId, "recorded just now")
      yield* store.setFeedState([feedId], ["active", "failing"], "disabled", "the webhook is gone")
      assert.isNull(yield* nextItem(webhookId))
      assert.strictEqual(yield* store.failPending(feedId, "feed disabled"), 2)
      assert.strictEqual(yield* store.failPending(feedId, "feed disabled"), 0)
      assert.notInclude(yield* store.webhooksWithPending(new Date(Date.now() + 60_000), 10_000), webhookId)
      yield* store.setFeedState([feedId], ["disabled"], "active", null)
      assert.isNull(yield* nextItem(webhookId), "failed rows do not come back")
    }))

  it.effect("feed state: only from the states given; each change reported once, as it is now and was before", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const a = yield* feedOnWebhook
      const b = yield* feedOnWebhook
      const failing = yield* store.setFeedState([a.feedId, b.feedId, "987654321"], ["active"], "failing", "source down")
      assert.deepStrictEqual(failing.map((c) => [c.feed.id, c.feed.state, c.feed.reason, c.previous]), [
        [a.feedId, "failing", "source down", "active"],
        [b.feedId, "failing", "source down", "active"]
      ])
      assert.strictEqual(failing[0]!.feed.bot.userName, "FeedsBot")
      assert.deepStrictEqual(yield* store.setFeedState([a.feedId], ["active"], "failing", "again"), [], "already failing")
      const disabled = yield* store.setFeedState([a.feedId], ["active", "failing"], "disabled", "24 hours failing")
      assert.deepStrictEqual(disabled.map((c) => [c.feed.id, c.feed.state, c.previous]), [[a.feedId, "disabled", "failing"]])
      assert.deepStrictEqual(yield* store.setFeedState([a.feedId], ["active", "failing"], "disabled", "twice"), [], "audited once")
      assert.deepInclude(yield* statusOf(a.feedId), { state: "disabled", reason: "24 hours failing" })
      assert.deepStrictEqual(yield* store.setFeedState([], ["active"], "disabled", null), [])
      assert.deepStrictEqual(yield* store.setFeedState([b.feedId], [], "disabled", null), [])
    }))

  it.effect("status: none for an unknown feed; a new feed's defaults; the source's poll times", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      assert.isTrue(Option.isNone(yield* store.status("987654321")))
      const identifier = newIdentifier()
      const feedId = yield* addFeed({ identifier, webhookId: newWebhookId() })
      const empty: FeedStatus = { state: "active", reason: null, lastPollAt: null, nextPollAt: null, lastDeliveryAt: null, delivered: 0, skipped: 0, notCrossposted: 0 }
      assert.deepStrictEqual(yield* statusOf(feedId), empty)
      const source = yield* store.upsertSource("rss", identifier)
      const [polled, planned] = [minutesAgo(2), new Date(Date.now() + 600_000)]
      yield* store.pollSucceeded(source.id, { state: source.pollState, at: polled, baseline: true })
      yield* store.setNextPoll(source.id, planned)
      assert.deepStrictEqual(yield* statusOf(feedId), { ...empty, lastPollAt: polled, nextPollAt: planned })
    }))

  it.effect("a removed feed takes its deliveries and status with it", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { feedId, webhookId } = yield* feedOnWebhook
      yield* store.insertDeliveries([pending(feedId, webhookId, "x", minutesAgo(2)), skipped(feedId, webhookId, "y", "filter")])
      assert.isTrue(yield* FeedsRepo.use((r) => r.remove({ botId: BOT, serverId: SERVER, module: "rss" }, feedId)))
      assert.isNull(yield* nextItem(webhookId))
      assert.isTrue(Option.isNone(yield* store.status(feedId)))
      assert.notInclude(yield* store.webhooksWithPending(new Date(Date.now() + 60_000), 10_000), webhookId)
    }))

  it.effect("a transaction keeps all its writes or, failing, none; a nested one that fails undoes only its own", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const identifier = newIdentifier()
      const webhookId = newWebhookId()
      const feedId = yield* addFeed({ identifier, webhookId })
      const source = yield* store.upsertSource("rss", identifier)
      const failed = yield* store.transaction(Effect.gen(function*() {
        yield* store.lockSource(source.id)
        yield* store.markSeen(source.id, ["t1"], new Date())
        yield* store.insertDeliveries([pending(feedId, webhookId, "t1", minutesAgo(1)), skipped(feedId, webhookId, "t0", "filter")])
        yield* store.pollSucceeded(source.id, { state: source.pollState, at: new Date(), baseline: true })
        yield* store.setFeedState([feedId], ["active"], "failing", "x")
        return yield* Effect.fail("the job send failed" as const)
      })).pipe(Effect.flip)
      assert.strictEqual(failed, "the job send failed")
      assert.deepStrictEqual([...(yield* store.seenAmong(source.id, ["t1"]))], [])
      assert.isNull(yield* nextItem(webhookId))
      assert.deepInclude(yield* statusOf(feedId), { state: "active", skipped: 0, lastPollAt: null })
      assert.isNull(Option.getOrThrow(yield* store.source(source.id)).baselinedAt)

      yield* store.transaction(Effect.gen(function*() {
        yield* store.markSeen(source.id, ["kept"], new Date())
        const inner = yield* store.transaction(Effect.andThen(store.markSeen(source.id, ["undone"], new Date()), Effect.fail("inner" as const)))
          .pipe(Effect.flip)
        assert.strictEqual(inner, "inner")
        yield* store.insertDeliveries([pending(feedId, webhookId, "t2", minutesAgo(1))])
      }))
      assert.deepStrictEqual([...(yield* store.seenAmong(source.id, ["kept", "undone"]))], ["kept"])
      assert.strictEqual(yield* nextItem(webhookId), "t2")
    }))
}
