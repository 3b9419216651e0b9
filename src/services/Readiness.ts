/** Whether the gateway can serve: the database answers. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ServiceUnavailable } from "../domain/Errors.ts"

export class Readiness extends Context.Service<Readiness, {
  readonly check: Effect.Effect<void, ServiceUnavailable>
}>()("gateway/Readiness") {
  static readonly layerSql = Layer.effect(
    Readiness,
    Effect.map(SqlClient.SqlClient, (sql) =>
      Readiness.of({
        check: sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.asVoid,
          Effect.catchCause(() => Effect.fail(ServiceUnavailable.of("The database is unreachable.", 5)))
        )
      }))
  )
  static readonly layerAlways = Layer.succeed(Readiness, Readiness.of({ check: Effect.void }))
}
