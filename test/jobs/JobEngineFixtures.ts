/** Shared pieces of the job engine suites: a database with a pg-boss schema of its own, waiting. */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { JobEnginePgBoss, makeJobEngine } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import type { JobEnginePgBossOptions } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import type { DbKind } from "../utils/Db.ts"
import { rawDb } from "../utils/Db.ts"

/** Engine options of a suite: its own pg-boss schema, quick polling. */
export const suiteOptions = (): JobEnginePgBossOptions => ({
  schema: `pgboss_${randomBytes(5).toString("hex")}`,
  pollingInterval: "0.5 seconds",
  drainTimeout: "10 seconds"
})

/** Drops the pg-boss schema when the suite ends (after its engines stopped: built before them). */
const dropSchemaAtEnd = (schema: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
  }))

/** A database of `kind` with a started engine (JobEngine) over it. */
export const engineDb = (kind: DbKind, options: JobEnginePgBossOptions) =>
  JobEnginePgBoss(options).pipe(
    Layer.provideMerge(dropSchemaAtEnd(options.schema!)),
    Layer.provideMerge(rawDb(kind))
  )

/** Another engine in the current scope, over the SqlClient in context. */
export const anotherEngine = (options: JobEnginePgBossOptions) => makeJobEngine(options)

/** Polls `check` every 100 ms until it holds; fails after `within`. */
export const waitUntil = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, within: Duration.Input = "45 seconds") =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(within)
    while (!(yield* check)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep("100 millis")
    }
  })
