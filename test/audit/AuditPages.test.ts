/**
 * `audit_page` (migration 0012_audit_pages) against the exact OFFSET query, at every bucket boundary
 * of a dense month, dense days and their hours, sparse months, the direct-read threshold and the
 * end; and the plan it reads a page with: generic plans (0012) must still read a small server's
 * page through its own index, not by filtering a busier server's entries out of `audit_at`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const BOT = "100"
const BUSY = "7001"
const SMALL = "7002"
const HOUR = 3_600_000
const DAY = 24 * HOUR
// Two dense days (hour counts) in one dense 32-day block, then sparse blocks further back.
const DENSE_DAY = Date.UTC(2024, 2, 10)
const BUSY_ROWS = [
  { from: DENSE_DAY, count: 2600, step: Math.floor(DAY / 2600) },
  { from: DENSE_DAY - 3 * DAY + 7 * HOUR, count: 1200, step: Math.floor((17 * HOUR) / 1200) },
  { from: DENSE_DAY - 200 * DAY, count: 300, step: Math.floor((100 * DAY) / 300) }
]

interface Entry {
  readonly id: string
  readonly at: Date
}

const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let item = 0
  for (const r of BUSY_ROWS) {
    // Through the counting triggers, as appends; a few equal timestamps (ties broken by id).
    yield* sql`INSERT INTO audit_entries (bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
      SELECT ${BOT}, ${BUSY}, to_timestamp((${r.from}::int8 + (g - g % 5 * (g % 2)) * ${r.step}::int8) / 1000.0), '42', 'ada', NULL,
        (ARRAY['forms','photo','forum','rss','streaming','microblog','video'])[1 + (g * 3) % 7], ${item} + g, 'PUSH', 'e'
      FROM generate_series(1, ${r.count}) AS g`
    item += r.count
  }
  // A small server whose entries are older than most of the busy one's.
  yield* sql`INSERT INTO audit_entries (bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
    SELECT ${BOT}, ${SMALL}, to_timestamp((${DENSE_DAY - 150 * DAY}::int8 + g * 3600000) / 1000.0), '42', 'ada', NULL,
      CASE WHEN g % 2 = 0 THEN 'rss' ELSE 'forms' END, g, 'PUSH', 'e'
    FROM generate_series(1, 60) AS g`
  yield* sql`ANALYZE audit_entries`
})

type Filter = { readonly module: string | null; readonly start: Date | null; readonly end: Date | null }

const whereOf = (sql: SqlClient.SqlClient, server: string, f: Filter) =>
  sql.and([
    sql`server_id = ${server}`,
    sql`bot_id = ${BOT}`,
    ...(f.module === null ? [] : [sql`module_name = ${f.module}`]),
    ...(f.start === null ? [] : [sql`at >= ${f.start}`]),
    ...(f.end === null ? [] : [sql`at <= ${f.end}`])
  ])

const totalOf = (server: string, f: Filter) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [count] = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM audit_entries WHERE ${whereOf(sql, server, f)}`
    return Number(count!.n)
  })

/** The page by the plain OFFSET query (the definition). */
const exact = (server: string, f: Filter, offset: number, limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Entry>`SELECT id::text AS id, at FROM audit_entries WHERE ${whereOf(sql, server, f)}
      ORDER BY at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`
    return rows.map((r) => r.id)
  })

const page = (server: string, f: Filter, offset: number, limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ total: string; located: boolean; id: string | null }>`SELECT total::text AS total, located, id::text AS id
      FROM audit_page(${server}, ${BOT}, ${f.module}, ${f.start}, ${f.end}, ${offset}::int8, ${limit})`
    assert.isTrue(rows.length > 0 && rows.every((r) => r.located), `located at offset ${offset}`)
    return { total: Number(rows[0]!.total), ids: rows.flatMap((r) => (r.id === null ? [] : [r.id])) }
  })

/** Offsets where the walk changes bucket (newest first), at every level, with their neighbours. */
const boundaries = (server: string, f: Filter) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const where = whereOf(sql, server, f)
    const runs = yield* sql<{ run: string }>`SELECT DISTINCT (sum(n) OVER (PARTITION BY level ORDER BY bucket DESC))::text AS run
      FROM (SELECT l.level, audit_bucket(at, l.level) AS bucket, count(*) AS n FROM audit_entries CROSS JOIN (VALUES (0), (1), (2)) AS l(level)
        WHERE ${where} GROUP BY 1, 2) b`
    const offsets = new Set([0, 1, 49, 50, 199, 200, 201, 999, 1000, 1001])
    for (const r of runs) for (const d of [-1, 0, 1]) offsets.add(Number(r.run) + d)
    return [...offsets].filter((o) => o >= 0).sort((a, b) => a - b)
  })

const layerOf = (kind: (typeof dbKinds)[number]) => AuditLogSql.pipe(Layer.provideMerge(testDb(kind)))

for (const kind of dbKinds) {
  layer(layerOf(kind), { timeout: 300_000, excludeTestServices: true })(`audit pages (${kind})`, (it) => {
    it.effect("seed: a busy server (dense block, dense days, hours, sparse blocks) and a small one", () => seed)

    const filters: ReadonlyArray<[string, Filter]> = [
      ["all modules", { module: null, start: null, end: null }],
      ["one module", { module: "rss", start: null, end: null }],
      // Bounds that cut an hour, a day and a 32-day block at both ends.
      ["time window", { module: null, start: new Date(DENSE_DAY - 3 * DAY + 9 * HOUR + 1234), end: new Date(DENSE_DAY + 17 * HOUR + 4321) }],
      ["module and window", { module: "forum", start: new Date(DENSE_DAY - 190 * DAY), end: new Date(DENSE_DAY + 5 * HOUR + 1) }]
    ]
    for (const [name, f] of filters) {
      it.effect(`every bucket boundary agrees with OFFSET: ${name}`, () =>
        Effect.gen(function*() {
          const offsets = yield* boundaries(BUSY, f)
          const total = yield* totalOf(BUSY, f)
          assert.isAbove(total, 200)
          for (const o of [...offsets, total - 1, total, total + 1]) {
            // A page ending at the boundary, one starting there, one across the next.
            for (const limit of o % 2 === 0 ? [1, 100] : [50]) {
              const got = yield* page(BUSY, f, o, limit)
              assert.deepStrictEqual(got, { total, ids: yield* exact(BUSY, f, o, limit) }, `offset ${o}, limit ${limit}`)
            }
          }
        }))
    }

    it.effect("the service answers the same pages (page_max from the counts)", () =>
      Effect.gen(function*() {
        const log = yield* AuditLog
        const all = { module: null, start: null, end: null }
        const total = yield* totalOf(BUSY, all)
        for (const p of [1, 2, 5, 21, 40, 41, Math.ceil(total / 50), Math.ceil(total / 50) + 1]) {
          const answer = yield* log.query({ botId: BOT, serverId: BUSY }, { page: String(p), page_size: "50" })
          const want = yield* exact(BUSY, all, (p - 1) * 50, 50)
          assert.deepStrictEqual({ ids: answer.logs.map((l) => l.id), max: answer.page_max }, { ids: want, max: Math.ceil(total / 50) })
        }
      }))

    it.effect("a small server's page is read through its own index, not past the busy server's entries", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // A table the size where a generic plan starts to prefer `audit_at` (measured: from ~300,000
        // entries, most of one server, newer than the small server's). Only the planner's statistics
        // need them: loaded without the counting triggers, and this server's pages are never read.
        yield* sql`ALTER TABLE audit_entries DISABLE TRIGGER USER`
        yield* sql`INSERT INTO audit_entries (bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
          SELECT ${BOT}, '7003', to_timestamp((${DENSE_DAY - 140 * DAY}::int8 + g * ${Math.floor((140 * DAY) / 300_000)}::int8) / 1000.0),
            '42', 'ada', NULL, (ARRAY['forms','photo','forum','rss','streaming','microblog','video'])[1 + g % 7], g, 'PUSH', 'e'
          FROM generate_series(1, 300000) AS g`
        yield* sql`ALTER TABLE audit_entries ENABLE TRIGGER USER`
        yield* sql`ANALYZE audit_entries`
        // Rows this transaction fetched from audit_entries (pending statistics of this backend).
        const fetched = sql<{ n: string }>`SELECT (coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::text AS n
          FROM pg_stat_xact_user_tables WHERE relid = 'audit_entries'::regclass`.pipe(Effect.map((r) => Number(r[0]?.n ?? 0)))
        for (const module of [null, "rss"]) {
          const read = yield* sql.withTransaction(Effect.gen(function*() {
            const before = yield* fetched
            // Several calls: the generic plan is the one that serves a connection's later calls.
            for (let i = 0; i < 8; i++) yield* page(SMALL, { module, start: null, end: null }, i % 2 === 0 ? 0 : 10, 10)
            return (yield* fetched) - before
          }))
          // 8 pages of 10 after at most 10 skipped: ~160 rows; filtering the busy server's would be ~300,000.
          assert.isAtMost(read, 400, `module ${module}: ${read} rows fetched`)
        }
      }), 120_000) // 300,000 rows loaded: ~10 s quiet on PGlite, 39 s once at load 13 (over the 30 s default)
  })
}
