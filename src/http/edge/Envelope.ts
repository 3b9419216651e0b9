/**
 * The one place errors become the envelope of decisions.md: `envelope` (the answer's shape), the
 * framework's bare errors' wording, and `fromCause` (unknown routes 404, unreadable bodies 400/413,
 * defects 500 without internals, logged redacted). Request decoding failures: SchemaErrorsLive.ts
 * (wording in SchemaErrorWording.ts); the guards, headers, metrics and access line of every request:
 * GlobalMiddleware.ts.
 */
import { Cause, Effect, Option, Result } from "effect"
import { HttpServerError, HttpServerResponse } from "effect/http"
import { reasonPhrase, retryAfterHeader } from "../../domain/infra/Errors.ts"
import { redactText } from "../../services/infra/Redact.ts"
import { NOT_UTF8_PATH_MESSAGE, notUtf8Path } from "./IllFormedUnicode.ts"

/** An envelope built here; its `retry_after` (a 429's, a 503's) is also the Retry-After header, as on an endpoint's error. */
export const envelope = (status: number, message: string, additionalProperties?: Record<string, unknown>) => {
  const retryAfter = additionalProperties === undefined ? undefined : retryAfterHeader([{ message, additionalProperties }])
  return HttpServerResponse.jsonUnsafe(
    {
      errors: [
        additionalProperties === undefined
          ? { code: reasonPhrase[status] ?? "Error", message }
          : { code: reasonPhrase[status] ?? "Error", message, additionalProperties }
      ]
    },
    retryAfter === undefined || (status !== 429 && status !== 503) ? { status } : { status, headers: { "retry-after": retryAfter } }
  )
}

/** The wording of the framework's bare error answers, by status. */
export const defaultMessage: Record<number, string> = {
  400: "The request is invalid.",
  404: "No such route. Check the method and the path.",
  405: "No such route. Check the method and the path.",
  413: "The body is larger than 1 MiB.",
  415: "The body must be JSON: send Content-Type: application/json."
}

export const isJson = (res: HttpServerResponse.HttpServerResponse) =>
  (res.headers["content-type"] ?? "").startsWith("application/json")

/** Any failure or defect of a request's handling as the envelope. */
export const fromCause = (cause: Cause.Cause<unknown>, requestId: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const found = Cause.findDefect(cause)
  const failure = Option.getOrUndefined(Cause.findErrorOption(cause)) ?? (Result.isSuccess(found) ? found.success : undefined)
  if (HttpServerError.isHttpServerError(failure)) {
    const reason = failure.reason
    if (reason._tag === "RouteNotFound") {
      // The router cannot decode a path whose bytes are not UTF-8: not an unknown route, a bad request.
      return Effect.succeed(
        notUtf8Path(reason.request.url) ? envelope(400, NOT_UTF8_PATH_MESSAGE, { in: "params" }) : envelope(404, defaultMessage[404]!)
      )
    }
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
