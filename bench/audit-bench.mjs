// Benchmarks the audit log read as it ships: src/layers/audit/AuditLogSql.ts (bundled on the fly by
// audit-bundle.mjs) against the schema seeded by audit-seed.mjs. For each scenario: N sequential
// requests (BENCH_N, default 200) after 20 warm-up requests, median and p99 in ms, and the process RSS.
// Each scenario's page_max is checked once against an exact COUNT(*), and one deep page against the
// naive OFFSET query, whose timings are printed as the baseline.
// Run: node bench/audit-seed.mjs && node bench/audit-bench.mjs
import { BENCH_URL, loadAudit, SCHEMA, TARGET_BOT, TARGET_SERVER } from "./audit-bundle.mjs"

const N = Number(process.env.BENCH_N ?? 200)
const { AuditLog, AuditLogSql, Effect, Layer, PgClient, Reactivity, Redacted, SqlClient } = await loadAudit()

const mb = () => {
  const m = process.memoryUsage()
  return `${Math.round(m.rss / 1048576)} MB (heap ${Math.round(m.heapUsed / 1048576)} MB)`
}
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const time = (effect) =>
  Effect.gen(function*() {
    const t = performance.now()
    const result = yield* effect
    return [performance.now() - t, result]
  })

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const log = yield* AuditLog
  const scope = { botId: TARGET_BOT, serverId: TARGET_SERVER }
  const [meta] = yield* sql`SELECT rows FROM bench_meta`
  const [span] = yield* sql`SELECT min(at) AS lo, max(at) AS hi FROM audit_entries WHERE server_id = ${TARGET_SERVER}`
  const [sizes] = yield* sql`SELECT pg_size_pretty(pg_total_relation_size('audit_entries')) AS entries,
    pg_size_pretty(pg_total_relation_size('audit_count_shards')) AS counts, (SELECT count(*) FROM audit_count_shards) AS count_rows`
  const lo = span.lo.getTime()
  const hi = span.hi.getTime()
  // A window cutting hours, days and 32-day blocks at both ends.
  const start = new Date(lo + 37 * 86_400_000 + 17 * 60_000 + 23_456).toISOString()
  const end = String(Math.floor((hi - 29 * 86_400_000 - 41 * 60_000) / 1000))
  console.log(`table: ${meta.rows} entries (${sizes.entries} with indexes); audit_counts ${sizes.count_rows} rows (${sizes.counts})`)
  console.log(`target server: ${new Date(lo).toISOString()} .. ${new Date(hi).toISOString()}; window start=${start} end=${end}`)
  console.log(`N=${N} sequential requests per scenario, one connection; RSS at start ${mb()}\n`)

  const filters = [
    ["all modules", {}],
    ["module=rss", { module: "rss" }],
    ["time window", { start, end }],
    ["module=rss + time window", { module: "rss", start, end }]
  ]
  const rows = []
  for (const [name, filter] of filters) {
    const probe = yield* log.query(scope, { ...filter, page_size: "10" })
    const where = [sql`server_id = ${TARGET_SERVER}`, sql`bot_id = ${TARGET_BOT}`]
    if (filter.module) where.push(sql`module_name = ${filter.module}`)
    if (filter.start) where.push(sql`at >= ${new Date(filter.start)}`)
    if (filter.end) where.push(sql`at <= ${new Date(Number(filter.end) * 1000)}`)
    const [naiveCount, [exact]] = yield* time(sql`SELECT count(*)::int8 AS n FROM audit_entries WHERE ${sql.and(where)}`)
    const total = Number(exact.n)
    if (probe.page_max !== Math.max(1, Math.ceil(total / 10))) throw new Error(`${name}: page_max ${probe.page_max}, COUNT(*) ${total}`)
    const max = probe.page_max
    const mid = Math.floor(max / 2)
    const [naiveOffset, naive] = yield* time(sql`SELECT id FROM audit_entries WHERE ${sql.and(where)}
      ORDER BY at DESC, id DESC LIMIT 10 OFFSET ${(mid - 1) * 10}`)
    const check = yield* log.query(scope, { ...filter, page: String(mid), page_size: "10" })
    if (check.logs.map((l) => l.id).join() !== naive.map((r) => String(r.id)).join()) throw new Error(`${name}: page ${mid} differs from OFFSET`)
    const pages = [
      ["first", () => 1],
      ["middle", () => Math.floor(max * (0.45 + Math.random() * 0.1))],
      ["last", () => max - Math.floor(Math.random() * 10)]
    ]
    for (const [where, pick] of pages) {
      const run = (n) =>
        Effect.forEach(Array.from({ length: n }), () => time(log.query(scope, { ...filter, page: String(pick()), page_size: "10" })))
      yield* run(20)
      const ms = (yield* run(N)).map(([t]) => t)
      rows.push({ scenario: `${name}, ${where} page`, total, median: quantile(ms, 0.5), p99: quantile(ms, 0.99), rss: mb() })
    }
    rows.push({ scenario: `${name}: naive COUNT(*) + OFFSET (1 run)`, total, median: naiveCount + naiveOffset, p99: NaN, rss: mb() })
  }

  // Appends to the busy server (hour-level counts): one INSERT and its triggers per transaction.
  const appendMs = []
  for (let i = 0; i < N + 20; i++) {
    const [t] = yield* time(sql.withTransaction(log.append({
      botId: TARGET_BOT, serverId: TARGET_SERVER, actor: { userId: "1", userName: "bench", avatar: null },
      module: "forms", itemIdentifier: i, eventType: "PATCH", eventString: "bench append"
    })))
    if (i >= 20) appendMs.push(t)
  }
  yield* sql`DELETE FROM audit_entries WHERE server_id = ${TARGET_SERVER} AND event_string = 'bench append'`
  rows.push({ scenario: "append (own transaction), busy server", total: NaN, median: quantile(appendMs, 0.5), p99: quantile(appendMs, 0.99), rss: mb() })

  const pad = (s, n) => String(s).padEnd(n)
  console.log(`${pad("scenario", 48)} ${pad("matching", 9)} ${pad("median ms", 10)} ${pad("p99 ms", 8)} rss`)
  for (const r of rows) {
    console.log(`${pad(r.scenario, 48)} ${pad(Number.isNaN(r.total) ? "" : r.total, 9)} ${pad(r.median.toFixed(2), 10)} ${pad(Number.isNaN(r.p99) ? "" : r.p99.toFixed(2), 8)} ${r.rss}`)
  }
})

const db = PgClient.layer({ url: Redacted.make(BENCH_URL), maxConnections: 1, startupOptions: `-c search_path=${SCHEMA}${process.env.BENCH_PG_OPTIONS ? ` ${process.env.BENCH_PG_OPTIONS}` : ""}` }).pipe(
  Layer.provide(Reactivity.layer)
)
await Effect.runPromise(program.pipe(Effect.provide(AuditLogSql.pipe(Layer.provideMerge(db)))))
