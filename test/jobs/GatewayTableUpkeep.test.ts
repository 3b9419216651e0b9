/**
 * VACUUM/ANALYZE of the gateway's own tables (its connection's current schema) where autovacuum
 * does not run (layers/jobs/JobTableUpkeep.ts): `feed_sources`, updated at every poll (and not HOT:
 * next_poll_at is indexed), piled up 40,821 dead rows for 2,200 live in the delivery bench's third
 * scenario; on PGlite nothing else would ever remove them. Same rules as pg-boss's tables.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { JobEnginePgBoss } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import type { JobEnginePgBossOptions } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import { upkeepActions, upkeepPass, upkeepSchemas } from "../../src/layers/jobs/JobTableUpkeep.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { suiteOptions, waitUntil } from "./JobEngineFixtures.ts"

const SOURCES = 2_000

interface Stats {
  readonly live: number
  readonly dead: number
  readonly vacuumed: boolean
  readonly analyzed: boolean
}

/** What an operator reads in pg_stat_user_tables for a table of the gateway's schema. */
const stats = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Stats>`SELECT n_live_tup::int AS live, n_dead_tup::int AS dead,
        last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analyzed
      FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ${table}`.pipe(Effect.map((rows) => rows[0])))

/** The rows a table's writers have inserted, updated and deleted, as the statistics count them. */
const counted = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    // (On PGlite, the only backend, its counts land when it is told to flush them.)
    sql`SELECT pg_stat_force_next_flush()`.pipe(
      Effect.andThen(sql<{ n: number }>`SELECT (n_tup_ins + n_tup_upd + n_tup_del)::int AS n FROM pg_stat_user_tables
        WHERE schemaname = current_schema() AND relname = ${table}`),
      Effect.map((rows) => rows[0]?.n ?? 0)
    ))

/** 2,000 sources, each polled `polls` times: every poll moves next_poll_at (indexed: no HOT update). */
const pollSources = (polls: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO feed_sources (module, identifier)
      SELECT 'rss', 'https://example.com/' || i FROM generate_series(1, ${SOURCES}) i`
    for (let poll = 1; poll <= polls; poll++) {
      yield* sql`UPDATE feed_sources SET last_poll_at = now(), next_poll_at = now() + make_interval(mins => ${poll}::int),
        poll_state = jsonb_build_object('etag', ${String(poll)}::text)`
    }
  })

const launcherRuns = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ on: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher') AS "on"`.pipe(
    Effect.map((rows) => rows[0]!.on)
  ))

/** Drops the engine's pg-boss schema when the suite ends (built before the engine: closed after it). */
const dropSchemaAtEnd = (schema: string) =>
  Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))))

for (const kind of dbKinds) {
  layer(testDb(kind), { excludeTestServices: true, timeout: "120 seconds" })(`gateway table upkeep on ${kind}`, (it) => {
    it.effect("vacuums the churned tables by autovacuum's thresholds, leaves the rest alone", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [{ gateway }] = yield* sql<{ gateway: string }>`SELECT current_schema() AS gateway`
        // A pg-boss schema that does not exist here: only the gateway's tables are in play.
        const schemas = yield* upkeepSchemas(`pgboss_${randomBytes(5).toString("hex")}`)
        // feed_sources: ours whatever the server does; feed_seen_items: the server's if a launcher runs.
        yield* sql`ALTER TABLE feed_sources SET (autovacuum_enabled = false)`
        yield* pollSources(5)
        yield* sql`INSERT INTO feed_seen_items (source_id, item_id) SELECT id, 'a' FROM feed_sources`
        yield* sql`UPDATE feed_seen_items SET seen_at = now() - interval '1 day'`
        const launcher = yield* launcherRuns
        const expected = [
          { table: `${gateway}.feed_seen_items`, vacuum: true },
          { table: `${gateway}.feed_sources`, vacuum: true }
        ].filter((a) => !a.table.endsWith("feed_seen_items") || !launcher)
        // The writers' counts reach the statistics within a second or so (each backend flushes its own).
        yield* waitUntil("the updates counted", Effect.map(counted("feed_sources"), (n) => n >= 6 * SOURCES), "30 seconds")
        yield* waitUntil("the updates counted", Effect.map(counted("feed_seen_items"), (n) => n >= 2 * SOURCES), "30 seconds")
        assert.deepStrictEqual(yield* upkeepActions(schemas), expected)
        assert.deepStrictEqual(yield* upkeepPass(schemas), expected)
        const sources = (yield* stats("feed_sources"))!
        assert.deepStrictEqual({ ...sources, dead: 0 }, { live: SOURCES, dead: 0, vacuumed: true, analyzed: true })
        // PGlite is alone: every dead row is gone. (On PostgreSQL a concurrent suite's open snapshot
        // may keep a few, so there: below autovacuum's threshold, 50 + 0.2 x 2,000.)
        assert.isTrue(kind === "pglite" ? sources.dead === 0 : sources.dead < 450, `${sources.dead} dead rows left`)
        // Tables below every threshold (feeds: untouched; the migrations' 12 rows) are left alone.
        for (const quiet of ["feeds", "gateway_migrations"]) {
          const s = (yield* stats(quiet))!
          assert.deepStrictEqual([quiet, s.vacuumed, s.analyzed], [quiet, false, false])
        }
        // 100 more polls: below the thresholds (450 dead, 250 changed), nothing to do.
        yield* sql`UPDATE feed_sources SET next_poll_at = now() WHERE id <= 100`
        yield* waitUntil("the 100 updates counted", Effect.map(counted("feed_sources"), (n) => n >= 6 * SOURCES + 100), "30 seconds")
        assert.notInclude((yield* upkeepActions(schemas)).map((a) => a.table), `${gateway}.feed_sources`)
      }), 90_000)
  })

  const options: JobEnginePgBossOptions = { ...suiteOptions(), superviseInterval: "1 second" }
  const engine = JobEnginePgBoss(options).pipe(Layer.provideMerge(dropSchemaAtEnd(options.schema!)), Layer.provideMerge(testDb(kind)))
  layer(engine, { excludeTestServices: true, timeout: "120 seconds" })(`a supervising engine on ${kind}`, (it) => {
    it.effect("vacuums the gateway's feed_sources (its connection's schema) as well as pg-boss's tables", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Whatever the server does, this table is the engine's to keep.
        yield* sql`ALTER TABLE feed_sources SET (autovacuum_enabled = false)`
        yield* pollSources(5)
        yield* waitUntil(
          "feed_sources vacuumed",
          Effect.map(stats("feed_sources"), (s) => s !== undefined && s.vacuumed && s.analyzed && s.live === SOURCES),
          "60 seconds"
        )
      }), 90_000)
  })
}
