/**
 * The delivery log at scale (PostgreSQL with TEST_DATABASE_URL, and PGlite): the page query reads the
 * partial index `feed_deliveries_log` alone (an index-only scan, no sequential scan, no sort of
 * the log) up to its offset, from the nearer end, and the count comes from the kept counter.
 * 100,000 rows here (20,000 on PGlite) keep the file quick. Measured by hand at 1,000,000 rows of one feed (plus
 * 100,000 of another), PostgreSQL 16, warm cache, two loaded cores: page 1 of 10 → 14 ms, page 2
 * of 100 → 4 ms, the deepest pages (100,000 of 10; 10,000 of 100) → 7–8 ms, the middle (page
 * 50,000 of 10, offset 500,000) → 56–85 ms; the count is one row read at any size.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { FeedInsightStoreSql } from "../../src/layers/insight/FeedInsightStoreSql.ts"
import { FeedInsightStore } from "../../src/services/insight/FeedInsightStore.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Relation Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodes = (n: PlanNode): ReadonlyArray<PlanNode> => [n, ...(n.Plans ?? []).flatMap(nodes)]

for (const kind of dbKinds) {
  // PGlite (the same planner, single-threaded in this process) gets a smaller log.
  const N = kind === "postgres" ? 100_000 : 20_000
  layer(FeedInsightStoreSql.pipe(Layer.provideMerge(testDb(kind))), { excludeTestServices: true, timeout: 60_000 })(
    `delivery log at scale (${kind})`,
    (it) => {
      it.effect(`${N.toLocaleString("en")} rows: first, middle and last pages through the index only; exact pages`, () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const insight = yield* FeedInsightStore
          const feeds = yield* sql<{ id: unknown }>`INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options,
              webhook_id, webhook_token_enc, webhook_name, webhook_channel_id)
            VALUES ('b', 's', 'rss', 'x', '{}', 'w', 't', 'n', 'c'), ('b', 's', 'rss', 'y', '{}', 'w', 't', 'n', 'c') RETURNING id`
          const [feed, other] = feeds.map((f) => String(f.id))
          yield* sql`INSERT INTO feed_deliveries (feed_id, item_id, title, url, state, webhook_id, event_at, at)
            SELECT CASE WHEN g % 10 = 0 THEN ${other} ELSE ${feed} END::bigint, 'i' || g, 'Title ' || g, 'https://e.com/' || g,
              CASE WHEN g % 7 = 0 THEN 'pending' WHEN g % 3 = 0 THEN 'skipped' ELSE 'sent' END, 'w',
              now() - g * interval '1 second', now() - g * interval '1 second'
            FROM generate_series(1, ${N}) g`
          yield* sql`ANALYZE feed_deliveries`
          const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM feed_deliveries
            WHERE feed_id = ${feed} AND state IN ('sent', 'failed', 'skipped')`
          const total = Number(n)

          const size = 100
          const last = Math.ceil(total / size)
          for (const page of [1, Math.floor(last / 2), last]) {
            const got = yield* insight.logPage(feed!, page, size)
            assert.strictEqual(got.total, total)
            const offset = (page - 1) * size
            const want = yield* sql<{ id: unknown }>`SELECT id FROM feed_deliveries WHERE feed_id = ${feed}
              AND state IN ('sent', 'failed', 'skipped') ORDER BY at DESC, id DESC LIMIT ${size} OFFSET ${offset}`
            assert.deepStrictEqual(got.rows.map((r) => r.id), want.map((r) => String(r.id)), `page ${page}`)
          }

          for (const [order, offset] of [["at DESC, id DESC", 0], ["at DESC, id DESC", total / 2], ["at, id", 0]] as const) {
            const explained = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
              `EXPLAIN (FORMAT JSON) SELECT id, item_id, title, url, state, reason, message_id, at FROM feed_deliveries
                WHERE id IN (SELECT id FROM feed_deliveries WHERE feed_id = ${feed} AND state IN ('sent', 'failed', 'skipped')
                  ORDER BY ${order} LIMIT ${size} OFFSET ${Math.floor(offset)}) AND feed_id = ${feed} ORDER BY ${order}`
            )
            const all = nodes(explained[0]!["QUERY PLAN"][0]!.Plan)
            const types = all.map((p) => p["Node Type"])
            assert.notInclude(types, "Seq Scan", JSON.stringify(types))
            assert.isTrue(
              all.some((p) => p["Node Type"] === "Index Only Scan" && p["Index Name"] === "feed_deliveries_log"),
              `the log index, index only: ${JSON.stringify(all.map((p) => [p["Node Type"], p["Index Name"]]))}`
            )
          }
        }))
    }
  )
}
