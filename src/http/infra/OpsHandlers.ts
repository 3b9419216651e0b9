import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Readiness } from "../../services/infra/Readiness.ts"
import { Api } from "../contract/Api.ts"

export const OpsHandlers = HttpApiBuilder.group(
  Api,
  "ops",
  Effect.fn(function*(handlers) {
    const readiness = yield* Readiness
    return handlers.handleAll({
      healthz: () => Effect.succeed({ status: "ok" as const }),
      readyz: () => Effect.as(readiness.check, { status: "ready" as const })
    })
  })
)
