/**
 * The sharded audit counters under real concurrency (PostgreSQL only: PGlite has one connection):
 * concurrent writers on many connections into dense months, with a deleter pushing a month below
 * the density threshold and back; every level's counts must equal a recomputation.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AUDIT_DENSE } from "../../src/layers/audit/AuditBuckets.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const check = (server: string) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Every level: sums over shards equal recomputation for months (all), and for days/hours of dense months.
  const bad = yield* sql<{ level: number; bucket: string; have: string; want: string }>`
    WITH e AS (SELECT at, module_name FROM audit_entries WHERE server_id = ${server}),
    m AS (SELECT audit_bucket(at, 2) b, count(*) n, count(*) FILTER (WHERE module_name='forms') f FROM e GROUP BY 1),
    want AS (
      SELECT 2 AS level, b AS bucket, n, f FROM m
      UNION ALL SELECT 1, audit_bucket(at, 1), count(*), count(*) FILTER (WHERE module_name='forms') FROM e WHERE audit_bucket(at, 2) IN (SELECT b FROM m WHERE n > ${AUDIT_DENSE}) GROUP BY 2
      UNION ALL SELECT 0, audit_bucket(at, 0), count(*), count(*) FILTER (WHERE module_name='forms') FROM e WHERE audit_bucket(at, 2) IN (SELECT b FROM m WHERE n > ${AUDIT_DENSE}) GROUP BY 2),
    have AS (SELECT level, bucket, n, forms f FROM audit_count_sums WHERE server_id = ${server} AND n <> 0)
    SELECT coalesce(w.level, h.level) level, coalesce(w.bucket, h.bucket)::text bucket, h.n::text || '/' || h.f::text have, w.n::text || '/' || w.f::text want
    FROM want w FULL JOIN have h ON h.level = w.level AND h.bucket = w.bucket
    WHERE h.n IS DISTINCT FROM w.n OR h.f IS DISTINCT FROM w.f`
  const shards = yield* sql<{ n: number }>`SELECT count(DISTINCT shard)::int n FROM audit_count_shards WHERE server_id = ${server}`
  const dense = yield* sql<{ n: number }>`SELECT count(*)::int n FROM audit_count_shards WHERE server_id = ${server} AND dense`
  return { bad, shards: shards[0]!.n, dense: dense[0]!.n }
})

// Real contention needs PostgreSQL's many connections (CI sets TEST_DATABASE_URL); on PGlite's one
// connection the same writes interleave transaction by transaction, which still checks the arithmetic.
for (const kind of dbKinds) layer(testDb(kind), { timeout: 300_000, excludeTestServices: true })(`sharded audit counters (${kind})`, (it) => {
  it.effect("concurrent inserts and deletes keep exact counts", () => Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const server = `9${Date.now()}`
    const base = Date.now() - 3 * 86_400_000
    const ins = (i: number) => sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO audit_entries (bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
        VALUES ('1', ${server}, ${new Date(base + (i % 97) * 1_900_000 + i)}, '42', 'a', NULL, ${i % 3 === 0 ? "forms" : "rss"}, ${i}, 'PUSH', 'x')`
      // Holds the transaction open so that writers overlap: PostgreSQL only (PGlite's one connection runs them one after another anyway).
      if (kind === "postgres") yield* Effect.sleep(`${i % 4} millis`)
    }))
    yield* Effect.forEach(Array.from({ length: 2600 }, (_, i) => i), ins, { concurrency: 20, discard: true })
    const mid = yield* check(server)
    assert.deepStrictEqual(mid.bad, [])
    // Several connections write to several shards (shard 0 plus one per connection's pid).
    if (kind === "postgres") assert.isAbove(mid.shards, 2)
    else assert.isAtLeast(mid.shards, 2)
    // Concurrent inserts and deletes: deletes drop the month below dense and back up.
    const del = (i: number) => sql`DELETE FROM audit_entries WHERE id IN (SELECT id FROM audit_entries WHERE server_id = ${server} ORDER BY id LIMIT 50 OFFSET ${i})`
    yield* Effect.all([
      Effect.forEach(Array.from({ length: 400 }, (_, i) => 3000 + i), ins, { concurrency: 8, discard: true }),
      Effect.forEach(Array.from({ length: 40 }, (_, i) => i), del, { concurrency: 1, discard: true })
    ], { concurrency: "unbounded" })
    const end = yield* check(server)
    assert.deepStrictEqual(end.bad, [])
    const view = yield* sql<{ level: number; n: string }>`SELECT level, sum(n)::text n FROM audit_counts WHERE server_id = ${server} GROUP BY 1 ORDER BY 1`
    const total = yield* sql<{ n: string }>`SELECT count(*)::text n FROM audit_entries WHERE server_id = ${server}`
    assert.strictEqual(view.find((v) => v.level === 2)!.n, total[0]!.n)
    // Thousands of concurrent statements: 30 s (the default) was not enough on a loaded 2-core machine.
  }), 120_000)
})
