/**
 * VACUUM and ANALYZE of pg-boss's tables and of the gateway's own (the connection's current schema)
 * where the server does neither: no autovacuum launcher runs (`autovacuum = off`, as on the CI and
 * bench server, or PGlite, a single backend with no autovacuum at all), or the table has
 * `autovacuum_enabled = false`. Started by every supervising engine (ROLE=all and worker), at the
 * upkeep interval (JobEnginePgBoss.ts).
 *
 * pg-boss's job table: pg-boss assumes autovacuum (plans.js says so); without it the job table is
 * never analyzed, and the planner, with no statistics, estimates a claim's ready jobs at 1–2 rows.
 * Once the table has grown it then plans the claim as a bitmap scan that reads and sorts EVERY ready
 * job of the queue to take 10, instead of the first 10 of job_i11 in order: bench S10
 * (`BENCH_EXPLAIN=1`) measured 2,841 index entries and 1,941 rows sorted per claim. Measured alone
 * (pg-boss on one connection, a backlog of 2,000 ready jobs, claims of 10, each job completed and
 * replaced; the backend's CPU): 0.14 ms of PostgreSQL CPU per job on a fresh table, 0.29–0.30 once
 * 40,000 dead and 24,000 live rows had accumulated unanalyzed, 0.16 after ANALYZE on a larger table.
 *
 * The gateway's tables: `feed_sources` is updated at every poll and never HOT (next_poll_at is
 * indexed): 40,821 dead rows for 2,200 live by the delivery bench's third scenario; feed_status,
 * feed_deliveries, feed_seen_items and feed_delivery_log_counts churn too. Measured on PostgreSQL 15
 * (2,200 sources, 40,600 polls, autovacuum off): the polls' own statements barely notice (reads of
 * feed_sources' heap and indexes per statement, pg_statio: pollTarget 3.36 -> 3.00, pollUnchanged
 * 16.2 -> 15.1; index entries of dead rows are marked dead by the first lookups, pages pruned on
 * access; their time differed less than the shared machine's noise). What it does change: the
 * never-analyzed table's sweep for sources without a poll read all 205 heap pages (Seq Scan) and
 * reads 10 buffers once analyzed; a pass every ~2,100 polls kept the indexes at 1.1 MB, 2.0 MB
 * without; one pass took 0.1–0.5 s (median 0.2 s). On PGlite, where nothing else would ever remove
 * dead rows, a VACUUM holds the one connection the API also uses: 2,000 sources updated 20 times
 * (40,000 dead rows, 7 MB) took 36–461 ms (median 90 ms, 9 runs), 20,000 sources (71 MB) 236–254 ms, and a
 * pass with nothing to do ~19 ms. Autovacuum's thresholds keep each VACUUM that small (a table is
 * vacuumed once 20 % of it is dead), so there is no size cap; a table that took 1 s or more is
 * logged at Info.
 *
 * The decision is autovacuum's own (the server's thresholds and scale factors), taken at each
 * pass; one table at a time; `SKIP_LOCKED`: a table another worker is vacuuming is left to it. A
 * server whose autovacuum runs is left alone; so are tables of another owner (not ours to keep).
 * A failed pass is logged as a warning and retried at the next.
 */
import type { Duration } from "effect"
import { Cause, Effect, Option, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { isSqlError } from "effect/sql/SqlError"
import type { SqlError } from "effect/sql/SqlError"
import { dependencyFailed } from "../../services/infra/DependencyHealth.ts"
import { classifySqlError } from "../infra/SqlFailure.ts"

export interface UpkeepAction {
  /** The table, quoted (schema.table). */
  readonly table: string
  readonly vacuum: boolean
}

/**
 * The tables of `schemas` that need a VACUUM (ANALYZE) or an ANALYZE by autovacuum's rules, when
 * nothing else will run it. Empty when an autovacuum launcher runs (for tables it may vacuum).
 * Tables this role may not maintain (another owner's, in a shared schema) are not ours to keep.
 */
export const upkeepActions = (
  schemas: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<UpkeepAction>, SqlError, SqlClient.SqlClient> =>
  schemas.length === 0 ? Effect.succeed([]) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
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
        WHERE n.nspname IN ${sql.in(schemas)} AND c.relkind = 'r' AND pg_has_role(c.relowner, 'USAGE')
      )
      SELECT "table",
        n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
          + current_setting('autovacuum_vacuum_scale_factor')::float8 * n_live_tup AS vacuum,
        n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
          + current_setting('autovacuum_analyze_scale_factor')::float8 * n_live_tup AS analyze
      FROM t WHERE NOT autovacuum ORDER BY "table"`.pipe(
      Effect.map((rows) => rows.filter((r) => r.vacuum || r.analyze).map((r) => ({ table: r.table, vacuum: r.vacuum })))
    ))))

/** One pass over `schemas`: runs what `upkeepActions` asks for, one table at a time; the tables done. */
export const upkeepPass = (schemas: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<UpkeepAction>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const actions = yield* upkeepActions(schemas)
    for (const action of actions) {
      const started = Date.now()
      // Unprepared: VACUUM cannot be prepared, nor run inside a transaction (none is open here).
      yield* sql.unsafe(action.vacuum ? `VACUUM (ANALYZE, SKIP_LOCKED) ${action.table}` : `ANALYZE (SKIP_LOCKED) ${action.table}`).unprepared
      const ms = Date.now() - started
      // On PGlite the pass holds the only connection: a long one is worth an operator's notice.
      yield* (ms >= 1_000 ? Effect.logInfo : Effect.logDebug)(
        action.vacuum ? "table vacuumed and analyzed" : "table analyzed",
        { table: action.table, ms }
      )
    }
    return actions
  })

/** The schema of the gateway's own tables: the connection's `current_schema()` (its search_path). */
export const gatewaySchema: Effect.Effect<Option.Option<string>, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.map(sql<{ schema: string | null }>`SELECT current_schema() AS schema`, (rows) => Option.fromNullishOr(rows[0]?.schema))
)

/** pg-boss's schema and the gateway's, each once. */
export const upkeepSchemas = (jobSchema: string): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.map(gatewaySchema, (gateway) => Option.isSome(gateway) && gateway.value !== jobSchema ? [jobSchema, gateway.value] : [jobSchema])

/**
 * Passes over the tables of `schemas` (resolved at each pass) every `every`, for as long as the
 * caller's scope; a failed pass is logged and retried next time (the database unreachable: counted
 * in its outage lines instead, services/DependencyHealth.ts).
 */
export const tableUpkeep = (
  schemas: Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient>,
  every: Duration.Input
) =>
  Effect.flatMap(schemas, upkeepPass).pipe(
    Effect.catchCause((cause) => {
      const error = Option.getOrUndefined(Cause.findErrorOption(cause))
      return isSqlError(error) && classifySqlError(error) === "unavailable"
        ? dependencyFailed("database", { source: "table upkeep", detail: error.message })
        : Effect.logWarning("vacuum/analyze of the gateway's and the job engine's tables failed; retrying at the next upkeep", cause)
    }),
    Effect.repeat(Schedule.spaced(every)),
    Effect.interruptible,
    Effect.forkScoped
  )
