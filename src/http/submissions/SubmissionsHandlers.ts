/**
 * The publications and submissions routes (forms-runtime.md §2, §6): access to the server's forms
 * module (Directory: who may manage the forms module), then the SubmissionsAdmin service.
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { ServerAccess } from "../../services/platform/Directory.ts"
import { Directory } from "../../services/platform/Directory.ts"
import { SubmissionsAdmin } from "../../services/submissions/SubmissionsAdmin.ts"
import { Api } from "../contract/Api.ts"
import { CurrentPrincipal } from "../contract/Middleware.ts"

export const SubmissionsHandlers = HttpApiBuilder.group(
  Api,
  "submissions",
  Effect.fn(function*(handlers) {
    const directory = yield* Directory
    const admin = yield* SubmissionsAdmin

    /** 404 for an unknown bot or server, 403 without access to the forms module, then `f` with the server. */
    const withAccess = <A, E, R>(params: { readonly appClientId: string; readonly serverId: string }, f: (access: ServerAccess) => Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        return yield* f(yield* directory.access(principal, params.appClientId, params.serverId, "forms"))
      })

    return handlers
      .handle("publish", ({ params, payload }) => withAccess(params, (access) => admin.publish(access, params.formId, payload)))
      .handle("publications", ({ params }) => withAccess(params, (access) => admin.publications(access, params.formId)))
      .handle("unpublish", ({ params }) => withAccess(params, (access) => admin.unpublish(access, params.formId, params.messageId)))
      .handle("list", ({ params, query }) => withAccess(params, (access) => admin.list(access, params.formId, query)))
      .handle("get", ({ params }) => withAccess(params, (access) => admin.get(access, params.formId, params.submissionId)))
      .handle("review", ({ params, payload }) => withAccess(params, (access) => admin.review(access, params.formId, params.submissionId, payload)))
  })
)
