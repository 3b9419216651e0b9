/**
 * The FeedInsightStore contract: what the insight routes rely on (delivery.md §8), on every layer.
 * The delivery log is a feed's finished deliveries (sent, failed, skipped), newest first by time
 * then id, counted exactly; pages of any size add up to it, an empty page past the end; a row that
 * finishes later joins it; a deleted feed takes its log along. The preview's history names every
 * state of the items asked for, of that feed only. A cool-down has one taker at a time, is busy
 * with the seconds left (a busy attempt neither shortens nor extends it), and is free again once
 * it ran out.
 *
 * The fixture writes the deliveries behind the layer as the delivery engine leaves them (the SQL
 * layer reads `feed_deliveries`, which DeliveryStore writes). Each test uses feeds and keys of its own.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Layer } from "effect"
import { FeedInsightStore } from "../../src/services/insight/FeedInsightStore.ts"
import type { MemoryDelivery } from "../layers/FeedInsightStoreMemory.ts"

export type FixtureDelivery = MemoryDelivery

export interface FeedInsightFixture<R> {
  /** A stored feed without deliveries: its id. */
  readonly newFeed: Effect.Effect<string, unknown, R>
  /** Records the deliveries of the feed in this order (their ids ascend). */
  readonly record: (feedId: string, rows: ReadonlyArray<FixtureDelivery>) => Effect.Effect<void, unknown, R>
  /** The delivery of `itemId` moves on: claimed, sent or failed. */
  readonly update: (
    feedId: string,
    itemId: string,
    change: { readonly state: FixtureDelivery["state"]; readonly at: Date; readonly reason: string | null; readonly messageId: string | null }
  ) => Effect.Effect<void, unknown, R>
  /** Deletes the feed (its deliveries go with it). */
  readonly removeFeed: (feedId: string) => Effect.Effect<void, unknown, R>
}

const T0 = Date.parse("2025-03-01T12:00:00Z")
const at = (s: number) => new Date(T0 + s * 1000)

/** Eight deliveries recorded in this order; the log is the seven finished ones in the order of `LOG_ORDER`. */
const ROWS: ReadonlyArray<FixtureDelivery> = [
  { itemId: "a", state: "skipped", at: at(10), title: "A", url: "https://news.test/a", reason: "filter_words: spam" },
  { itemId: "b", state: "sent", at: at(30), title: "B ✓", url: "https://news.test/b", messageId: "1300000000000000001" },
  { itemId: "c", state: "failed", at: at(20), title: null, url: null, reason: "the chat platform refused the message (400: bad)" },
  { itemId: "d", state: "skipped", at: at(30), title: "D", url: null, reason: "older than 24 h" },
  { itemId: "e", state: "pending", at: at(50), title: "E", url: "https://news.test/e" },
  { itemId: "f", state: "sent", at: at(5), title: "F", url: "https://news.test/f", messageId: "1300000000000000002" },
  { itemId: "g", state: "skipped", at: at(40), title: "G", url: "https://news.test/g", reason: "already posted" },
  { itemId: "h", state: "skipped", at: at(30), title: "H", url: "https://news.test/h", reason: "over the per-poll cap of 5" }
]
// Newest first; b, d and h share a time: the later recorded first.
const LOG_ORDER = ["g", "h", "d", "b", "c", "a", "f"]

export const feedInsightStoreContract = <R, E>(
  name: string,
  storeLayer: Layer.Layer<FeedInsightStore | R, E>,
  fixture: FeedInsightFixture<R>
) =>
  layer(storeLayer, { excludeTestServices: true, timeout: "60 seconds" })(`FeedInsightStore contract (${name})`, (it) => {
    it.effect("a feed without deliveries, or an unknown one: no rows, total 0; no history", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const feed = yield* fixture.newFeed
        assert.deepStrictEqual(yield* store.logPage(feed, 1, 10), { total: 0, rows: [] })
        assert.deepStrictEqual(yield* store.logPage("987654321", 1, 10), { total: 0, rows: [] })
        assert.deepStrictEqual(yield* store.logPage("987654321", 3, 1), { total: 0, rows: [] })
        assert.strictEqual((yield* store.history(feed, ["a", "b"])).size, 0)
        assert.strictEqual((yield* store.history("987654321", ["a"])).size, 0)
        assert.strictEqual((yield* store.history(feed, [])).size, 0)
      }))

    it.effect("the log: finished rows only, newest first by time then id, each as it was recorded", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const feed = yield* fixture.newFeed
        yield* fixture.record(feed, ROWS)
        const page = yield* store.logPage(feed, 1, 50)
        assert.strictEqual(page.total, 7, "the pending row is not in the log")
        assert.deepStrictEqual(page.rows.map((r) => r.itemId), LOG_ORDER)
        const ids = page.rows.map((r) => Number(r.id))
        assert.isTrue(ids.every((id) => Number.isSafeInteger(id) && id > 0), page.rows.map((r) => r.id).join())
        assert.strictEqual(new Set(ids).size, 7, "ids are distinct")
        const byItem = new Map(page.rows.map((r) => [r.itemId, r]))
        assert.isAbove(Number(byItem.get("h")!.id), Number(byItem.get("d")!.id))
        assert.isAbove(Number(byItem.get("d")!.id), Number(byItem.get("b")!.id))
        assert.deepStrictEqual({ ...byItem.get("b")!, id: "" }, {
          id: "",
          itemId: "b",
          title: "B ✓",
          url: "https://news.test/b",
          state: "sent",
          reason: null,
          messageId: "1300000000000000001",
          at: at(30)
        })
        assert.deepStrictEqual({ ...byItem.get("c")!, id: "" }, {
          id: "",
          itemId: "c",
          title: null,
          url: null,
          state: "failed",
          reason: "the chat platform refused the message (400: bad)",
          messageId: null,
          at: at(20)
        })
        assert.deepInclude(byItem.get("d")!, { state: "skipped", reason: "older than 24 h", url: null, messageId: null })
      }))

    it.effect("pages of every size add up to the log; the last page may be short; past the end: empty, total kept", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const feed = yield* fixture.newFeed
        yield* fixture.record(feed, ROWS)
        for (const size of [1, 2, 3, 4, 5, 6, 7, 8, 100]) {
          const pages = Math.ceil(7 / size)
          const seen: Array<string> = []
          for (let p = 1; p <= pages; p++) {
            const page = yield* store.logPage(feed, p, size)
            assert.strictEqual(page.total, 7, `size ${size} page ${p}`)
            assert.strictEqual(page.rows.length, Math.min(size, 7 - (p - 1) * size), `size ${size} page ${p}`)
            seen.push(...page.rows.map((r) => r.itemId))
          }
          assert.deepStrictEqual(seen, LOG_ORDER, `pages of ${size}`)
          assert.deepStrictEqual(yield* store.logPage(feed, pages + 1, size), { total: 7, rows: [] }, `size ${size}: the page after the last`)
          assert.deepStrictEqual(yield* store.logPage(feed, pages + 5, size), { total: 7, rows: [] }, `size ${size}: far past the end`)
        }
        // Exact boundaries, written out.
        assert.deepStrictEqual((yield* store.logPage(feed, 7, 1)).rows.map((r) => r.itemId), ["f"])
        assert.deepStrictEqual((yield* store.logPage(feed, 3, 3)).rows.map((r) => r.itemId), ["f"])
        assert.deepStrictEqual((yield* store.logPage(feed, 2, 4)).rows.map((r) => r.itemId), ["c", "a", "f"])
        assert.deepStrictEqual((yield* store.logPage(feed, 2, 7)).rows, [])
      }))

    it.effect("equal times: the later recorded comes first, across a dozen rows", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const feed = yield* fixture.newFeed
        const items = Array.from({ length: 12 }, (_, i) => `same-${String(i).padStart(2, "0")}`)
        yield* fixture.record(feed, items.map((itemId) => ({ itemId, state: "skipped", at: at(0), reason: "x" })))
        assert.deepStrictEqual((yield* store.logPage(feed, 1, 12)).rows.map((r) => r.itemId), items.toReversed())
        assert.deepStrictEqual((yield* store.logPage(feed, 3, 5)).rows.map((r) => r.itemId), ["same-01", "same-00"])
        assert.deepStrictEqual((yield* store.logPage(feed, 2, 5)).rows.map((r) => r.itemId), ["same-06", "same-05", "same-04", "same-03", "same-02"])
      }))

    it.effect("a delivery that finishes later joins the log and its count; one still sending does not", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const feed = yield* fixture.newFeed
        yield* fixture.record(feed, [
          { itemId: "p1", state: "pending", at: at(0), title: "P1" },
          { itemId: "p2", state: "pending", at: at(1), title: "P2" },
          { itemId: "s1", state: "skipped", at: at(2), reason: "filtered" }
        ])
        assert.strictEqual((yield* store.logPage(feed, 1, 10)).total, 1)
        yield* fixture.update(feed, "p1", { state: "sending", at: at(3), reason: null, messageId: null })
        assert.deepStrictEqual((yield* store.logPage(feed, 1, 10)).rows.map((r) => r.itemId), ["s1"], "sending is not finished")
        yield* fixture.update(feed, "p1", { state: "sent", at: at(4), reason: null, messageId: "1300000000000000009" })
        yield* fixture.update(feed, "p2", { state: "failed", at: at(5), reason: "the feed was disabled", messageId: null })
        const page = yield* store.logPage(feed, 1, 10)
        assert.strictEqual(page.total, 3)
        assert.deepStrictEqual(page.rows.map((r) => [r.itemId, r.state, r.reason, r.messageId, r.at]), [
          ["p2", "failed", "the feed was disabled", null, at(5)],
          ["p1", "sent", null, "1300000000000000009", at(4)],
          ["s1", "skipped", "filtered", null, at(2)]
        ])
      }))

    it.effect("history: every state of the items asked for, of this feed only; unknown items absent", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const feed = yield* fixture.newFeed
        const other = yield* fixture.newFeed
        yield* fixture.record(feed, [
          { itemId: "h-pending", state: "pending", at: at(0) },
          { itemId: "h-sending", state: "pending", at: at(0) },
          { itemId: "h-sent", state: "sent", at: at(1), messageId: "1300000000000000003" },
          { itemId: "h-failed", state: "failed", at: at(2), reason: "refused (403)" },
          { itemId: "h-skipped", state: "skipped", at: at(3), reason: "older than 24 h" }
        ])
        yield* fixture.update(feed, "h-sending", { state: "sending", at: at(4), reason: null, messageId: null })
        yield* fixture.record(other, [{ itemId: "h-other", state: "sent", at: at(0) }, { itemId: "h-sent", state: "failed", at: at(0), reason: "other feed" }])
        const history = yield* store.history(feed, ["h-pending", "h-sending", "h-sent", "h-failed", "h-skipped", "h-other", "h-nothing"])
        assert.deepStrictEqual([...history.entries()].sort(([a], [b]) => a.localeCompare(b)), [
          ["h-failed", { state: "failed", reason: "refused (403)" }],
          ["h-pending", { state: "pending", reason: null }],
          ["h-sending", { state: "sending", reason: null }],
          ["h-sent", { state: "sent", reason: null }],
          ["h-skipped", { state: "skipped", reason: "older than 24 h" }]
        ])
        const some = yield* store.history(feed, ["h-skipped"])
        assert.deepStrictEqual([...some.keys()], ["h-skipped"], "only the items asked for")
        assert.deepStrictEqual([...(yield* store.history(other, ["h-sent"])).entries()], [["h-sent", { state: "failed", reason: "other feed" }]])
      }))

    it.effect("a deleted feed takes its log and history along; another feed keeps its own", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const feed = yield* fixture.newFeed
        const other = yield* fixture.newFeed
        yield* fixture.record(feed, [{ itemId: "x1", state: "sent", at: at(1) }, { itemId: "x2", state: "skipped", at: at(2), reason: "r" }])
        yield* fixture.record(other, [{ itemId: "x1", state: "skipped", at: at(1), reason: "r" }])
        assert.strictEqual((yield* store.logPage(feed, 1, 10)).total, 2)
        yield* fixture.removeFeed(feed)
        assert.deepStrictEqual(yield* store.logPage(feed, 1, 10), { total: 0, rows: [] })
        assert.strictEqual((yield* store.history(feed, ["x1", "x2"])).size, 0)
        const kept = yield* store.logPage(other, 1, 10)
        assert.strictEqual(kept.total, 1)
        assert.deepStrictEqual(kept.rows.map((r) => r.itemId), ["x1"])
      }))

    it.effect("a cool-down: one taker among concurrent callers, busy with the seconds left; other keys free", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const results = yield* Effect.forEach(Array.from({ length: 8 }), () => store.cooldown("test:contract-1", 60), { concurrency: "unbounded" })
        assert.strictEqual(results.filter((r) => r._tag === "Taken").length, 1, JSON.stringify(results))
        for (const r of results) {
          if (r._tag === "Busy") assert.isTrue(r.retryAfterSeconds >= 1 && r.retryAfterSeconds <= 60, String(r.retryAfterSeconds))
        }
        assert.deepStrictEqual(yield* store.cooldown("test:contract-2", 60), { _tag: "Taken" })
        assert.deepStrictEqual(yield* store.cooldown("refresh:contract-1", 60), { _tag: "Taken" }, "keys are whole strings")
        // A busy attempt with another length neither shortens nor extends the running one.
        const shorter = yield* store.cooldown("test:contract-1", 1)
        assert.strictEqual(shorter._tag, "Busy")
        if (shorter._tag === "Busy") assert.isTrue(shorter.retryAfterSeconds > 30 && shorter.retryAfterSeconds <= 60, String(shorter.retryAfterSeconds))
        const longer = yield* store.cooldown("test:contract-1", 3600)
        assert.strictEqual(longer._tag, "Busy")
        if (longer._tag === "Busy") assert.isTrue(longer.retryAfterSeconds > 30 && longer.retryAfterSeconds <= 60, String(longer.retryAfterSeconds))
      }))

    it.effect("a cool-down is free again once its time has passed, and the new taker's length holds", () =>
      Effect.gen(function*() {
        const store = yield* FeedInsightStore
        const key = "test:contract-expiry"
        assert.deepStrictEqual(yield* store.cooldown(key, 1), { _tag: "Taken" })
        // Wait for the condition, not for a time: busy (for at most a second) until it is free.
        let outcome = yield* store.cooldown(key, 120)
        for (let i = 0; outcome._tag === "Busy" && i < 100; i++) {
          assert.strictEqual(outcome.retryAfterSeconds, 1, "at most the second asked for is left")
          yield* Effect.sleep("100 millis")
          outcome = yield* store.cooldown(key, 120)
        }
        assert.deepStrictEqual(outcome, { _tag: "Taken" }, "free again after its second")
        const after = yield* store.cooldown(key, 1)
        assert.strictEqual(after._tag, "Busy")
        if (after._tag === "Busy") assert.isAbove(after.retryAfterSeconds, 60, "held for the new taker's 120 s")
      }))
  })
