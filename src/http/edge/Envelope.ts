/**
 * The one place errors become the envelope of decisions.md:
 * - `SchemaErrorsLive`: request decoding failures → 400, one element and path per problem;
 * - `GlobalMiddleware`: request id, access log, maintenance, User-Agent, media type and body size
 *   checks, unknown routes (404), time-outs (408), defects (500 without internals), and any non-JSON
 *   error answer of the framework re-dressed as the envelope.
 */
import { recordRequestUnsafe, routeLabel } from "../../services/infra/Metrics.ts"
import { ByteSize, Cause, Context, Effect, Fiber, Layer, LogLevel, Option, References, Result, SchemaIssue } from "effect"
import type { SchemaAST } from "effect"
import type { Types } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { randomUUID } from "node:crypto"
import { BadRequest, reasonPhrase } from "../../domain/infra/Errors.ts"
import type { Problem } from "../../domain/infra/Errors.ts"
import { withDeadline } from "./Deadline.ts"
import { SchemaErrors } from "../contract/Middleware.ts"
import { mayHoldNulBesidesBody, nullCharacterProblems, schemaProblemsBesides } from "./NullCharacter.ts"
import { redactPath, redactQuery, redactText } from "../../services/infra/Redact.ts"
import { routedPath } from "../../services/infra/RoutedPath.ts"

const MAX_BODY_BYTES = 1024 * 1024

/**
 * What a schema expects, in words a client developer reads (decisions.md "Errors": never an internal
 * schema name such as `rss_webhook_options_input`): an object, a list, a text, one of "AND", "OR"…
 */
const expectedInWords = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Objects":
    case "ObjectKeyword":
      return "an object"
    case "Arrays":
      return "a list"
    case "String":
    case "TemplateLiteral":
      return "a text"
    case "Number":
      return "a number"
    case "Boolean":
      return "true or false"
    case "Null":
      return "null"
    case "Literal":
      return JSON.stringify(ast.literal) ?? String(ast.literal)
    case "Union": {
      const literals = ast.types.filter((t) => t._tag === "Literal")
      const others = ast.types.filter((t) => t._tag !== "Literal").map(expectedInWords)
      const words = [...(literals.length > 0 ? [`one of ${literals.map(expectedInWords).join(", ")}`] : []), ...others]
      return [...new Set(words)].join(" or ")
    }
    case "Suspend":
      return expectedInWords(ast.thunk())
    default:
      return "a valid value"
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => issue._tag === "InvalidType" ? `expected ${expectedInWords(issue.ast)}` : SchemaIssue.defaultLeafHook(issue)
})

/** Type names in the formatter's own "Expected a | b" (a union no member of which matched), in words. */
const typeWords: Record<string, string> = {
  array: "a list", string: "a text", number: "a number", boolean: "true or false", null: "null", object: "an object",
  undefined: "nothing"
}
const unionInWords = (message: string): string => {
  const m = /^Expected (.+)$/.exec(message)
  if (m === null) return message
  const parts = m[1]!.split(" | ")
  const literals = parts.filter((p) => /^(".*"|-?\d[\d.e+-]*|true|false)$/.test(p))
  const others = parts.filter((p) => !literals.includes(p)).map((p) => typeWords[p] ?? "a valid value")
  return `expected ${[...new Set([...(literals.length > 0 ? [`one of ${literals.join(", ")}`] : []), ...others])].join(" or ")}`
}

const formatIssues = (issue: SchemaIssue.Issue) => {
  const result = formatter(issue)
  return { issues: result.issues.map((i) => ({ ...i, message: unionInWords(i.message) })) }
}

/** `["steps", 2, "char_limit"]` → `steps[2].char_limit`. */
export const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.reduce<string>((acc, seg) => {
    const key = typeof seg === "object" && seg !== null ? seg.key : seg
    if (typeof key === "number") return `${acc}[${key}]`
    return acc === "" ? String(key) : `${acc}.${String(key)}`
  }, "")

const slotName: Record<string, string> = {
  Params: "path parameter",
  Query: "query parameter",
  Headers: "header",
  Payload: "body"
}

export const schemaErrorProblems = (error: HttpApiError.HttpApiSchemaError): Array<Problem> => {
  const issues = formatIssues(error.cause.issue).issues
  const where = slotName[error.kind] ?? "request"
  if (issues.length === 0) return [{ message: `The ${where} is invalid.` }]
  return issues.map((issue) => {
    const path = formatPath(issue.path ?? [])
    const message = issue.message === "Missing key" ? "is required" : issue.message
    return path === ""
      ? { message: `The ${where} is invalid: ${message}` }
      : { message: `${path}: ${message}`, additionalProperties: { path, in: error.kind.toLowerCase() } }
  })
}

/**
 * Request decoding failures → 400 with every problem. U+0000 anywhere in the request is refused here
 * too, before the handler (NullCharacter.ts): it never reaches the database.
 */
export const SchemaErrorsLive = Layer.succeed(SchemaErrors, (httpEffect, { endpoint }) => {
  // Built once per endpoint (this function runs when the routes are built), run per request.
  const handled = Effect.catch(httpEffect, (error): Effect.Effect<never, BadRequest | Types.unhandled> =>
    !HttpApiError.HttpApiSchemaError.is(error)
      ? Effect.fail(error)
      : error.kind === "Body" || error.kind === "ResponseHeaders"
      ? Effect.die(error) // our own answer failed to encode: a bug, logged and answered 500
      : Effect.fail(BadRequest.many(schemaErrorProblems(error))))
  const checked = Effect.flatMap(nullCharacterProblems(endpoint), (nul) =>
    nul.length > 0
      ? Effect.flatMap(
        schemaProblemsBesides(endpoint, nul, schemaErrorProblems),
        (others) => Effect.fail(BadRequest.many([...nul, ...others]))
      )
      : handled)
  if (endpoint.payload.size > 0) return checked
  // No body to read: a request with no U+0000 in its URL, cookies or headers (every cached read)
  // goes straight to the handler; one that may hold one takes the whole check above.
  return Effect.withFiber((fiber) =>
    mayHoldNulBesidesBody(Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)) ? checked : handled
  )
})

export const envelope = (status: number, message: string, additionalProperties?: Record<string, unknown>) =>
  HttpServerResponse.jsonUnsafe(
    {
      errors: [
        additionalProperties === undefined
          ? { code: reasonPhrase[status] ?? "Error", message }
          : { code: reasonPhrase[status] ?? "Error", message, additionalProperties }
      ]
    },
    { status }
  )

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export interface GlobalOptions {
  readonly maintenance: boolean
  readonly requestTimeoutMs: number
  readonly accessLog: boolean
}

const defaultMessage: Record<number, string> = {
  400: "The request is invalid.",
  404: "No such route. Check the method and the path.",
  405: "No such route. Check the method and the path.",
  413: "The body is larger than 1 MiB.",
  415: "The body must be JSON: send Content-Type: application/json."
}

const isJson = (res: HttpServerResponse.HttpServerResponse) =>
  (res.headers["content-type"] ?? "").startsWith("application/json")

/** Plain code on every request: the usual spelling is answered without normalising. */
const gatewayPath = (url: string) => {
  if (url.startsWith("/api/") || url.startsWith("/auth/")) return true
  const path = routedPath(url)
  return path.startsWith("/api/") || path.startsWith("/auth/")
}
const tokenPath = (url: string) =>
  url.startsWith("/auth/idp/token") || (!url.startsWith("/api/") && routedPath(url).startsWith("/auth/idp/token"))

/** The body limit (1 MiB), provided to every request's handler by `GlobalMiddleware`. */
export const MAX_BODY_SIZE = ByteSize.bytes(MAX_BODY_BYTES)
const timedOut = () => envelope(408, "The request took too long; retry.")
const cutAnswer = () => envelope(499, "The request was cut before its answer: the client went away or the gateway shut down.")

/**
 * `application/json`, with any parameters (`; charset=utf-8`), in any case. Nothing else, not even
 * another JSON-based type (`application/merge-patch+json`): decisions.md asks for exactly this type.
 */
const isJsonMediaType = (type: string | undefined) => (type ?? "").split(";")[0]!.trim().toLowerCase() === "application/json"

/** The guards of `/api` and `/auth` requests, before the handler: an answer, or undefined to go on. */
const guard = (
  request: HttpServerRequest.HttpServerRequest,
  options: GlobalOptions
): HttpServerResponse.HttpServerResponse | undefined => {
  if (!gatewayPath(request.url)) return undefined
  if (options.maintenance) {
    return envelope(503, "The gateway is in maintenance; retry later.", { retry_after: 60 })
  }
  const headers = request.headers
  if (!headers["user-agent"]) {
    return envelope(400, "Every request must carry a User-Agent header that identifies the client.", {
      path: "User-Agent",
      in: "headers"
    })
  }
  const method = request.method
  if (method === "POST" || method === "PATCH" || method === "PUT") {
    const length = Number(headers["content-length"] ?? "0")
    if (length > MAX_BODY_BYTES) return envelope(413, defaultMessage[413]!)
    const type = headers["content-type"]
    const hasBody = length > 0 || headers["transfer-encoding"] !== undefined
    if (hasBody && !isJsonMediaType(type)) {
      return envelope(415, defaultMessage[415]!)
    }
  }
  return undefined
}

/**
 * The answer as it leaves: the envelope for the framework's bare errors, the headers every answer
 * carries, its metrics and access line. Plain code: it runs on every request (no Effect.gen frames,
 * the metrics updated in place through the fiber's context instead of two more effects).
 */
const finish = (
  fiber: Fiber.Fiber<unknown, unknown>,
  options: GlobalOptions,
  method: string,
  url: string,
  requestId: string,
  started: number,
  answer: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  let response = answer
  if (response.status >= 400 && !isJson(response)) {
    response = envelope(response.status, defaultMessage[response.status] ?? reasonPhrase[response.status] ?? "Error")
  }
  if (response.status === 401) {
    response = HttpServerResponse.setHeader(response, "www-authenticate", 'Bearer error="invalid_token"')
  }
  if ((response.status === 503 || response.status === 429) && response.headers["retry-after"] === undefined) {
    const seconds = retryAfterOf(response)
    if (seconds !== undefined) response = HttpServerResponse.setHeader(response, "retry-after", String(seconds))
  }
  if (tokenPath(url)) {
    response = HttpServerResponse.setHeader(HttpServerResponse.setHeader(response, "cache-control", "no-store"), "pragma", "no-cache")
  }
  response = HttpServerResponse.setHeader(response, "x-request-id", requestId)
  const status = response.status
  // A bounded label, never the raw path (ids and names would make one series per resource).
  recordRequestUnsafe(fiber.context, method, routeLabel(url, status), status, (performance.now() - started) / 1000)
  // Below Info (e.g. LOG_LEVEL=Warn) the line is not built at all (LogLevel.isEnabled, read in place).
  if (!options.accessLog || LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), "Info")) {
    return Effect.succeed(response)
  }
  // Secrets out of the line (webhook tokens in paths, codes and states in queries): Redact.ts.
  const q = url.indexOf("?")
  return Effect.as(
    Effect.logInfo("request").pipe(
      Effect.annotateLogs({
        method,
        path: redactPath(q < 0 ? url : url.slice(0, q)),
        ...(q < 0 ? {} : { query: redactQuery(url.slice(q + 1)) }),
        status,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        request_id: requestId
      })
    ),
    response
  )
}

/**
 * The global router middleware; applies to every route, including unknown ones.
 * Written as one `withFiber` step and a `flatMap` rather than `Effect.gen`: it wraps every request,
 * and the generator's frames and yields were a measurable part of a cached read's CPU.
 */
export const GlobalMiddleware = (options: GlobalOptions) =>
  HttpRouter.middleware((app) => {
    // A body without Content-Length (chunked) is cut off at the limit too: 413, not read further.
    const bounded = Effect.provideService(app, HttpIncomingMessage.MaxBodySize, MAX_BODY_SIZE)
    return Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const started = performance.now()
      const incoming = request.headers["x-request-id"]
      const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID()
      const url = request.url
      const method = request.method
      const guarded = guard(request, options)
      if (guarded !== undefined) return finish(fiber, options, method, url, requestId, started, guarded)
      const handled = Effect.catchCause(bounded, (cause) => fromCause(cause, requestId))
      return Effect.flatMap(
        withDeadline(handled, options.requestTimeoutMs, timedOut, () =>
          // Cut before its answer (client gone, shutdown's drain over): counted and logged as nginx's 499.
          Effect.asVoid(finish(fiber, options, method, url, requestId, started, cutAnswer()))),
        (response) => finish(fiber, options, method, url, requestId, started, response)
      )
    }) as Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>
  }, { global: true })

/** `additionalProperties.retry_after` of an envelope (ServiceUnavailable.of(…, seconds)), for the Retry-After header. */
const retryAfterOf = (res: HttpServerResponse.HttpServerResponse): number | undefined => {
  if (res.body._tag !== "Uint8Array" || !isJson(res)) return undefined
  try {
    const body = JSON.parse(new TextDecoder().decode(res.body.body)) as { errors?: Array<{ additionalProperties?: { retry_after?: unknown } }> }
    const value = body.errors?.find((e) => typeof e.additionalProperties?.retry_after === "number")?.additionalProperties?.retry_after
    return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.max(1, Math.ceil(value)) : undefined
  } catch {
    return undefined
  }
}

const fromCause = (cause: Cause.Cause<unknown>, requestId: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const found = Cause.findDefect(cause)
  const failure = Option.getOrUndefined(Cause.findErrorOption(cause)) ?? (Result.isSuccess(found) ? found.success : undefined)
  if (HttpServerError.isHttpServerError(failure)) {
    const reason = failure.reason
    if (reason._tag === "RouteNotFound") return Effect.succeed(envelope(404, defaultMessage[404]!))
    if (reason._tag === "RequestParseError") {
      return Effect.succeed(
        reason.reason === "BodyTooLarge"
          ? envelope(413, defaultMessage[413]!)
          : envelope(400, "The body could not be read.")
      )
    }
  }
  // Anything else is a bug or an unexpected outage: log the details, answer without internals.
  // The cause may quote a URL with a token in it (a failed webhook call): logged redacted, through
  // the request's own logger (format and level of the deployment).
  return Effect.logError("unhandled failure", redactText(Cause.pretty(cause))).pipe(
    Effect.annotateLogs({ request_id: requestId }),
    Effect.as(envelope(500, `Internal error; the log has the details (request id ${requestId}).`, { request_id: requestId }))
  )
}

