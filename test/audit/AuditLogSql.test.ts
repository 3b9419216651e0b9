/** SQL-only behaviour: transactions, the counts, and agreement with the in-memory model at depth. */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import type { AuditLogQuery } from "../../src/domain/audit/AuditLog.ts"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { AUDIT_COUNT_MODULES, AUDIT_DENSE, AUDIT_LEVEL_SECONDS } from "../../src/layers/audit/AuditBuckets.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { purgeExpired } from "../../src/layers/audit/AuditRetention.ts"
import { AuditLogMemory, AuditLogMemoryStore } from "../layers/AuditLogMemory.ts"
import { inspect } from "node:util"
import { dbKinds } from "../utils/Db.ts"
import { BOT, entry, freshServer, sqlLayer } from "./AuditFixtures.ts"

const HOUR = 3_600_000
const MODULES = ["forms", "photo", "rss", "video"]

/** A small deterministic PRNG, so a failure replays. */
const prng = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

const countRows = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [entries] = yield* sql<{ n: bigint }>`SELECT count(*)::int8 AS n FROM audit_entries WHERE server_id = ${serverId}`
    const levels = yield* sql<{ level: number; n: bigint }>`SELECT level, sum(n)::int8 AS n FROM audit_counts
      WHERE server_id = ${serverId} GROUP BY level ORDER BY level`
    return { entries: Number(entries!.n), levels: levels.map((l) => Number(l.n)) }
  })

interface Seeded {
  readonly at: number
  readonly module: string
  readonly item: number
}

/** Bursty entries: equal timestamps, quiet days, dense hours (every count level and density change). */
const generate = (count: number, seed: number, origin: number, quiet = 0.03, scale = 1): Array<Seeded> => {
  const random = prng(seed)
  let at = origin
  return Array.from({ length: count }, (_, i) => {
    const r = random()
    at += Math.floor(scale * (r < 0.15 ? 0 : r < 0.85 ? random() * 60_000 : r < 1 - quiet ? random() * HOUR : random() * 20 * 24 * HOUR))
    return { at, module: MODULES[Math.floor(random() * MODULES.length)]!, item: i + 1 }
  })
}

/** One multi-row INSERT per chunk: the triggers see whole statements, as a bulk load would. */
const bulkInsert = (serverId: string, rows: ReadonlyArray<Seeded>, chunk = 400) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let i = 0; i < rows.length; i += chunk) {
      const part = rows.slice(i, i + chunk).map((r) => ({
        bot_id: BOT, server_id: serverId, at: new Date(r.at), user_id: "42", user_name: "ada", user_avatar: null,
        module_name: r.module, item_identifier: r.item, event_type: "PUSH", event_string: `event ${r.item}`
      }))
      yield* sql`INSERT INTO audit_entries ${sql.insert(part as [typeof part[0], ...typeof part])}`
    }
  })

/** audit_counts as the invariant says it must be, recomputed from the entries. */
const expectedCounts = (rows: ReadonlyArray<{ at: number; module: string }>) => {
  const table = new Map<string, Record<string, number>>()
  const bump = (level: number, bucket: number, module: string) => {
    const key = `${level}:${bucket}`
    const row = table.get(key) ?? Object.fromEntries(["n", ...AUDIT_COUNT_MODULES].map((c) => [c, 0]))
    row.n! += 1
    if (module in row) row[module]! += 1
    table.set(key, row)
  }
  const bucket = (at: number, level: number) => Math.floor(at / (AUDIT_LEVEL_SECONDS[level]! * 1000))
  for (const r of rows) bump(2, bucket(r.at, 2), r.module)
  for (const r of rows) if (table.get(`2:${bucket(r.at, 2)}`)!.n! > AUDIT_DENSE) bump(1, bucket(r.at, 1), r.module)
  for (const r of rows) if ((table.get(`1:${bucket(r.at, 1)}`)?.n ?? 0) > AUDIT_DENSE) bump(0, bucket(r.at, 0), r.module)
  return Object.fromEntries([...table.entries()].sort(([a], [b]) => a.localeCompare(b)))
}

const actualCounts = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Record<string, bigint | number>>`SELECT * FROM audit_counts WHERE server_id = ${serverId}`
    return Object.fromEntries(
      rows.map((r) => [`${r.level}:${r.bucket}`, Object.fromEntries(["n", ...AUDIT_COUNT_MODULES].map((c) => [c, Number(r[c])]))] as const)
        .sort(([a], [b]) => a.localeCompare(b))
    )
  })

const storedEntries = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ at: Date; module_name: string }>`SELECT at, module_name FROM audit_entries WHERE server_id = ${serverId}`
    return rows.map((r) => ({ at: r.at.getTime(), module: r.module_name }))
  })

for (const kind of dbKinds) {
  layer(sqlLayer(kind), { timeout: 120_000, excludeTestServices: true })(`audit log on SQL (${kind})`, (it) => {
    it.effect("an append joins the caller's transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const log = yield* AuditLog
        const server = freshServer()
        const failed = yield* sql.withTransaction(
          log.append(entry(server, 1)).pipe(Effect.andThen(Effect.fail("form write failed" as const)))
        ).pipe(Effect.flip)
        assert.strictEqual(failed, "form write failed")
        assert.deepStrictEqual(yield* countRows(server), { entries: 0, levels: [] })
        assert.strictEqual((yield* log.query({ botId: BOT, serverId: server }, {})).logs.length, 0)
        yield* sql.withTransaction(log.append(entry(server, 2)))
        assert.deepStrictEqual(yield* countRows(server), { entries: 1, levels: [1] })
      }))

    it.effect("entries are append-only", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const result = yield* sql`UPDATE audit_entries SET user_name = 'x' WHERE false`.pipe(Effect.flip)
        assert.include(inspect(result, { depth: 6 }), "append-only")
      }))

    it.effect("the counts stay exact through bulk inserts, density changes and deletes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const server = freshServer()
        yield* bulkInsert(server, generate(2600, 3, Date.UTC(2024, 2, 1), 0, 0.1), 700)
        yield* bulkInsert(server, generate(400, 4, Date.UTC(2024, 2, 1, 12), 0, 0.1), 1) // appends one at a time
        assert.deepStrictEqual(yield* actualCounts(server), expectedCounts(yield* storedEntries(server)))
        assert.isAbove(Object.keys(yield* actualCounts(server)).filter((k) => k.startsWith("0:")).length, 0)
        // Deletes: a few here and there, then most of it (buckets fall back to sparse).
        yield* sql`DELETE FROM audit_entries WHERE server_id = ${server} AND item_identifier % 7 = 0`
        assert.deepStrictEqual(yield* actualCounts(server), expectedCounts(yield* storedEntries(server)))
        yield* sql`DELETE FROM audit_entries WHERE server_id = ${server} AND item_identifier % 3 <> 0`
        assert.deepStrictEqual(yield* actualCounts(server), expectedCounts(yield* storedEntries(server)))
        yield* sql`DELETE FROM audit_entries WHERE server_id = ${server}`
        assert.deepStrictEqual(yield* actualCounts(server), {})
      }))

    it.effect("agrees with the in-memory model on every page, filter and depth", () =>
      Effect.gen(function*() {
        const sqlLog = yield* AuditLog
        const memory = yield* Effect.gen(function*() {
          return { store: yield* AuditLogMemoryStore, log: yield* AuditLog }
        }).pipe(Effect.provide(AuditLogMemory))
        const server = freshServer()
        const origin = Date.UTC(2023, 11, 20, 5, 17)
        // A dense day (hour counts) inside a dense block (day counts), then months of sparse blocks.
        const rows = [
          ...generate(1500, 42, origin, 0, 0.05),
          ...generate(2000, 43, origin + 2 * 24 * HOUR, 0.01, 0.5).map((r) => ({ ...r, item: r.item + 1500 }))
        ]
        yield* bulkInsert(server, rows)
        for (const r of rows) yield* memory.store.appendAt({ ...entry(server, r.item, { module: r.module }), actor: { userId: "42", userName: "ada", avatar: null } }, new Date(r.at))
        yield* bulkInsert(freshServer(), generate(50, 5, origin))
        const levels = Object.keys(yield* actualCounts(server)).map((k) => k.split(":")[0])
        assert.deepStrictEqual([...new Set(levels)].sort(), ["0", "1", "2"])
        const random = prng(9)
        const span = rows[rows.length - 1]!.at - origin
        const time = (ms: number) => (random() < 0.5 ? new Date(ms).toISOString() : String(ms))
        for (let i = 0; i < 300; i++) {
          const q: { -readonly [K in keyof AuditLogQuery]: string } = { page_size: String(1 + Math.floor(random() * (random() < 0.5 ? 10 : 100))) }
          if (random() < 0.4) q.module = MODULES[Math.floor(random() * MODULES.length)]!
          const a = origin - HOUR + Math.floor(random() * (span + 2 * HOUR))
          const b = a + Math.floor(random() * (random() < 0.3 ? 3 * HOUR : span))
          const aligned = (ms: number) => random() < 0.2 ? Math.floor(ms / HOUR) * HOUR : ms
          if (random() < 0.6) q.start = time(aligned(a))
          if (random() < 0.6) q.end = time(aligned(b))
          const first = yield* memory.log.query({ botId: BOT, serverId: server }, q)
          q.page = String(random() < 0.1 ? first.page_max + 1 : 1 + Math.floor(random() * first.page_max))
          const expected = yield* memory.log.query({ botId: BOT, serverId: server }, q)
          const actual = yield* sqlLog.query({ botId: BOT, serverId: server }, q)
          assert.deepStrictEqual(
            { ...actual, logs: actual.logs.map((l) => l.item_identifier) },
            { ...expected, logs: expected.logs.map((l) => l.item_identifier) },
            JSON.stringify(q)
          )
        }
        // After retention removes the oldest part, pages and counts still agree.
        yield* purgeExpired((Date.now() - origin - span / 2) / 86_400_000, { batchSize: 500, pause: "1 millis" })
        assert.deepStrictEqual(yield* actualCounts(server), expectedCounts(yield* storedEntries(server)))
      }))
  })
}

describe("audit log storage unreachable", () => {
  const unreachable = PgClient.layer({ url: Redacted.make("postgres://postgres@127.0.0.1:9/none"), connectTimeout: "200 millis" }).pipe(
    Layer.provide(Reactivity.layer)
  )
  it.effect("append and query fail with ServiceUnavailable", () =>
    Effect.gen(function*() {
      const log = yield* AuditLog
      const appended = yield* Effect.flip(log.append(entry("1", 1)))
      assert.strictEqual(appended._tag, "ServiceUnavailable")
      const queried = yield* Effect.flip(log.query({ botId: BOT, serverId: "1" }, {}))
      assert.strictEqual(queried._tag, "ServiceUnavailable")
      const invalid = yield* Effect.flip(log.query({ botId: BOT, serverId: "1" }, { page: "0" }))
      assert.strictEqual(invalid._tag, "BadRequest")
    }).pipe(Effect.provide(AuditLogSql.pipe(Layer.provide(unreachable)))), { timeout: 20_000 })
})
