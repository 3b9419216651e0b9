import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AuditLog } from "../../services/AuditLog.ts"
import { Directory } from "../../services/Directory.ts"
import { Api } from "../Api.ts"
import { CurrentPrincipal } from "../Middleware.ts"

export const GeneralHandlers = HttpApiBuilder.group(
  Api,
  "general",
  Effect.fn(function*(handlers) {
    const directory = yield* Directory
    const audit = yield* AuditLog
    return handlers.handleAll({
      user: () => Effect.flatMap(CurrentPrincipal, directory.user),
      bots: () => Effect.map(directory.bots, (bots) => ({ bots })),
      servers: ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (p) => directory.servers(p, params.appClientId)).pipe(
          Effect.map((servers) => ({ servers }))
        ),
      server: ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => directory.server(p, params.appClientId, params.serverId)),
      modules: ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (p) => directory.modules(p, params.appClientId, params.serverId)).pipe(
          Effect.map((modules) => ({ modules }))
        ),
      logs: ({ params, query }) =>
        Effect.gen(function*() {
          const p = yield* CurrentPrincipal
          const access = yield* directory.access(p, params.appClientId, params.serverId, "logs")
          return yield* audit.query({ botId: access.botId, serverId: access.serverId }, query)
        })
    })
  })
)
