/**
 * The bodies of the writes whose handlers read them (`handleRaw`): forms and feeds. Their services
 * run every check of a body at once (decisions.md "Errors": one 400 lists every problem) where the
 * framework's decoding would answer the schema's problems alone, and only after the access check
 * (403/404 first, decisions.md "Servers, modules, permissions"). The endpoints still declare their
 * payload: the OpenAPI document and the typed client are unchanged. U+0000 is still refused before
 * any handler (Envelope.ts SchemaErrorsLive), a body over 1 MiB is still the 413 and a body that is
 * not JSON the 415 of the edge (Envelope.ts GlobalMiddleware).
 */
import { Context, Effect, Result, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { HttpApi, HttpApiError } from "effect/http-api"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { BadRequest } from "../../domain/infra/Errors.ts"
import type { Problem } from "../../domain/infra/Errors.ts"
import type { Refused } from "../../services/feeds/FeedsBody.ts"
import { schemaErrorProblems } from "./SchemaErrorWording.ts"

/** The JSON body (`null` when empty); malformed JSON is `malformed` (a 400), a body over the limit stays the framework's 413. */
export const jsonBody = (request: HttpServerRequest.HttpServerRequest, malformed: () => BadRequest) =>
  Effect.catch(request.json, (e) =>
    e.reason._tag === "RequestParseError" && e.reason.reason !== "BodyTooLarge"
      ? Effect.fail(malformed())
      : Effect.die(e))

/** What a raw handler is given besides its parameters. */
export interface RawRequest {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly endpoint: HttpApiEndpoint.Top
  readonly group: HttpApiGroup.Top
}

const mediaType = (contentType: string) => contentType.toLowerCase().split(";")[0]!.trim()

/**
 * The framework's 415 for a media type the endpoint does not declare, before anything else as
 * before: the edge answers it for a body, this for a request without one (`Content-Type:
 * text/plain`, no body). Dressed as the envelope by the edge. Undefined to go on.
 */
export const unsupportedMediaType = ({ endpoint, request }: RawRequest) =>
  endpoint.payload.has(mediaType(request.headers["content-type"] ?? "application/json"))
    ? undefined
    : Effect.succeed(HttpServerResponse.empty({ status: 415 }))

const payloadProblems = (cause: Schema.SchemaError): ReadonlyArray<Problem> =>
  schemaErrorProblems(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause }))

// A body that is not JSON: said in words (the framework's own issue read "expected a valid value").
const malformedJson = () => BadRequest.of("The body is not valid JSON: send a JSON object.")

type Decode = (body: unknown) => Effect.Effect<unknown, Schema.SchemaError>
const decoders = new WeakMap<HttpApiEndpoint.Top, Decode>()

/** The endpoint's JSON payload decoder, as the framework builds it: its schemas, and the API's, group's and endpoint's parse options. */
const decoderOf = (api: { readonly annotations: Context.Context<never> }, { endpoint, group }: RawRequest): Decode => {
  const known = decoders.get(endpoint)
  if (known !== undefined) return known
  const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
  const options = Context.getOrUndefined(annotations, HttpApi.PayloadParseOptions) ??
    Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  const schemas = endpoint.payload.get("application/json")?.schemas ?? []
  // One schema is decoded as itself: a union of one would word a non-object body "expected a valid value".
  const schema = schemas.length === 1 ? schemas[0]! : Schema.Union(schemas)
  const decode = Schema.decodeUnknownEffect(schema as unknown as Schema.Codec<unknown, unknown>, options) as Decode
  decoders.set(endpoint, decode)
  return decode
}

/**
 * The JSON body judged by the endpoint's own payload schema exactly as the framework decodes it, the
 * problems in the words of the envelope (Envelope.ts), without failing on them: the decoded body,
 * or the body as sent with every problem its schema found, for the service to add its own checks'
 * problems to. Malformed JSON is the framework's 400. `A`: the type the endpoint's schema decodes to.
 */
export const judgedBody = <A>(api: { readonly annotations: Context.Context<never> }, raw: RawRequest) =>
  Effect.flatMap(jsonBody(raw.request, malformedJson), (body) =>
    Effect.map(
      Effect.result(decoderOf(api, raw)(body)),
      (r): Result.Result<A, Refused> =>
        Result.isSuccess(r) ? Result.succeed(r.success as A) : Result.fail({ body, problems: payloadProblems(r.failure) })
    ))
