import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { Module } from "../../domain/platform/Platform.ts"
import { ModulesResponse } from "../../domain/platform/Platform.ts"
import { AuditLog } from "../../services/audit/AuditLog.ts"
import { Directory } from "../../services/platform/Directory.ts"
import { Api } from "../contract/Api.ts"
import { CurrentPrincipal } from "../contract/Middleware.ts"

const encodeModules = Schema.encodeSync(ModulesResponse)

/**
 * The modules answer, encoded once per list: the directory hands out one frozen list per
 * combination of available modules (services/platform/DirectoryLive.ts), so a hot read skips the schema
 * encoding and `JSON.stringify`. The bytes and headers are those HttpApiBuilder would build
 * (JSON of the encoded value, 200, `application/json`): test/perf/CachedReads.test.ts pins them.
 */
const modulesAnswers = new WeakMap<ReadonlyArray<Module>, HttpServerResponse.HttpServerResponse>()
const modulesAnswer = (modules: ReadonlyArray<Module>) => {
  let answer = modulesAnswers.get(modules)
  if (answer === undefined) {
    answer = HttpServerResponse.text(JSON.stringify(encodeModules({ modules })), { status: 200, contentType: "application/json" })
    // Only a frozen list cannot change under its kept answer.
    if (Object.isFrozen(modules)) modulesAnswers.set(modules, answer)
  }
  return answer
}

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
          Effect.map(modulesAnswer)
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
