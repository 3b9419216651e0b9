/**
 * The DeliveryStore contract, crossposts (delivery.md §10 `crosspost`, migration 0021): whether a
 * feed asks, the budget of an announcement channel (10 slots in any hour, shared by its feeds,
 * reserved atomically, once per delivery), the `not_crossposted` count, and retention. Registered
 * by `deliveryStoreContract` (DeliveryStore.contract.ts) in its block. Each test posts into a
 * channel of its own: the budget is the channel's.
 */
import { assert } from "@effect/vitest"
import type { Vitest } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Redacted } from "effect"
import type { Bots } from "../../src/services/platform/Bots.ts"
import type { Cipher } from "../../src/services/infra/Cipher.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import type { CrosspostReservation } from "../../src/services/delivery/DeliveryStore.ts"
import type { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import { addFeed, minutesAgo, newIdentifier, newWebhookId, pending, statusOf } from "./DeliveryStoreFixtures.ts"

let channels = 0
const newChannel = () => `31900000000${String(++channels).padStart(7, "0")}`

/** A crossposting feed on a webhook of its own in `channelId`, with `n` deliveries recorded; their ids. */
const feedWith = (channelId: string, n: number, options: Readonly<Record<string, unknown>> = { crosspost: true }) =>
  Effect.gen(function*() {
    const store = yield* DeliveryStore
    const webhookId = newWebhookId()
    const feedId = yield* addFeed({ identifier: newIdentifier(), webhookId, channelId, options })
    yield* store.insertDeliveries(Array.from({ length: n }, (_, i) => pending(feedId, webhookId, `x${i}`, minutesAgo(n - i))))
    const ids: Array<string> = []
    for (let i = 0; i < n; i++) {
      const d = Option.getOrThrow(yield* store.nextPending(webhookId))
      yield* store.claim(d.id)
      yield* store.markSent(d.id, `msg-${d.id}`, new Date())
      ids.push(d.id)
    }
    return { feedId, webhookId, ids }
  })

/** A reservation as data: the token's value instead of the Redacted. */
const shown = (r: CrosspostReservation) =>
  r._tag === "Granted" ? { ...r, botToken: r.botToken && Redacted.value(r.botToken) } : r

export const deliveryStoreCrosspostTests = (it: Vitest.MethodsNonLive<DeliveryStore | FeedsRepo | Bots | Cipher>) => {
  it.effect("crosspost: a pending or uncertain delivery says whether its feed asks (webhook_options.crosspost true, as the feed is now)", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      for (const [options, asks] of [[{ crosspost: true }, true], [{ crosspost: false }, false], [{}, false]] as const) {
        const webhookId = newWebhookId()
        const feedId = yield* addFeed({ identifier: newIdentifier(), webhookId, options })
        yield* store.insertDeliveries([pending(feedId, webhookId, "a", minutesAgo(2))])
        const d = Option.getOrThrow(yield* store.nextPending(webhookId))
        assert.strictEqual(d.crosspost, asks, JSON.stringify(options))
        yield* store.claim(d.id)
        assert.strictEqual((yield* store.uncertainSends(webhookId))[0]!.crosspost, asks, JSON.stringify(options))
      }
    }))

  it.effect("the budget: 10 slots of a channel in a rolling hour, shared by its feeds; the 11th over it until the oldest leaves; the bot's token with each grant", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const channelId = newChannel()
      const a = yield* feedWith(channelId, 6)
      const b = yield* feedWith(channelId, 6)
      const t0 = Date.now() - 50 * 60_000
      const at = (minutes: number) => new Date(t0 + minutes * 60_000)
      // a's six, then b's four: ten, a minute apart.
      const granted = []
      for (const [i, id] of [...a.ids, ...b.ids.slice(0, 4)].entries()) granted.push(shown(yield* store.reserveCrosspost(id, 1, at(i))))
      assert.deepStrictEqual(granted, Array.from({ length: 10 }, () => ({ _tag: "Granted", channelId, botToken: "bot-token" })))
      assert.deepStrictEqual(yield* store.reserveCrosspost(b.ids[4]!, 1, at(30)), { _tag: "OverBudget", channelId, freeAt: at(60) })
      // Another channel has its own ten.
      const elsewhere = yield* feedWith(newChannel(), 1)
      assert.strictEqual((yield* store.reserveCrosspost(elsewhere.ids[0]!, 1, at(30)))._tag, "Granted")
      // An hour after the first: its slot is free (the hour is rolling), one only.
      assert.strictEqual((yield* store.reserveCrosspost(b.ids[4]!, 1, at(60)))._tag, "Granted")
      assert.deepStrictEqual(yield* store.reserveCrosspost(b.ids[5]!, 1, at(60)), { _tag: "OverBudget", channelId, freeAt: at(61) })
    }))

  it.effect("a delivery is reserved once (Taken, even over the budget); an unknown one is Gone; a split's slots all or none", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const channelId = newChannel()
      const f = yield* feedWith(channelId, 4)
      const now = new Date()
      assert.strictEqual((yield* store.reserveCrosspost(f.ids[0]!, 3, now))._tag, "Granted")
      assert.deepStrictEqual(yield* store.reserveCrosspost(f.ids[0]!, 3, now), { _tag: "Taken" })
      assert.deepStrictEqual(yield* store.reserveCrosspost("987654321", 1, now), { _tag: "Gone" })
      assert.strictEqual((yield* store.reserveCrosspost(f.ids[1]!, 3, now))._tag, "Granted")
      assert.strictEqual((yield* store.reserveCrosspost(f.ids[2]!, 3, now))._tag, "Granted")
      // 9 taken: a split of 3 does not fit, none of it is taken; one message still does.
      assert.strictEqual((yield* store.reserveCrosspost(f.ids[3]!, 3, now))._tag, "OverBudget")
      assert.strictEqual((yield* store.reserveCrosspost(f.ids[3]!, 1, now))._tag, "Granted")
      assert.deepStrictEqual(yield* store.reserveCrosspost(f.ids[0]!, 1, now), { _tag: "Taken" })
    }))

  it.effect("reservations at once on one channel, from two feeds: exactly 10 granted", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const channelId = newChannel()
      const a = yield* feedWith(channelId, 8)
      const b = yield* feedWith(channelId, 8)
      const now = new Date()
      const all = yield* Effect.forEach([...a.ids, ...b.ids], (id) => store.reserveCrosspost(id, 1, now), { concurrency: "unbounded" })
      assert.strictEqual(all.filter((r) => r._tag === "Granted").length, 10)
      assert.strictEqual(all.filter((r) => r._tag === "OverBudget").length, 6)
    }))

  it.effect("a reservation waits for another of its channel still in its transaction: the 10th slot is taken once", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const channelId = newChannel()
      const a = yield* feedWith(channelId, 10)
      const b = yield* feedWith(channelId, 1)
      const now = new Date()
      for (const id of a.ids.slice(0, 9)) yield* store.reserveCrosspost(id, 1, now)
      // a's 10th reserved in a transaction that stays open a while; b asks meanwhile (once that reservation
      // has returned; the transaction stays open 400 ms from b's asking), on another connection.
      const reserved = yield* Deferred.make<void>()
      const asking = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(store.transaction(Effect.tap(
        store.reserveCrosspost(a.ids[9]!, 1, now),
        () => Deferred.succeed(reserved, undefined).pipe(Effect.andThen(Deferred.await(asking)), Effect.andThen(Effect.sleep("400 millis")))
      )))
      // (The transaction's failure, if any, ends the wait too.)
      yield* Effect.raceFirst(Deferred.await(reserved), Fiber.join(first))
      yield* Deferred.succeed(asking, undefined)
      const second = yield* store.reserveCrosspost(b.ids[0]!, 1, now)
      assert.strictEqual((yield* Fiber.join(first))._tag, "Granted")
      assert.deepInclude(second, { _tag: "OverBudget", channelId })
    }))

  it.effect("not crossposted: the reason on the sent delivery, its feed counted once; a delivery not sent is not counted", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const f = yield* feedWith(newChannel(), 2)
      assert.strictEqual((yield* statusOf(f.feedId)).notCrossposted, 0)
      yield* store.notCrossposted(f.ids[0]!, "not crossposted: over the budget")
      yield* store.notCrossposted(f.ids[0]!, "not crossposted: again")
      assert.deepInclude(yield* statusOf(f.feedId), { delivered: 2, notCrossposted: 1 })
      yield* store.notCrossposted(f.ids[1]!, "not crossposted: refused")
      assert.strictEqual((yield* statusOf(f.feedId)).notCrossposted, 2)
      const other = yield* feedWith(newChannel(), 0)
      yield* store.insertDeliveries([pending(other.feedId, other.webhookId, "waiting", minutesAgo(1))])
      const waiting = Option.getOrThrow(yield* store.nextPending(other.webhookId))
      yield* store.notCrossposted(waiting.id, "not crossposted: x")
      yield* store.notCrossposted("987654321", "not crossposted: x")
      assert.strictEqual((yield* statusOf(other.feedId)).notCrossposted, 0)
    }))

  it.effect("retention: reservations older than the delivery log's cutoff go with it", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const f = yield* feedWith(newChannel(), 2)
      const old = new Date(Date.now() - 40 * 86_400_000)
      yield* store.reserveCrosspost(f.ids[0]!, 1, old)
      yield* store.reserveCrosspost(f.ids[1]!, 1, new Date())
      yield* store.retention({ seenBefore: new Date(0), deliveriesBefore: new Date(Date.now() - 30 * 86_400_000) })
      assert.strictEqual((yield* store.reserveCrosspost(f.ids[0]!, 1, old))._tag, "Granted", "its reservation was dropped")
      assert.deepStrictEqual(yield* store.reserveCrosspost(f.ids[1]!, 1, new Date()), { _tag: "Taken" })
    }))
}
