/**
 * The error envelope of the contract: every non-2xx answer is
 * `{"errors":[{"code","message","additionalProperties"?}]}`. One class per status; each class's
 * wire schema is exactly the envelope, so the HttpApi encodes, documents and decodes it.
 */
import { Schema, SchemaTransformation } from "effect"
import { HttpApiSchema } from "effect/http-api"

export const ErrorItem = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  additionalProperties: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ identifier: "ErrorItem" })
export type ErrorItem = typeof ErrorItem.Type

export const Envelope = Schema.Struct({ errors: Schema.Array(ErrorItem) }).annotate({
  identifier: "ErrorEnvelope",
  description: "Every non-2xx answer. `code` is the HTTP reason phrase."
})
export type Envelope = typeof Envelope.Type

/** The reason phrases decisions.md names, by status. */
export const reasonPhrase: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  431: "Request Header Fields Too Large",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable"
}

export interface Problem {
  readonly message: string
  readonly additionalProperties?: Record<string, unknown>
}

const Problems = { problems: Schema.Array(Schema.Struct({
  message: Schema.String,
  additionalProperties: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})) }

const toItems = (code: string, problems: ReadonlyArray<Problem>): Array<ErrorItem> =>
  problems.map((p) =>
    p.additionalProperties === undefined
      ? { code, message: p.message }
      : { code, message: p.message, additionalProperties: p.additionalProperties }
  )

/** The wire form of an error class: the envelope on the wire, the class in the program. */
const wire = <T extends { readonly problems: ReadonlyArray<Problem> }>(
  self: Schema.Codec<T, { readonly _tag: string; readonly problems: ReadonlyArray<Problem> }>,
  tag: string,
  status: number
): Schema.Codec<T, Envelope> => {
  const code = reasonPhrase[status]!
  return Envelope.pipe(
    Schema.decodeTo(
      self,
      SchemaTransformation.transform<
        { readonly _tag: string; readonly problems: ReadonlyArray<Problem> },
        Envelope
      >({
        decode: (envelope) => ({ _tag: tag, problems: envelope.errors.map(({ code: _code, ...rest }) => rest) }),
        encode: (encoded) => ({ errors: toItems(code, encoded.problems) })
      })
    ),
    HttpApiSchema.status(status)
  ) as unknown as Schema.Codec<T, Envelope>
}

/** Retry-After in whole seconds (at least 1) from the first problem's `retry_after`, if one has a number. */
export const retryAfterHeader = (problems: ReadonlyArray<Problem>): string | undefined => {
  const value = problems.find((p) => typeof p.additionalProperties?.["retry_after"] === "number")?.additionalProperties?.["retry_after"]
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? String(Math.max(1, Math.ceil(value))) : undefined
}

/**
 * The wire form of a 429 or 503 on an endpoint: the envelope as the body, and the error's own
 * `retry_after` as the Retry-After header (the HttpApi sets it as it encodes the error). A client
 * decodes the body; the header may be absent (an answer from a proxy).
 */
const withRetryAfter = <T extends { readonly problems: ReadonlyArray<Problem> }>(body: Schema.Codec<T, Envelope>) =>
  body.pipe(HttpApiSchema.encodeToWithHeaders(
    { body, headers: { "retry-after": Schema.optionalKey(Schema.String) } },
    {
      decode: ({ body }) => body,
      encode: (error) => {
        const seconds = retryAfterHeader(error.problems)
        return { body: error, headers: seconds === undefined ? {} : { "retry-after": seconds } }
      }
    }
  ))

const msg = (message: string, additionalProperties?: Record<string, unknown>) =>
  ({ problems: [additionalProperties === undefined ? { message } : { message, additionalProperties }] })

export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", Problems) {
  static of(message: string, additionalProperties?: Record<string, unknown>) {
    return new BadRequest(msg(message, additionalProperties))
  }
  static many(problems: ReadonlyArray<Problem>) {
    return new BadRequest({ problems })
  }
  static readonly wire = wire(BadRequest, "BadRequest", 400)
}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", Problems) {
  static of(message = "The access token is missing, wrong or no longer valid.") {
    return new Unauthorized(msg(message))
  }
  static readonly wire = wire(Unauthorized, "Unauthorized", 401)
}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", Problems) {
  static of(message: string, additionalProperties?: Record<string, unknown>) {
    return new Forbidden(msg(message, additionalProperties))
  }
  static readonly wire = wire(Forbidden, "Forbidden", 403)
}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", Problems) {
  static of(message: string) {
    return new NotFound(msg(message))
  }
  static readonly wire = wire(NotFound, "NotFound", 404)
}
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", Problems) {
  static of(message: string) {
    return new RequestTimeout(msg(message))
  }
  static readonly wire = wire(RequestTimeout, "RequestTimeout", 408)
}
/** 409: the request's Idempotency-Key is in use by a request still running (http/edge/IdempotencyLive.ts). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", Problems) {
  static of(message: string, additionalProperties?: Record<string, unknown>) {
    return new Conflict(msg(message, additionalProperties))
  }
  static readonly wire = wire(Conflict, "Conflict", 409)
}
/** 422: the request's Idempotency-Key was first used with another request (method, path or body). */
export class UnprocessableContent extends Schema.TaggedError<UnprocessableContent>()("UnprocessableContent", Problems) {
  static of(message: string, additionalProperties?: Record<string, unknown>) {
    return new UnprocessableContent(msg(message, additionalProperties))
  }
  static readonly wire = wire(UnprocessableContent, "UnprocessableContent", 422)
}
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", Problems) {
  static of(message: string, retryAfterSeconds: number) {
    return new TooManyRequests(msg(message, { retry_after: retryAfterSeconds }))
  }
  /** The envelope alone (a body written by hand); `wire` on an endpoint also sets Retry-After. */
  static readonly envelope = wire(TooManyRequests, "TooManyRequests", 429)
  static readonly wire = withRetryAfter(TooManyRequests.envelope)
}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", Problems) {
  /**
   * `retryAfterSeconds` also becomes the `Retry-After` header (`wire`, withRetryAfter). Required:
   * decisions.md has every 503 carry both, whatever failed.
   */
  static of(message: string, retryAfterSeconds: number) {
    return new ServiceUnavailable(msg(message, { retry_after: retryAfterSeconds }))
  }
  /** The envelope alone (a body written by hand: the drain's answer); `wire` on an endpoint also sets Retry-After. */
  static readonly envelope = wire(ServiceUnavailable, "ServiceUnavailable", 503)
  static readonly wire = withRetryAfter(ServiceUnavailable.envelope)
}

export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | RequestTimeout
  | Conflict
  | UnprocessableContent
  | TooManyRequests
  | ServiceUnavailable

/** What an upstream (chat platform, external source, task board) fault becomes for a caller. */
export type UpstreamError = RequestTimeout | ServiceUnavailable
