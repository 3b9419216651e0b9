/** The forms routes: access to the server's forms module (Directory), then the Forms service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { ServerAccess } from "../../services/Directory.ts"
import { Directory } from "../../services/Directory.ts"
import { Forms } from "../../services/Forms.ts"
import { Api } from "../Api.ts"
import { CurrentPrincipal } from "../Middleware.ts"

interface ServerParams {
  readonly appClientId: string
  readonly serverId: string
}

export const FormsHandlers = HttpApiBuilder.group(
  Api,
  "forms",
  Effect.fn(function*(handlers) {
    const directory = yield* Directory
    const forms = yield* Forms

    /** 404 for an unknown bot or server, 403 without MANAGE_GUILD, then `f` with the server. */
    const withAccess = <A, E, R>(params: ServerParams, f: (access: ServerAccess) => Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        return yield* f(yield* directory.access(principal, params.appClientId, params.serverId, "forms"))
      })

    return handlers
      .handle("taskboardOptions", ({ params }) => withAccess(params, () => forms.taskboardOptions))
      .handle("taskboardBoards", ({ params }) => withAccess(params, forms.taskboardBoards))
      .handle("list", ({ params }) => withAccess(params, forms.list))
      .handle("template", ({ params }) => withAccess(params, forms.template))
      .handle("get", ({ params }) => withAccess(params, (access) => forms.get(access, params.formId)))
      .handle("create", ({ params, payload }) => withAccess(params, (access) => forms.create(access, payload)))
      .handle("update", ({ params, payload }) =>
        withAccess(params, (access) => forms.update(access, params.formId, payload)))
      .handle("delete", ({ params }) => withAccess(params, (access) => forms.remove(access, params.formId)))
  })
)
