/**
 * The forms routes: access to the server's forms module (Directory), then the Forms service.
 * POST and PATCH take the body as sent (`handleRaw`): the Forms service runs every rule on it at
 * once, field schemas and server checks alike (decisions.md "Errors": one 400 lists every
 * problem), where the framework's decoding would stop at the first failing stage. The endpoints
 * still declare FormInput, for the OpenAPI document and the typed client.
 */
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { BadRequest } from "../../domain/infra/Errors.ts"
import { FormsResponse } from "../../domain/forms/Form.ts"
import { HttpApiBuilder } from "effect/http-api"
import type { ServerAccess } from "../../services/platform/Directory.ts"
import { Directory } from "../../services/platform/Directory.ts"
import { Forms } from "../../services/forms/Forms.ts"
import { Api } from "../contract/Api.ts"
import { CurrentPrincipal } from "../contract/Middleware.ts"
import { jsonBody } from "../edge/RawBody.ts"

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

    /** The JSON body; malformed JSON is a 400, a body over the limit stays the framework's 413. */
    const body = (request: HttpServerRequest.HttpServerRequest) =>
      jsonBody(request, () => BadRequest.of("The body is not valid JSON: send the form as a JSON object."))

    // The list's JSON, as the framework would encode it, kept per list object: Forms.list answers the
    // same object while the scope's data version is unchanged, so a repeated read re-sends its text.
    const encodeList = Schema.encodeEffect(FormsResponse)
    const listJson = new WeakMap<object, string>()
    const listResponse = (list: typeof FormsResponse.Type) => {
      const cached = listJson.get(list)
      if (cached !== undefined) return Effect.succeed(HttpServerResponse.text(cached, { contentType: "application/json" }))
      return Effect.map(Effect.orDie(encodeList(list)), (encoded) => {
        const text = JSON.stringify(encoded)
        listJson.set(list, text)
        return HttpServerResponse.text(text, { contentType: "application/json" })
      })
    }

    return handlers
      .handle("taskboardOptions", ({ params }) => withAccess(params, () => forms.taskboardOptions))
      .handle("taskboardBoards", ({ params }) => withAccess(params, forms.taskboardBoards))
      .handle("list", ({ params }) => withAccess(params, (access) => Effect.flatMap(forms.list(access), listResponse)))
      .handle("template", ({ params }) => withAccess(params, forms.template))
      .handle("get", ({ params }) => withAccess(params, (access) => forms.get(access, params.formId)))
      .handleRaw("create", ({ params, request }) =>
        withAccess(params, (access) => Effect.flatMap(body(request), (b) => forms.create(access, b))))
      .handleRaw("update", ({ params, request }) =>
        withAccess(params, (access) => Effect.flatMap(body(request), (b) => forms.update(access, params.formId, b))))
      .handle("delete", ({ params }) => withAccess(params, (access) => forms.remove(access, params.formId)))
  })
)
