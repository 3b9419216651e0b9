/**
 * The JobEngine contract on its one layer, pg-boss, on PGlite (one connection: the test layer other
 * suites use) and on PostgreSQL with TEST_DATABASE_URL. Each run has a pg-boss schema of its own.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { anotherEngine, engineDb, suiteOptions } from "../jobs/JobEngineFixtures.ts"
import { dbKinds, rawDb } from "../utils/Db.ts"
import { jobEngineContract } from "./JobEngine.contract.ts"

for (const kind of dbKinds) {
  const options = suiteOptions()
  jobEngineContract(`JobEnginePgBoss on ${kind}`, engineDb(kind, options), {
    another: (queues = []) => anotherEngine({ ...options, queues }),
    // PostgreSQL: a pool of its own, as another process has; PGlite has one connection to share.
    anotherProcess: kind === "postgres"
      ? Effect.flatMap(Layer.build(rawDb(kind)), (pool) => anotherEngine(options).pipe(Effect.provideContext(pool)))
      : anotherEngine(options),
    schedules: (queue) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ key: string; cron: string }>`SELECT key, cron FROM ${sql(options.schema!)}.schedule WHERE name = ${queue}`)
  })
}
