import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import { Api } from "../Api.ts"

export const OpsHandlers = HttpApiBuilder.group(
  Api,
  "ops",
  Effect.fn(function*(handlers) {
    const sql = yield* SqlClient.SqlClient
    return handlers.handleAll({
      healthz: () => Effect.succeed({ status: "ok" as const }),
      readyz: () =>
        sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.as({ status: "ready" as const }),
          Effect.catchCause(() => Effect.fail(ServiceUnavailable.of("The database is unreachable.", 5)))
        )
    })
  })
)
