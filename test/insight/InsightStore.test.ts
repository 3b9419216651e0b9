/**
 * The insight store on each database (delivery.md §8): the delivery log as the worker's own store
 * writes it (DeliveryStoreSql), paged newest first with the audit log's rules, its count kept
 * exact through inserts, state changes, retention and a feed's delete; the preview's history; the
 * cool-downs (one winner among concurrent takers, busy with the time left, free again after).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DeliveryStoreSql } from "../../src/layers/delivery/DeliveryStoreSql.ts"
import { FeedInsightStoreSql } from "../../src/layers/insight/FeedInsightStoreSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import type { NewDelivery } from "../../src/services/delivery/DeliveryStore.ts"
import { FeedInsightStore } from "../../src/services/insight/FeedInsightStore.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const Env = (kind: (typeof dbKinds)[number]) =>
  Layer.mergeAll(FeedInsightStoreSql, DeliveryStoreSql).pipe(
    Layer.provideMerge(Cipher.layer(parseKeyring(generateKey()))),
    Layer.provideMerge(testDb(kind))
  )

let feedCount = 0
const newFeed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const n = feedCount++
  const rows = yield* sql<{ id: unknown }>`INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options,
      webhook_id, webhook_token_enc, webhook_name, webhook_channel_id)
    VALUES ('200000000000000002', '300000000000000001', 'rss', ${`https://example.com/${n}.xml`}, '{}'::jsonb,
      ${`90000000000000000${n}`}, 'unused', 'hook', '310000000000000002')
    RETURNING id`
  return String(rows[0]!.id)
})

const row = (feedId: string, i: number, state: "pending" | "skipped"): NewDelivery => ({
  feedId,
  webhookId: `wh-${feedId}`,
  itemId: `item-${i}`,
  title: `Item ${i}`,
  url: `https://example.com/items/${i}`,
  eventAt: new Date(Date.UTC(2024, 0, 1, 0, 0, i)),
  state,
  reason: state === "skipped" ? `filter_words: no element in the title (${i})` : null,
  body: state === "pending" ? { content: `Item ${i}` } : null
})

/** Ids of the feed's deliveries in `state`, oldest first. */
const idsIn = (feedId: string, state: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: unknown }>`SELECT id FROM feed_deliveries WHERE feed_id = ${feedId} AND state = ${state} ORDER BY id`.pipe(
      Effect.map((rows) => rows.map((r) => String(r.id)))
    ))

/** Every finished row of the feed, newest first by (at, id): what the pages must add up to. */
const expectedOrder = (feedId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: unknown }>`SELECT id FROM feed_deliveries WHERE feed_id = ${feedId}
      AND state IN ('sent', 'failed', 'skipped') ORDER BY at DESC, id DESC`.pipe(Effect.map((rows) => rows.map((r) => String(r.id)))))

const storedCount = (feedId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: unknown }>`SELECT n FROM feed_delivery_log_counts WHERE feed_id = ${feedId}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? null : Number(rows[0].n)))
    ))

for (const kind of dbKinds) {
  layer(Env(kind), { excludeTestServices: true, timeout: 60_000 })(`feed insight store (${kind})`, (it) => {
    it.effect("the log: sent (with message id), failed and skipped rows, never pending ones; the count follows every change", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const insight = yield* FeedInsightStore
        const feed = yield* newFeed
        const other = yield* newFeed
        yield* store.insertDeliveries([row(feed, 1, "pending"), row(feed, 2, "skipped"), row(feed, 3, "pending"), row(other, 1, "skipped")])
        let page = yield* insight.logPage(feed, 1, 10)
        assert.strictEqual(page.total, 1, "pending rows are not in the log")
        assert.deepStrictEqual(page.rows.map((r) => [r.itemId, r.state, r.reason]), [["item-2", "skipped", "filter_words: no element in the title (2)"]])

        const [first, second] = yield* idsIn(feed, "pending")
        assert.isTrue(yield* store.claim(first!))
        assert.strictEqual((yield* insight.logPage(feed, 1, 10)).total, 1, "sending is not finished either")
        yield* store.markSent(first!, "1300000000000000042", new Date())
        yield* store.markFailed(second!, "the chat platform refused the message (400: bad)")
        page = yield* insight.logPage(feed, 1, 10)
        assert.strictEqual(page.total, 3)
        const byItem = new Map(page.rows.map((r) => [r.itemId, r]))
        assert.deepInclude(byItem.get("item-1")!, { state: "sent", messageId: "1300000000000000042", reason: null, title: "Item 1" })
        assert.deepInclude(byItem.get("item-3")!, { state: "failed", messageId: null, reason: "the chat platform refused the message (400: bad)" })
        assert.deepStrictEqual(page.rows.map((r) => r.id), yield* expectedOrder(feed), "newest first")
        assert.strictEqual((yield* insight.logPage(other, 1, 10)).total, 1, "each feed its own log")

        const history = yield* insight.history(feed, ["item-1", "item-2", "item-3", "item-9"])
        assert.deepStrictEqual([...history.entries()].sort(), [
          ["item-1", { state: "sent", reason: null }],
          ["item-2", { state: "skipped", reason: "filter_words: no element in the title (2)" }],
          ["item-3", { state: "failed", reason: "the chat platform refused the message (400: bad)" }]
        ])

        // A deleted feed takes its log and its count with it.
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM feeds WHERE id = ${feed}`
        assert.strictEqual(yield* storedCount(feed), null)
        assert.strictEqual(yield* storedCount(other), 1)
      }))

    it.effect("paging: newest first, every size adds up to the whole log (both halves, equal times), the audit log's edges", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const insight = yield* FeedInsightStore
        const sql = yield* SqlClient.SqlClient
        const feed = yield* newFeed
        yield* store.insertDeliveries(Array.from({ length: 23 }, (_, i) => row(feed, i, "skipped")))
        // Equal times: the order falls back to the id, newest first.
        yield* sql`UPDATE feed_deliveries SET at = '2024-01-01T00:00:00Z' WHERE feed_id = ${feed} AND item_id IN ('item-3', 'item-4', 'item-5')`
        const all = yield* expectedOrder(feed)
        assert.strictEqual(all.length, 23)
        for (const size of [1, 2, 3, 5, 7, 10, 23, 100]) {
          const pages = Math.max(1, Math.ceil(23 / size))
          const seen: Array<string> = []
          for (let p = 1; p <= pages; p++) {
            const page = yield* insight.logPage(feed, p, size)
            assert.strictEqual(page.total, 23)
            assert.strictEqual(page.rows.length, Math.min(size, 23 - (p - 1) * size), `size ${size} page ${p}`)
            seen.push(...page.rows.map((r) => r.id))
          }
          assert.deepStrictEqual(seen, all, `pages of ${size}`)
          assert.deepStrictEqual((yield* insight.logPage(feed, pages + 1, size)).rows, [], "above page_max: empty")
        }
        const empty = yield* newFeed
        assert.deepStrictEqual(yield* insight.logPage(empty, 1, 10), { total: 0, rows: [] })
      }))

    it.effect("retention: finished rows older than the cut-off go, the count with them; the log shows the rest", () =>
      Effect.gen(function*() {
        const store = yield* DeliveryStore
        const insight = yield* FeedInsightStore
        const sql = yield* SqlClient.SqlClient
        const feed = yield* newFeed
        yield* store.insertDeliveries([row(feed, 1, "skipped"), row(feed, 2, "skipped"), row(feed, 3, "skipped"), row(feed, 4, "pending")])
        const day = 86_400_000
        yield* sql`UPDATE feed_deliveries SET at = ${new Date(Date.now() - 31 * day)} WHERE feed_id = ${feed} AND item_id IN ('item-1', 'item-4')`
        yield* sql`UPDATE feed_deliveries SET at = ${new Date(Date.now() - 29 * day)} WHERE feed_id = ${feed} AND item_id = 'item-2'`
        yield* store.retention({ seenBefore: new Date(0), deliveriesBefore: new Date(Date.now() - 30 * day) })
        const page = yield* insight.logPage(feed, 1, 10)
        assert.strictEqual(page.total, 2)
        assert.deepStrictEqual(page.rows.map((r) => r.itemId).sort(), ["item-2", "item-3"])
        assert.strictEqual((yield* idsIn(feed, "pending")).length, 1, "an unfinished delivery is kept")
      }))

    it.effect("cool-downs: one taker among many, busy with the seconds left, other keys free, free again once it ran out", () =>
      Effect.gen(function*() {
        const insight = yield* FeedInsightStore
        const key = `test:${kind}:1`
        const results = yield* Effect.forEach(Array.from({ length: 8 }), () => insight.cooldown(key, 10), { concurrency: "unbounded" })
        assert.strictEqual(results.filter((r) => r._tag === "Taken").length, 1, JSON.stringify(results))
        for (const r of results) {
          if (r._tag === "Busy") assert.isTrue(r.retryAfterSeconds >= 1 && r.retryAfterSeconds <= 10, String(r.retryAfterSeconds))
        }
        assert.strictEqual((yield* insight.cooldown(`test:${kind}:2`, 10))._tag, "Taken")
        // A 1 s cool-down taken again at once: busy, 1 s left (never 0). The second take must come
        // within the second for that: where this machine took longer (timed around both calls, the
        // database's clock being this one), the cool-down was free again, and another key is tried.
        let short: string | undefined
        for (let attempt = 1; attempt <= 5 && short === undefined; attempt++) {
          const key = `refresh:${kind}:${attempt}`
          const t0 = Date.now()
          assert.strictEqual((yield* insight.cooldown(key, 1))._tag, "Taken")
          const again = yield* insight.cooldown(key, 1)
          const elapsed = Date.now() - t0
          if (again._tag === "Busy") {
            assert.deepStrictEqual(again, { _tag: "Busy", retryAfterSeconds: 1 })
            short = key
          } else {
            assert.isAtLeast(elapsed, 950, `taken again ${elapsed} ms after it was taken for 1 s`)
          }
        }
        assert.isDefined(short, "never two takes within a second")
        yield* Effect.sleep("1100 millis")
        assert.strictEqual((yield* insight.cooldown(short!, 1))._tag, "Taken")
      }))
  })
}
