/**
 * VACUUM and ANALYZE of pg-boss's tables where the server does neither: no autovacuum launcher
 * runs (`autovacuum = off`, as on the CI and bench server, or PGlite, a single backend), or the
 * table has `autovacuum_enabled = false`. pg-boss assumes autovacuum (plans.js says so); without it
 * the job table is never analyzed, and the planner, with no statistics, estimates a claim's ready
 * jobs at 1–2 rows. Once the table has grown it then plans the claim as a bitmap scan that reads and
 * sorts EVERY ready job of the queue to take 10, instead of the first 10 of job_i11 in order: bench
 * S10 (`BENCH_EXPLAIN=1`) measured 2,841 index entries and 1,941 rows sorted per claim, which is
 * a large part of what PostgreSQL's CPU per poll gained in the second half of a run (not from the
 * second worker: the same window with one worker plans the same way). Measured alone (pg-boss on one connection, a backlog
 * of 2,000 ready jobs, claims of 10, each job completed and replaced; the backend's CPU): the claim
 * cost 0.14 ms of PostgreSQL CPU per job on a fresh table, 0.29–0.30 once 40,000 dead and 24,000
 * live rows had accumulated unanalyzed, and 0.16 after ANALYZE on an even larger table. Dead
 * tuples, never removed either, lengthen every scan of the queue; VACUUM removes them.
 *
 * The decision is autovacuum's own (the server's thresholds and scale factors), taken at each
 * upkeep pass of a supervising engine; `SKIP_LOCKED`: a table another worker is vacuuming is left
 * to it. A server whose autovacuum runs is left alone.
 */
import type { Duration } from "effect"
import { Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"

export interface UpkeepAction {
  /** The table, quoted (schema.table). */
  readonly table: string
  readonly vacuum: boolean
}

/**
 * pg-boss's tables in `schema` that need a VACUUM (ANALYZE) or an ANALYZE by autovacuum's rules,
 * when nothing else will run it. Empty when an autovacuum launcher runs (for tables it may vacuum).
 */
export const upkeepActions = (schema: string): Effect.Effect<ReadonlyArray<UpkeepAction>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    // This backend's own counts first (on PGlite, the only backend, they would otherwise never land).
    // (PostgreSQL 15+; older servers flush on their own, so its absence is no failure.)
    sql`SELECT pg_stat_force_next_flush()`.pipe(Effect.ignore, Effect.andThen(sql<{ table: string; vacuum: boolean; analyze: boolean }>`
      WITH t AS (
        SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS "table", s.n_live_tup, s.n_dead_tup, s.n_mod_since_analyze,
          coalesce((SELECT option_value::boolean FROM pg_options_to_table(c.reloptions) WHERE option_name = 'autovacuum_enabled'), true)
            AND EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher') AS autovacuum
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_stat_user_tables s ON s.relid = c.oid
        WHERE n.nspname = ${schema} AND c.relkind = 'r'
      )
      SELECT "table",
        n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
          + current_setting('autovacuum_vacuum_scale_factor')::float8 * n_live_tup AS vacuum,
        n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
          + current_setting('autovacuum_analyze_scale_factor')::float8 * n_live_tup AS analyze
      FROM t WHERE NOT autovacuum ORDER BY "table"`.pipe(
      Effect.map((rows) => rows.filter((r) => r.vacuum || r.analyze).map((r) => ({ table: r.table, vacuum: r.vacuum })))
    ))))

/** One pass: runs what `upkeepActions` asks for, one table at a time; the tables done. */
export const upkeepPass = (schema: string): Effect.Effect<ReadonlyArray<UpkeepAction>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const actions = yield* upkeepActions(schema)
    for (const action of actions) {
      // Unprepared: VACUUM cannot be prepared, nor run inside a transaction (none is open here).
      yield* sql.unsafe(action.vacuum ? `VACUUM (ANALYZE, SKIP_LOCKED) ${action.table}` : `ANALYZE (SKIP_LOCKED) ${action.table}`).unprepared
      yield* Effect.logDebug(action.vacuum ? "job table vacuumed and analyzed" : "job table analyzed", { table: action.table })
    }
    return actions
  })

/** Passes every `every`, for as long as the caller's scope; a failed pass is logged and retried next time. */
export const jobTableUpkeep = (schema: string, every: Duration.Input) =>
  upkeepPass(schema).pipe(
    Effect.catchCause((cause) => Effect.logWarning("vacuum/analyze of the job engine's tables failed; retrying at the next upkeep", cause)),
    Effect.repeat(Schedule.spaced(every)),
    Effect.interruptible,
    Effect.forkScoped
  )
