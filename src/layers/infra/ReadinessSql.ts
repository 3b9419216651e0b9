/** Readiness on SQL: the database answers `SELECT 1` within 2 seconds. */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Readiness } from "../../services/infra/Readiness.ts"
import { storageUnavailable } from "./SqlFailure.ts"

export const ReadinessSql = Layer.effect(
  Readiness,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Readiness.of({
      check: sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.asVoid,
        // Not ready, whatever the reason (down, slow, refusing): the probe's only answer is 503.
        Effect.catchCause(() => Effect.fail(storageUnavailable("The database")))
      )
    }))
)
