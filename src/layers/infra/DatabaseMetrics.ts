/**
 * The database's connections as gauges at each scrape of /metrics (`db_connections{state}`).
 * @effect/sql-pg keeps its pool private (PgPool exposes no counts, and PgClient builds its own), so
 * the numbers come from PostgreSQL's `pg_stat_activity`: the connections of this database under the
 * client's application name (every gateway process and its job engine), by state. `active` is
 * queries running (the sample's own among them: at least 1); `idle_in_transaction` is a transaction
 * held open between statements, the state that exhausts a pool.
 */
import { Effect, Layer, Metric, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { dbConnections, sampleOnScrape } from "../../services/infra/Metrics.ts"

const STATES = {
  active: "active",
  idle: "idle",
  "idle in transaction": "idle_in_transaction",
  "idle in transaction (aborted)": "idle_in_transaction"
} as const

const Row = Schema.Struct({ state: Schema.String, n: Schema.Number })

/** Registers the sampler for as long as the layer lives. */
export const DatabaseMetrics = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const read = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Row,
    execute: () =>
      sql`SELECT COALESCE(state, '') AS state, count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = current_setting('application_name')
          GROUP BY 1`
  })
  yield* sampleOnScrape(Effect.gen(function*() {
    const rows = yield* read(undefined)
    const counts = new Map<string, number>(Object.values(STATES).map((s) => [s, 0]))
    for (const row of rows) {
      const state = STATES[row.state as keyof typeof STATES]
      if (state !== undefined) counts.set(state, counts.get(state)! + row.n)
    }
    yield* Effect.forEach(counts, ([state, n]) => Metric.update(Metric.withAttributes(dbConnections, { state }), n), { discard: true })
  }))
}))
