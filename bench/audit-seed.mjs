// Seeds schema "bench_audit" of BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
// with the real migrations and SEED_ROWS audit entries (default 10,000,000) over one year, one in
// ten for the target server (1,000,000), the rest spread over 9,000 other servers, interleaved in time
// as appends would be. Idempotent: skips when already seeded with that size (SEED_FORCE=1 reseeds).
// Fast path: triggers off and secondary indexes dropped while loading with generate_series, then the
// indexes are rebuilt and audit_counts is computed in one GROUP BY per level.
import { build } from "esbuild"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { BENCH_URL, loadAudit, SCHEMA, TARGET_BOT, TARGET_SERVER } from "./audit-bundle.mjs"

// Every migration of the gateway, in order (the page reader needs `audit_page` of 0010 and 0012).
const loadMigrations = async () => {
  const out = await build({
    stdin: {
      contents: `export { migrations } from "./src/layers/migrations/Migrations.ts"`,
      resolveDir: fileURLToPath(new URL("..", import.meta.url)),
      sourcefile: "audit-seed-migrations.ts",
      loader: "ts"
    },
    bundle: true, platform: "node", format: "esm", target: "node20", write: false, logLevel: "warning",
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
  })
  const file = join(mkdtempSync(join(tmpdir(), "audit-seed-")), "migrations.mjs")
  writeFileSync(file, out.outputFiles[0].text)
  const { migrations } = await import(pathToFileURL(file).href)
  return Object.keys(migrations).sort().map((name) => migrations[name])
}

const ROWS = Number(process.env.SEED_ROWS ?? 10_000_000)
const CHUNK = 1_000_000
const { AUDIT_COUNT_MODULES, AUDIT_DENSE, AUDIT_LEVEL_SECONDS, Effect, Layer, PgClient, Reactivity, Redacted, SqlClient } =
  await loadAudit()
const allMigrations = await loadMigrations()

const t0 = performance.now()
const log = (msg) => process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`)

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`)
  const [meta] = yield* sql.unsafe(`SELECT to_regclass('${SCHEMA}.bench_meta') AS t`)
  if (meta.t !== null && !process.env.SEED_FORCE) {
    const [row] = yield* sql.unsafe(`SELECT rows FROM ${SCHEMA}.bench_meta`)
    // A schema seeded before the last migration of the audit pages is seeded again.
    const [current] = yield* sql.unsafe(`SELECT to_regproc('${SCHEMA}.audit_page_walk') AS f`)
    if (row !== undefined && Number(row.rows) === ROWS && current.f !== null) return log(`already seeded with ${ROWS} rows; nothing to do`)
  }
  yield* sql.unsafe(`DROP SCHEMA ${SCHEMA} CASCADE`)
  yield* sql.unsafe(`CREATE SCHEMA ${SCHEMA}`)
  for (const migration of allMigrations) yield* migration
  log(`${allMigrations.length} migrations applied`)
  yield* sql.unsafe(`ALTER TABLE audit_entries DISABLE TRIGGER USER`)
  yield* sql.unsafe(`DROP INDEX audit_server_time, audit_module_server_time, audit_at`)
  yield* sql.unsafe(`ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_pkey`)
  yield* sql.unsafe(`ALTER TABLE audit_entries SET (autovacuum_enabled = false)`)
  for (let from = 1; from <= ROWS; from += CHUNK) {
    const to = Math.min(ROWS, from + CHUNK - 1)
    // Row g: at = one year ago + g * (1 year / ROWS); every 10th row is the target server's.
    yield* sql.unsafe(`INSERT INTO audit_entries
        (id, bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
      SELECT g,
        CASE WHEN g % 10 = 0 THEN '${TARGET_BOT}' ELSE (700000000000000000 + (g * 7) % 9000)::text END,
        CASE WHEN g % 10 = 0 THEN '${TARGET_SERVER}' ELSE (600000000000000000 + (g * 7) % 9000)::text END,
        now() - interval '365 days' + g * (interval '365 days' / ${ROWS}),
        (300000000000000000 + g % 5000)::text,
        'user' || (g % 5000),
        CASE WHEN g % 3 = 0 THEN NULL ELSE md5((g % 5000)::text) END,
        (ARRAY['forms','photo','forum','rss','streaming','microblog','video'])[1 + (g / 10 * 13) % 7],
        g % 100000,
        (ARRAY['GET','PUSH','PATCH','DELETE'])[1 + g % 4],
        'Form "Application ' || (g % 100000) || '" updated'
      FROM generate_series(${from}, ${to}) AS g`)
    log(`inserted rows ${from}..${to}`)
  }
  yield* sql.unsafe(`SELECT setval(pg_get_serial_sequence('audit_entries', 'id'), ${ROWS})`)
  yield* sql.unsafe(`SET maintenance_work_mem = '512MB'`)
  yield* sql.unsafe(`ALTER TABLE audit_entries ADD PRIMARY KEY (id)`)
  log("primary key built")
  yield* sql.unsafe(`CREATE INDEX audit_server_time ON audit_entries (server_id, bot_id, at DESC, id DESC)`)
  log("index audit_server_time built")
  yield* sql.unsafe(`CREATE INDEX audit_module_server_time ON audit_entries (module_name, server_id, bot_id, at DESC, id DESC)`)
  log("index audit_module_server_time built")
  yield* sql.unsafe(`CREATE INDEX audit_at ON audit_entries (at)`)
  log("index audit_at built")
  // What the row triggers would have built: every 32-day block, and the children of dense buckets.
  yield* sql.unsafe(`SET work_mem = '1GB'`)
  const sums = ["count(*)", ...AUDIT_COUNT_MODULES.map((m) => `count(*) FILTER (WHERE e.module_name = '${m}')`)].join(", ")
  const cols = ["n", ...AUDIT_COUNT_MODULES].join(", ")
  // Shard 0 only; a dense month has every day and hour counted (migration 0004).
  yield* sql.unsafe(`INSERT INTO audit_count_shards (server_id, bot_id, level, bucket, shard, dense, ${cols})
    SELECT e.server_id, e.bot_id, 2, audit_bucket(e.at, 2), 0, count(*) > ${AUDIT_DENSE}, ${sums} FROM audit_entries e GROUP BY 1, 2, 4`)
  for (const level of [1, 0]) {
    yield* sql.unsafe(`INSERT INTO audit_count_shards (server_id, bot_id, level, bucket, shard, ${cols})
      SELECT e.server_id, e.bot_id, ${level}, audit_bucket(e.at, ${level}), 0, ${sums}
      FROM audit_count_shards p CROSS JOIN LATERAL (
        SELECT * FROM audit_entries e WHERE e.server_id = p.server_id AND e.bot_id = p.bot_id
          AND e.at >= to_timestamp(p.bucket * ${AUDIT_LEVEL_SECONDS[2]})
          AND e.at < to_timestamp((p.bucket + 1) * ${AUDIT_LEVEL_SECONDS[2]})
      ) e
      WHERE p.level = 2 AND p.shard = 0 AND p.dense
      GROUP BY 1, 2, 4`)
  }
  log("audit_counts computed")
  yield* sql.unsafe(`ALTER TABLE audit_entries ENABLE TRIGGER USER`)
  yield* sql.unsafe(`ALTER TABLE audit_entries RESET (autovacuum_enabled)`)
  yield* sql.unsafe(`VACUUM ANALYZE audit_entries`)
  yield* sql.unsafe(`VACUUM ANALYZE audit_count_shards`)
  log("vacuum analyze done")
  yield* sql.unsafe(`CREATE TABLE bench_meta (rows bigint NOT NULL, seeded_at timestamptz NOT NULL DEFAULT now())`)
  yield* sql.unsafe(`INSERT INTO bench_meta (rows) VALUES (${ROWS})`)
  const [size] = yield* sql.unsafe(`SELECT pg_size_pretty(pg_total_relation_size('audit_entries')) AS entries,
    pg_size_pretty(pg_total_relation_size('audit_count_shards')) AS counts, (SELECT count(*) FROM audit_count_shards) AS count_rows`)
  log(`seeded ${ROWS} rows: audit_entries ${size.entries}, audit_counts ${size.counts} (${size.count_rows} rows)`)
})

const db = PgClient.layer({
  url: Redacted.make(BENCH_URL),
  maxConnections: 1,
  startupOptions: `-c search_path=${SCHEMA} -c statement_timeout=0`
}).pipe(Layer.provide(Reactivity.layer))

await Effect.runPromise(program.pipe(Effect.provide(db)))
