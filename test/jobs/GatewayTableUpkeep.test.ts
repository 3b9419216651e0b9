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

/**
 * Whether another session of this database holds back VACUUM's horizon to before transaction `xid`
 * (a `txid_current()`): a snapshot (`backend_xmin`) or a transaction id of its own (`backend_xid`,
 * set while a transaction that wrote is open, even between its statements) older than it. VACUUM
 * keeps every row deleted after that, so with one held the dead rows left say nothing about the
 * upkeep. The suite has a database of its own on PostgreSQL, so only its own pool and autovacuum's
 * ANALYZE can be such a session.
 */
const snapshotOlderThan = (xid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND greatest(age(backend_xmin), age(backend_xid)) >= age((${xid}::bigint % 4294967296)::text::xid)`.pipe(
      Effect.map((rows) => rows[0]!.n > 0)
    ))

const launcherRuns = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ on: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher') AS "on"`.pipe(
    Effect.map((rows) => rows[0]!.on)
  ))

/** Drops the engine's pg-boss schema when the suite ends (built before the engine: closed after it). */
const dropSchemaAtEnd = (schema: string) =>
  Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))))

for (const kind of dbKinds) {
  // A database of its own on PostgreSQL: in the shared one, any other suite's open transaction
  // (CI, three test workers) kept all 10,000 dead rows from the vacuum.
  layer(testDb(kind, { ownDatabase: true }), { excludeTestServices: true, timeout: "120 seconds" })(`gateway table upkeep on ${kind}`, (it) => {
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
        // After every update: a snapshot older than this could keep their dead rows from the vacuum.
        const [{ marker }] = yield* sql<{ marker: string }>`SELECT txid_current()::text AS marker`
        const heldBefore = kind === "postgres" && (yield* snapshotOlderThan(marker))
        assert.deepStrictEqual(yield* upkeepActions(schemas), expected)
        assert.deepStrictEqual(yield* upkeepPass(schemas), expected)
        const held = heldBefore || (kind === "postgres" && (yield* snapshotOlderThan(marker)))
        const sources = (yield* stats("feed_sources"))!
        assert.deepStrictEqual({ ...sources, dead: 0 }, { live: SOURCES, dead: 0, vacuumed: true, analyzed: true })
        // PGlite is alone: every dead row is gone. On PostgreSQL a snapshot taken meanwhile (the
        // server's autovacuum ANALYZE) may keep a few, so there: below autovacuum's threshold,
        // 50 + 0.2 x 2,000; and nothing to say when a session held one older than the updates.
        if (kind === "pglite") assert.strictEqual(sources.dead, 0)
        else if (!held) assert.isBelow(sources.dead, 450, `${sources.dead} dead rows left`)
        // Tables below every threshold (feeds: untouched; the migrations' 12 rows) are left alone.
        for (const quiet of ["feeds", "gateway_migrations"]) {
          const s = (yield* stats(quiet))!
          assert.deepStrictEqual([quiet, s.vacuumed, s.analyzed], [quiet, false, false])
        }
        // 100 more polls: below the thresholds (450 dead, 250 changed), nothing to do (unless the dead
        // rows were kept by a snapshot, above: then they are still over the threshold).
        yield* sql`UPDATE feed_sources SET next_poll_at = now() WHERE id <= 100`
        yield* waitUntil("the 100 updates counted", Effect.map(counted("feed_sources"), (n) => n >= 6 * SOURCES + 100), "30 seconds")
        if (!held) assert.notInclude((yield* upkeepActions(schemas)).map((a) => a.table), `${gateway}.feed_sources`)
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
