/**
 * The DisableNoticeStore contract: what the disable-notice sweep relies on (delivery.md §8), on
 * every layer. Waiting notices come oldest first within the limit, each with its feed (null once
 * deleted) and the feed's creator (its create entry in the audit log, else its earliest PUSH; null
 * when nobody is known); a claim marks the user's notices sent and takes the user's hour, whatever
 * the bot, unless nothing was left to claim; a release undoes it; a drop closes notices without a
 * message; a bot's token is read back, an unknown bot has none. Unknown ids fail nothing.
 *
 * The layer comes with the FeedsRepo, AuditLog and Bots it reads (the SQL layer joins their
 * tables); the fixture disables a feed (in SQL the disabling transaction's trigger writes the
 * notice) and lets an hour pass for a user. `open` is global: each test reads its own feeds'.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { Layer } from "effect"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import type { EventType } from "../../src/domain/audit/AuditLog.ts"
import { Bots } from "../../src/services/platform/Bots.ts"
import { DisableNoticeStore } from "../../src/services/delivery/DisableNotices.ts"
import type { OpenNotice } from "../../src/services/delivery/DisableNotices.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"

export interface DisableNoticesFixture<R> {
  /** The feed becomes disabled with `reason` (a notice waits). */
  readonly disable: (feedId: string, reason: string | null) => Effect.Effect<void, unknown, R>
  /** The user's last notice was sent over an hour ago. */
  readonly hourPassed: (userId: string) => Effect.Effect<void, unknown, R>
}

export type DisableNoticesLayer<R, E> = Layer.Layer<DisableNoticeStore | FeedsRepo | AuditLog | Bots | R, E>

const BOT = "200000000000000006"
const OTHER_BOT = "200000000000000007"
const SERVER = "300000000000000006"
let counter = 0

/** A stored rss feed of the bot: its id and what a notice should name of it. */
const addFeed = (botId = BOT, serverId = SERVER) =>
  Effect.gen(function*() {
    const n = ++counter
    const identifier = `https://news.test/notice-${n}.xml`
    const inserted = yield* FeedsRepo.use((repo) =>
      repo.insert({
        botId,
        serverId,
        module: "rss",
        feedIdentifier: identifier,
        webhookOptions: {},
        displayInfo: null,
        webhook: { id: `37000000000000${String(n).padStart(4, "0")}`, tokenEnc: "v1.k1.bm9uY2U.Y2lwaGVy", name: "Notice hook", avatar: null, channelId: "310000000000000106" }
      }, 10_000)
    )
    if (inserted._tag !== "Inserted") return yield* Effect.die(new Error(`feed not inserted: ${inserted._tag}`))
    return { id: inserted.feed.id, feed: { module: "rss" as const, botId, serverId, identifier } }
  })

const entry = (
  feed: { readonly id: string; readonly feed: { readonly botId: string; readonly serverId: string } },
  userId: string,
  eventString: string,
  o: { readonly eventType?: EventType; readonly botId?: string; readonly serverId?: string; readonly module?: string } = {}
) =>
  AuditLog.use((log) =>
    log.append({
      botId: o.botId ?? feed.feed.botId,
      serverId: o.serverId ?? feed.feed.serverId,
      actor: { userId, userName: `user ${userId}`, avatar: null },
      module: o.module ?? "rss",
      itemIdentifier: Number(feed.id),
      eventType: o.eventType ?? "PUSH",
      eventString
    })
  )

/** A feed created by `creator` (its create entry), disabled with `reason`: the feed and its notice. */
const disabledFeed = <R>(fixture: DisableNoticesFixture<R>, creator: string, reason: string, botId = BOT) =>
  Effect.gen(function*() {
    const f = yield* addFeed(botId)
    yield* entry(f, creator, `Created rss feed ${f.id} for "${f.feed.identifier}"`)
    yield* fixture.disable(f.id, reason)
    const notice = (yield* openOf([f.id]))[0]
    if (notice === undefined) return yield* Effect.die(new Error(`no notice for feed ${f.id}`))
    return { ...f, notice: notice.id }
  })

/** The waiting notices of these feeds, in the order `open` gives them. */
const openOf = (feedIds: ReadonlyArray<string>) =>
  Effect.map(DisableNoticeStore.use((s) => s.open(10_000)), (all) => all.filter((n) => feedIds.includes(n.feedId)))

const sorted = (ids: ReadonlyArray<string> | null) => ids === null ? null : [...ids].sort()

export const disableNoticesContract = <R, E>(name: string, storeLayer: DisableNoticesLayer<R, E>, fixture: DisableNoticesFixture<R>) =>
  layer(storeLayer, { excludeTestServices: true, timeout: "60 seconds" })(`DisableNoticeStore contract (${name})`, (it) => {
    it.effect("open: waiting notices oldest first, each with its reason, feed and creator; at most the limit", () =>
      Effect.gen(function*() {
        const store = yield* DisableNoticeStore
        const before = (yield* store.open(10_000)).length
        const a = yield* addFeed()
        const b = yield* addFeed()
        const c = yield* addFeed()
        yield* entry(a, "500000000000000001", `Created rss feed ${a.id}`)
        yield* entry(b, "500000000000000002", `Created rss feed ${b.id}`)
        yield* fixture.disable(b.id, "the webhook was deleted (404)")
        yield* fixture.disable(a.id, "the source failed for 24 hours")
        yield* fixture.disable(c.id, null)
        const open = yield* openOf([a.id, b.id, c.id])
        assert.deepStrictEqual(open.map((n): Omit<OpenNotice, "id"> => ({ feedId: n.feedId, reason: n.reason, feed: n.feed, creatorId: n.creatorId })), [
          { feedId: b.id, reason: "the webhook was deleted (404)", feed: b.feed, creatorId: "500000000000000002" },
          { feedId: a.id, reason: "the source failed for 24 hours", feed: a.feed, creatorId: "500000000000000001" },
          { feedId: c.id, reason: null, feed: c.feed, creatorId: null }
        ], "in the order they were disabled")
        assert.strictEqual(new Set(open.map((n) => n.id)).size, 3)
        assert.isTrue(Number(open[0]!.id) < Number(open[1]!.id) && Number(open[1]!.id) < Number(open[2]!.id), "ids ascend")
        const limited = yield* store.open(before + 2)
        assert.strictEqual(limited.length, before + 2)
        assert.deepStrictEqual(limited.slice(before).map((n) => n.feedId), [b.id, a.id], "the oldest first")
        assert.deepStrictEqual(yield* store.open(0), [])
      }))

    it.effect("the creator: the create entry, else the earliest PUSH of that feed; other feeds, bots, servers, modules and events do not count", () =>
      Effect.gen(function*() {
        const created = yield* addFeed()
        yield* entry(created, "510000000000000001", "Updated rss feed: filter_words")
        yield* entry(created, "510000000000000002", `Created rss feed ${created.id}`)
        yield* entry(created, "510000000000000003", "Updated rss feed: custom_header")
        const updatedOnly = yield* addFeed()
        yield* entry(updatedOnly, "510000000000000004", "Edited rss feed", { eventType: "PATCH" })
        yield* entry(updatedOnly, "510000000000000005", "Updated rss feed: one")
        yield* entry(updatedOnly, "510000000000000006", "Updated rss feed: two")
        const nobody = yield* addFeed()
        yield* entry(nobody, "510000000000000007", "Created rss feed", { botId: OTHER_BOT })
        yield* entry(nobody, "510000000000000008", "Created rss feed", { serverId: "300000000000000099" })
        yield* entry(nobody, "510000000000000009", "Created rss feed", { module: "video" })
        yield* entry(nobody, "510000000000000010", "Created rss feed", { eventType: "GET" })
        for (const f of [created, updatedOnly, nobody]) yield* fixture.disable(f.id, "x")
        assert.deepStrictEqual((yield* openOf([created.id, updatedOnly.id, nobody.id])).map((n) => n.creatorId), [
          "510000000000000002",
          "510000000000000005",
          null
        ])
      }))

    it.effect("a feed deleted since: the notice waits without feed and creator", () =>
      Effect.gen(function*() {
        const f = yield* disabledFeed(fixture, "520000000000000001", "gone soon")
        yield* FeedsRepo.use((r) => r.remove({ botId: BOT, serverId: SERVER, module: "rss" }, f.id))
        assert.deepStrictEqual(yield* openOf([f.id]), [{ id: f.notice, feedId: f.id, reason: "gone soon", feed: null, creatorId: null }])
      }))

    it.effect("claim: the notices marked sent, then the user waits an hour whatever the bot; sent ids are not claimed and take no hour", () =>
      Effect.gen(function*() {
        const store = yield* DisableNoticeStore
        const [u1, u2, u3, u4] = ["530000000000000001", "530000000000000002", "530000000000000003", "530000000000000004"]
        const h = yield* disabledFeed(fixture, u1, "h")
        const i = yield* disabledFeed(fixture, u1, "i", OTHER_BOT)
        const j = yield* disabledFeed(fixture, u2, "j")
        const k = yield* disabledFeed(fixture, u1, "k")
        assert.deepStrictEqual(yield* store.claim(u1, [h.notice]), [h.notice])
        assert.deepStrictEqual((yield* openOf([h.id, i.id, j.id, k.id])).map((n) => n.id), [i.notice, j.notice, k.notice], "sent: no longer waiting")
        assert.isNull(yield* store.claim(u1, [i.notice]), "within the hour, even for another bot's feed")
        assert.deepStrictEqual((yield* openOf([i.id])).map((n) => n.id), [i.notice], "not claimed: still waiting")

        assert.deepStrictEqual(yield* store.claim(u2, [h.notice]), [], "nothing left to claim")
        assert.deepStrictEqual(yield* store.claim(u2, [j.notice]), [j.notice], "and the user's hour was not taken by it")
        assert.deepStrictEqual(yield* store.claim(u3, ["987654321"]), [], "unknown ids")
        assert.deepStrictEqual(yield* store.claim(u3, []), [], "no ids")
        assert.deepStrictEqual(sorted(yield* store.claim(u3, [h.notice, i.notice])), [i.notice], "only what still waits")
        assert.isNull(yield* store.claim(u3, [k.notice]))

        yield* fixture.hourPassed(u1)
        assert.deepStrictEqual(yield* store.claim(u1, [k.notice]), [k.notice], "free again after the hour")
        assert.isNull(yield* store.claim(u1, [k.notice]))
        assert.deepStrictEqual(yield* openOf([h.id, i.id, j.id, k.id]), [])
        assert.deepStrictEqual(sorted(yield* store.claim(u4, [k.notice, i.notice, j.notice])), [], "every one sent")
      }))

    it.effect("release: the notices wait again and the user is free; drop: closed without a message; unknown ids fail nothing", () =>
      Effect.gen(function*() {
        const store = yield* DisableNoticeStore
        const [u1, u2] = ["540000000000000001", "540000000000000002"]
        const l = yield* disabledFeed(fixture, u1, "l")
        const m = yield* disabledFeed(fixture, u1, "m")
        assert.deepStrictEqual(sorted(yield* store.claim(u1, [l.notice, m.notice])), sorted([l.notice, m.notice]))
        yield* store.release(u1, [l.notice, m.notice])
        assert.deepStrictEqual((yield* openOf([l.id, m.id])).map((n) => n.id), [l.notice, m.notice], "waiting again, in their order")
        assert.deepStrictEqual(yield* store.claim(u1, [l.notice]), [l.notice], "the user is free again")

        yield* store.drop([m.notice])
        assert.deepStrictEqual(yield* openOf([l.id, m.id]), [])
        assert.deepStrictEqual(yield* store.claim(u2, [m.notice]), [], "a dropped notice is not claimed")
        yield* store.drop([])
        yield* store.drop(["987654321"])
        yield* store.release("549999999999999999", [])
        yield* store.release("549999999999999999", ["987654321"])
      }))

    it.effect("bot tokens: the registered bot's token read back; an unknown bot has none", () =>
      Effect.gen(function*() {
        const store = yield* DisableNoticeStore
        yield* Bots.use((b) => b.upsert({ id: "200000000000000008", name: "NoticeBot", icon: null, token: Redacted.make("bot-token-\"✓\"-8") }))
        const token = yield* store.botToken("200000000000000008")
        assert.strictEqual(Option.isSome(token) && Redacted.value(token.value), "bot-token-\"✓\"-8")
        assert.isTrue(Option.isNone(yield* store.botToken("299999999999999999")))
      }))
  })
