/**
 * VACUUM/ANALYZE of pg-boss's tables where autovacuum does not run (layers/jobs/JobTableUpkeep.ts):
 * autovacuum's thresholds decide, a table the server vacuums is left to it, and a supervising
 * engine keeps its job table analyzed, so a claim reads the first ready jobs of job_i11 in order
 * instead of sorting every ready job of the queue (bench S10).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { fetchNextJob } from "pg-boss/dist/plans.js"
import type { JobEnginePgBossOptions } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import { upkeepActions, upkeepPass } from "../../src/layers/jobs/JobTableUpkeep.ts"
import { JobEngine, JobQueue } from "../../src/services/jobs/JobEngine.ts"
import { dbKinds, rawDb } from "../utils/Db.ts"
import { engineDb, suiteOptions, waitUntil } from "./JobEngineFixtures.ts"

const tableStats = (schema: string, table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ reltuples: number; analyzed: boolean; vacuumed: boolean }>`
      SELECT c.reltuples::float8 AS reltuples, s.last_analyze IS NOT NULL AS analyzed, s.last_vacuum IS NOT NULL AS vacuumed
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE n.nspname = ${schema} AND c.relname = ${table}`.pipe(Effect.map((rows) => rows[0])))

for (const kind of dbKinds) {
  layer(rawDb(kind), { excludeTestServices: true, timeout: "120 seconds" })(`job table upkeep on ${kind}`, (it) => {
    it.effect("vacuums and analyzes by autovacuum's thresholds what no autovacuum looks after", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const schema = `upkeep_${randomBytes(5).toString("hex")}`
        yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
        yield* sql.unsafe(`CREATE SCHEMA ${schema}`)
        // `own` and `grown`: autovacuum off for them, so ours to keep; `server`: the server's, if a
        // launcher runs; `quiet`: below every threshold (50 rows changed).
        for (const table of ["own", "grown", "quiet"]) {
          yield* sql.unsafe(`CREATE TABLE ${schema}.${table} (x int) WITH (autovacuum_enabled = false)`)
        }
        yield* sql.unsafe(`CREATE TABLE ${schema}.server (x int)`)
        yield* sql.unsafe(`INSERT INTO ${schema}.quiet SELECT generate_series(1, 10)`)
        // Inserts only: statistics to gather, no dead tuples (ANALYZE alone).
        yield* sql.unsafe(`INSERT INTO ${schema}.grown SELECT generate_series(1, 1000)`)
        // An update of every row: 1,000 dead tuples (VACUUM, with ANALYZE).
        for (const table of ["own", "server"]) {
          yield* sql.unsafe(`INSERT INTO ${schema}.${table} SELECT generate_series(1, 1000)`)
          yield* sql.unsafe(`UPDATE ${schema}.${table} SET x = x + 1`)
        }
        const launcher = (yield* sql<{ on: boolean }>`
          SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher') AS "on"`)[0]!.on
        const expected = [
          { table: `${schema}.grown`, vacuum: false },
          { table: `${schema}.own`, vacuum: true },
          ...(launcher ? [] : [{ table: `${schema}.server`, vacuum: true }])
        ]
        // The writers' counts reach the statistics within a second or so (each backend flushes its own).
        yield* waitUntil(
          "the changes counted",
          Effect.map(upkeepActions([schema]), (actions) => JSON.stringify(actions) === JSON.stringify(expected)),
          "30 seconds"
        )
        assert.deepStrictEqual(yield* upkeepPass([schema]), expected)
        // (Dead tuples a concurrent transaction may still see stay, and count: not asserted here.)
        assert.deepStrictEqual(yield* tableStats(schema, "own"), { reltuples: 1000, analyzed: true, vacuumed: true })
        assert.deepStrictEqual(yield* tableStats(schema, "grown"), { reltuples: 1000, analyzed: true, vacuumed: false })
        assert.deepStrictEqual(yield* tableStats(schema, "quiet"), { reltuples: -1, analyzed: false, vacuumed: false })
        // Analyzed: nothing more to do for it until it changes again.
        assert.notInclude((yield* upkeepActions([schema])).map((a) => a.table), `${schema}.grown`)
      }), 90_000)
  })

  const options: JobEnginePgBossOptions = { ...suiteOptions(), superviseInterval: "1 second" }
  const Queue = JobQueue("upkeep-claims", Schema.Struct({ i: Schema.Number }), { policy: "standard" })
  layer(engineDb(kind, options), { excludeTestServices: true, timeout: "120 seconds" })(`a supervising engine on ${kind}`, (it) => {
    it.effect("keeps its job table analyzed: a claim reads job_i11 in order, not every ready job", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const engine = yield* JobEngine
        const schema = options.schema!
        yield* engine.declare(Queue)
        const [{ table }] = yield* sql<{ table: string }>`SELECT table_name AS "table" FROM ${sql(schema)}.queue WHERE name = ${Queue.name}`
        // Whatever the server does, this table is the engine's to keep.
        yield* sql.unsafe(`ALTER TABLE ${schema}.${table} SET (autovacuum_enabled = false)`)
        yield* Effect.forEach(Array.from({ length: 600 }, (_, i) => i), (i) => engine.send(Queue, { i }), { concurrency: 4 })
        yield* waitUntil(
          "the job table analyzed with most of its 600 jobs",
          // A pass may analyze while the sends still arrive; autovacuum's thresholds then wait for
          // 10 % more changes, so "most of them" is what a pass guarantees, and all the plan needs.
          Effect.map(tableStats(schema, table), (s) => s !== undefined && s.analyzed && s.reltuples >= 300),
          "60 seconds"
        )
        const query = fetchNextJob({ schema, table, name: Queue.name, policy: "standard", limit: 10 })
        // EXPLAIN without ANALYZE only plans the claim: nothing is claimed.
        const plan = (yield* sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${query.text}`).unprepared)
          .map((r) => r["QUERY PLAN"]).join("\n")
        assert.include(plan, `Index Scan using ${table}_i11`)
        assert.notInclude(plan, "Bitmap Heap Scan")
        assert.notInclude(plan, "Sort Key: j_1.priority DESC")
      }), 90_000)
  })
}
