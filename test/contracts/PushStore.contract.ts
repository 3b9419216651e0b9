/**
 * The PushStore contract: what the push service relies on (delivery.md §9), on every layer. Which
 * sources want a subscription (active feeds, their module's topics, none yet), in source order and
 * within the limit; one subscription per (source, topic) whoever asks, its secret read back; the
 * states (pending → active → revoked / expired, reopened); due rows claimed once until their retry
 * time, earliest first, and rows whose source is gone or lost its feeds always due; leases expired
 * on time; a source pushed only while every topic is active within its lease; EventSub message ids
 * taken once until forgotten. Unknown ids change nothing and fail nothing.
 *
 * The layer comes with the DeliveryStore and FeedsRepo it reads sources and feeds through (the SQL
 * layer joins their tables). The store's reads are global, so each test keeps to sources, times
 * and modules of its own: `unsubscribed` is asked only for photo and forum sources (one test),
 * `due` claims at times of 2001 (one test), leases are far off but in the expiry test.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Option, Redacted } from "effect"
import type { Layer } from "effect"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import { PushStore } from "../../src/services/push/PushStore.ts"
import type { PushSubscription, PushTopic } from "../../src/services/push/PushStore.ts"

export type PushStoreLayer<E> = Layer.Layer<PushStore | DeliveryStore | FeedsRepo, E>

const BOT = "200000000000000005"
const SERVER = "300000000000000005"
let webhooks = 0

/** A stored feed of the source (module, identifier): its id. */
const addFeed = (module: FeedModuleName, identifier: string) =>
  Effect.gen(function*() {
    const n = ++webhooks
    const inserted = yield* FeedsRepo.use((repo) =>
      repo.insert({
        botId: BOT,
        serverId: SERVER,
        module,
        feedIdentifier: identifier,
        webhookOptions: {},
        displayInfo: null,
        webhook: { id: `36000000000000${String(n).padStart(4, "0")}`, tokenEnc: "v1.k1.bm9uY2U.Y2lwaGVy", name: "Push hook", avatar: null, channelId: "310000000000000105" }
      }, 10_000)
    )
    if (inserted._tag !== "Inserted") return yield* Effect.die(new Error(`feed not inserted: ${inserted._tag}`))
    return inserted.feed.id
  })

/** The stored source (module, identifier) followed by `feeds` feeds: its id and the feeds' ids. */
const source = (module: FeedModuleName, identifier: string, feeds = 1) =>
  Effect.gen(function*() {
    const src = yield* DeliveryStore.use((s) => s.upsertSource(module, identifier))
    const feedIds: Array<string> = []
    for (let i = 0; i < feeds; i++) feedIds.push(yield* addFeed(module, identifier))
    return { id: src.id, module, identifier, feedIds }
  })

const disable = (feedId: string) => DeliveryStore.use((s) => s.setFeedState([feedId], ["active", "failing"], "disabled", "contract"))
const removeFeed = (module: FeedModuleName, feedId: string) => FeedsRepo.use((r) => r.remove({ botId: BOT, serverId: SERVER, module }, feedId))

const sub = (src: { id: string; module: string; identifier: string }, topic: PushTopic) =>
  ({ sourceId: src.id, module: src.module, identifier: src.identifier, topic })

/** Creates it, or dies: its id. */
const create = (src: { id: string; module: string; identifier: string }, topic: PushTopic, hookId: string, next: Date) =>
  Effect.flatMap(
    PushStore.use((s) => s.create(sub(src, topic), hookId, Redacted.make(`secret-of-${hookId}`), next)),
    (created) => Option.isSome(created) ? Effect.succeed(created.value.id) : Effect.die(new Error(`${hookId} not created`))
  )

const hook = (hookId: string) => Effect.map(PushStore.use((s) => s.byHook(hookId)), Option.getOrThrow)

/** Comparable: the secret's value, the lease as a time. */
const plain = (s: PushSubscription) => ({ ...s, secret: Redacted.value(s.secret), leaseExpiresAt: s.leaseExpiresAt?.toISOString() ?? null })

const T0 = Date.parse("2026-01-01T00:00:00Z")
const at = (s: number) => new Date(T0 + s * 1000)
const D0 = Date.parse("2001-01-01T00:00:00Z")
const d = (s: number) => new Date(D0 + s * 1000)
const FAR = new Date("2100-01-01T00:00:00Z")

export const pushStoreContract = <E>(name: string, storeLayer: PushStoreLayer<E>) =>
  layer(storeLayer, { excludeTestServices: true, timeout: "60 seconds" })(`PushStore contract (${name})`, (it) => {
    it.effect("create: one pending subscription per (source, topic), read back by hook with its secret; a hook id is unique", () =>
      Effect.gen(function*() {
        const store = yield* PushStore
        const src = yield* source("streaming", "41000101", 2)
        const other = yield* source("streaming", "41000102")
        const created = yield* store.create(sub(src, "stream.online"), "hook-c1", Redacted.make("a-very-secret-value-1234567890"), at(60))
        assert.isTrue(Option.isSome(created))
        const first = Option.getOrThrow(created)
        assert.deepStrictEqual(plain(first), {
          id: first.id,
          sourceId: src.id,
          topic: "stream.online",
          hookId: "hook-c1",
          secret: "a-very-secret-value-1234567890",
          state: "pending",
          externalId: null,
          leaseExpiresAt: null,
          source: { module: "streaming", identifier: "41000101" },
          activeFeeds: 2
        })
        assert.deepStrictEqual(plain(yield* hook("hook-c1")), plain(first), "read back: both feeds of the source count")

        const again = yield* store.create(sub(src, "stream.online"), "hook-c1b", Redacted.make("another-secret-0000"), at(60))
        assert.isTrue(Option.isNone(again), "one per (source, topic), whoever asks")
        assert.isTrue(Option.isNone(yield* store.byHook("hook-c1b")), "the refused one is not stored")

        const offline = Option.getOrThrow(yield* store.create(sub(src, "stream.offline"), "hook-c2", Redacted.make("secret-two-000000"), at(60)))
        assert.notStrictEqual(offline.id, first.id)
        assert.strictEqual(Redacted.value((yield* hook("hook-c2")).secret), "secret-two-000000", "each row its own secret")

        const reused = yield* Effect.exit(store.create(sub(other, "stream.online"), "hook-c1", Redacted.make("secret-three-0000"), at(60)))
        assert.isTrue(Exit.isFailure(reused) && Exit.hasDies(reused), "a hook id used twice is a bug of the caller: a defect")
        assert.strictEqual((yield* hook("hook-c1")).sourceId, src.id, "the first keeps its hook")
        assert.deepStrictEqual(yield* store.unsubscribed([{ module: "streaming", topic: "stream.online" }], 1_000).pipe(
          Effect.map((l) => l.filter((u) => u.sourceId === other.id))
        ), [sub(other, "stream.online")], "nothing was stored for the other source")

        assert.isTrue(Option.isNone(yield* store.byHook("hook-never")))
        // A source that is not stored (gone): the row is kept, without source and feeds.
        yield* create({ id: "987654321", module: "streaming", identifier: "41000199" }, "stream.online", "hook-c3", at(60))
        assert.deepInclude(plain(yield* hook("hook-c3")), { sourceId: "987654321", source: null, activeFeeds: 0 })
      }))

    it.effect("states: activate, the hub's id, end once, reopen only what ended; unknown ids change and fail nothing", () =>
      Effect.gen(function*() {
        const store = yield* PushStore
        const src = yield* source("streaming", "41000201")
        const l1 = yield* create(src, "stream.online", "hook-l1", FAR)
        const l2 = yield* create(src, "stream.offline", "hook-l2", FAR)
        yield* store.activate(l1, FAR, at(3600))
        assert.deepInclude(plain(yield* hook("hook-l1")), { state: "active", leaseExpiresAt: FAR.toISOString() })
        yield* store.requested(l1, "ext-1")
        assert.strictEqual((yield* hook("hook-l1")).externalId, "ext-1")
        yield* store.reopen(l1)
        assert.strictEqual((yield* hook("hook-l1")).state, "active", "an active row is not reopened")
        yield* store.reopen(l2)
        assert.strictEqual((yield* hook("hook-l2")).state, "pending", "nor is a pending one changed")

        assert.isTrue(yield* store.end(l1, "revoked", "authorization_revoked", null))
        assert.strictEqual((yield* hook("hook-l1")).state, "revoked")
        assert.isFalse(yield* store.end(l1, "revoked", "authorization_revoked", null), "a second revocation changes nothing")
        assert.isFalse(yield* store.end(l1, "expired", "late", null))
        assert.strictEqual((yield* hook("hook-l1")).state, "revoked")
        yield* store.reopen(l1)
        assert.deepInclude(plain(yield* hook("hook-l1")), { state: "pending", externalId: "ext-1" })
        assert.isTrue(yield* store.end(l2, "expired", "never verified", at(60)), "a pending row can end too")
        yield* store.reopen(l2)
        assert.strictEqual((yield* hook("hook-l2")).state, "pending")
        yield* store.activate(l2, null, null)
        assert.deepInclude(plain(yield* hook("hook-l2")), { state: "active", leaseExpiresAt: null })

        yield* store.activate("987654321", FAR, null)
        yield* store.reopen("987654321")
        yield* store.requested("987654321", "ext-x")
        assert.isFalse(yield* store.end("987654321", "revoked", "x", null))
        yield* store.remove("987654321")
        yield* store.remove(l1)
        assert.isTrue(Option.isNone(yield* store.byHook("hook-l1")))
        yield* store.remove(l1)
        assert.strictEqual((yield* hook("hook-l2")).state, "active", "the other row is untouched")
      }))

    it.effect("pushed: only while every topic of the source is active within its lease", () =>
      Effect.gen(function*() {
        const store = yield* PushStore
        const src = yield* source("streaming", "41000251")
        assert.isFalse(yield* store.pushed(src.id, at(0)), "no subscription")
        const on = yield* create(src, "stream.online", "hook-p1", FAR)
        const off = yield* create(src, "stream.offline", "hook-p2", FAR)
        assert.isFalse(yield* store.pushed(src.id, at(0)), "pending")
        yield* store.activate(on, null, null)
        assert.isFalse(yield* store.pushed(src.id, at(0)), "one topic of two")
        yield* store.activate(off, FAR, null)
        assert.isTrue(yield* store.pushed(src.id, at(0)))
        assert.isTrue(yield* store.pushed(src.id, new Date(FAR.getTime() - 1)))
        assert.isFalse(yield* store.pushed(src.id, FAR), "the lease ends at its time")
        yield* store.end(on, "revoked", "user_removed", null)
        assert.isFalse(yield* store.pushed(src.id, at(0)))
        assert.isFalse(yield* store.pushed("987654321", at(0)), "an unknown source")
      }))

    it.effect("expire: active rows whose lease ended, once; their sources; no lease never expires", () =>
      Effect.gen(function*() {
        const store = yield* PushStore
        const src = yield* source("streaming", "41000301")
        const e1 = yield* create(src, "stream.online", "hook-e1", FAR)
        const e2 = yield* create(src, "stream.offline", "hook-e2", FAR)
        yield* store.activate(e1, at(100), null)
        yield* store.activate(e2, null, null)
        assert.deepStrictEqual(yield* store.expire(at(99)), [])
        assert.isTrue(yield* store.pushed(src.id, at(99)))
        assert.deepStrictEqual(yield* store.expire(at(100)), [src.id], "ended at its time")
        assert.deepInclude(plain(yield* hook("hook-e1")), { state: "expired", leaseExpiresAt: at(100).toISOString() })
        assert.strictEqual((yield* hook("hook-e2")).state, "active")
        assert.isFalse(yield* store.pushed(src.id, at(50)), "expired: polling takes over")
        assert.deepStrictEqual(yield* store.expire(at(200)), [], "once")
        // It is acted on again from the expiry (it had no time of its own).
        const due = yield* store.due(at(100), at(400), 100)
        assert.deepStrictEqual(due.filter((s) => s.sourceId === src.id).map((s) => s.hookId), ["hook-e1"])
      }))

    it.effect("due: claimed once until the retry time, earliest first within the limit; idle rows always", () =>
      Effect.gen(function*() {
        const store = yield* PushStore
        const a = yield* source("streaming", "41000401")
        const b = yield* source("streaming", "41000402")
        const a1 = yield* create(a, "stream.online", "hook-d1", d(10))
        yield* create(a, "stream.offline", "hook-d2", d(20))
        yield* create(b, "stream.online", "hook-d3", d(30))
        yield* create(b, "stream.offline", "hook-d4", FAR)
        const mine = (now: Date, retryAt: Date, limit: number) =>
          Effect.map(store.due(now, retryAt, limit), (rows) =>
            rows.filter((s) => s.hookId.startsWith("hook-d")).map((s) => s.hookId).sort())

        assert.deepStrictEqual(yield* mine(d(5), d(100), 10), [], "nothing due yet")
        assert.deepStrictEqual(yield* mine(d(15), d(100), 10), ["hook-d1"])
        assert.deepStrictEqual(yield* mine(d(15), d(100), 10), [], "claimed: not again before its retry time")
        assert.deepStrictEqual(yield* mine(d(35), d(100), 1), ["hook-d2"], "the earliest within the limit")
        assert.deepStrictEqual(yield* mine(d(35), d(100), 10), ["hook-d3"])
        assert.deepStrictEqual(yield* mine(d(100), d(200), 10), ["hook-d1", "hook-d2", "hook-d3"], "due again at the retry time; not before its own time")
        const claimed = (yield* store.due(d(200), d(300), 10)).find((s) => s.id === a1)!
        assert.deepInclude(plain(claimed), { hookId: "hook-d1", source: { module: "streaming", identifier: "41000401" }, activeFeeds: 1, state: "pending" })

        // The source's only feed disabled, or removed, or the source unknown: due whatever the time.
        yield* disable(b.feedIds[0]!)
        const idle = yield* store.due(d(0), d(1), 10)
        assert.deepStrictEqual(
          idle.filter((s) => s.sourceId === b.id).map((s) => [s.hookId, s.activeFeeds, s.source?.identifier]).sort(),
          [["hook-d3", 0, "41000402"], ["hook-d4", 0, "41000402"]]
        )
        const c = yield* source("streaming", "41000403")
        yield* create(c, "stream.online", "hook-d5", FAR)
        assert.deepStrictEqual((yield* mine(d(0), d(1), 10)).filter((h) => h === "hook-d5"), [], "a source with a feed is not idle")
        yield* removeFeed("streaming", c.feedIds[0]!)
        assert.deepStrictEqual((yield* mine(d(0), d(1), 10)).filter((h) => h === "hook-d5"), ["hook-d5"])
        yield* create({ id: "987654322", module: "streaming", identifier: "41000499" }, "stream.online", "hook-d6", FAR)
        const gone = (yield* store.due(d(0), d(1), 10)).find((s) => s.hookId === "hook-d6")
        assert.deepInclude(gone === undefined ? undefined : plain(gone), { source: null, activeFeeds: 0 })
      }))

    it.effect("unsubscribed: sources with active feeds and no row for a topic of their module, in source order, within the limit", () =>
      Effect.gen(function*() {
        const store = yield* PushStore
        const p1 = yield* source("photo", "ph-contract-1")
        const p2 = yield* source("photo", "ph-contract-2", 2)
        const p3 = yield* source("photo", "ph-contract-3")
        yield* DeliveryStore.use((s) => s.upsertSource("photo", "ph-contract-4"))
        const p5 = yield* source("photo", "ph-contract-5")
        const f1 = yield* source("forum", "fo-contract-1")
        yield* disable(p2.feedIds[1]!)
        yield* disable(p3.feedIds[0]!)
        yield* removeFeed("photo", p5.feedIds[0]!)
        const topics = [{ module: "photo", topic: "websub" as const }, { module: "photo", topic: "stream.online" as const }]
        const pairs = (limit: number, ts = topics) => Effect.map(store.unsubscribed(ts, limit), (l) => l.map((u) => [u.identifier, u.topic, u.module, u.sourceId]))

        assert.deepStrictEqual(yield* pairs(10), [
          ["ph-contract-1", "websub", "photo", p1.id],
          ["ph-contract-2", "websub", "photo", p2.id],
          ["ph-contract-1", "stream.online", "photo", p1.id],
          ["ph-contract-2", "stream.online", "photo", p2.id]
        ], "a source with only disabled feeds, without feeds, or whose feeds were removed wants none")
        assert.deepStrictEqual(yield* pairs(3), [
          ["ph-contract-1", "websub", "photo", p1.id],
          ["ph-contract-2", "websub", "photo", p2.id],
          ["ph-contract-1", "stream.online", "photo", p1.id]
        ])
        assert.deepStrictEqual(yield* pairs(1), [["ph-contract-1", "websub", "photo", p1.id]])
        assert.deepStrictEqual(yield* pairs(0), [])
        assert.deepStrictEqual(yield* pairs(10, []), [])
        assert.deepStrictEqual(yield* pairs(10, [{ module: "forum", topic: "websub" }]), [["fo-contract-1", "websub", "forum", f1.id]])

        yield* create(p1, "websub", "hook-u1", FAR)
        assert.deepStrictEqual(yield* pairs(10), [
          ["ph-contract-2", "websub", "photo", p2.id],
          ["ph-contract-1", "stream.online", "photo", p1.id],
          ["ph-contract-2", "stream.online", "photo", p2.id]
        ], "a row of any state counts")
        yield* disable(p2.feedIds[0]!)
        assert.deepStrictEqual(yield* pairs(10), [["ph-contract-1", "stream.online", "photo", p1.id]], "its last active feed disabled")
      }))

    it.effect("EventSub message ids: taken once per hook until forgotten", () =>
      Effect.gen(function*() {
        const store = yield* PushStore
        assert.isTrue(yield* store.takeMessage("hook-m1", "m-1"))
        assert.isFalse(yield* store.takeMessage("hook-m1", "m-1"), "a repeat")
        assert.isTrue(yield* store.takeMessage("hook-m2", "m-1"), "per hook")
        assert.isTrue(yield* store.takeMessage("hook-m1", "m-2"))
        assert.strictEqual(yield* store.forgetMessages(new Date(Date.now() - 3_600_000)), 0, "none taken an hour ago")
        assert.isFalse(yield* store.takeMessage("hook-m1", "m-2"))
        assert.strictEqual(yield* store.forgetMessages(new Date(Date.now() + 60_000)), 3)
        assert.strictEqual(yield* store.forgetMessages(new Date(Date.now() + 60_000)), 0)
        assert.isTrue(yield* store.takeMessage("hook-m1", "m-1"), "forgotten: taken again")
      }))
  })
