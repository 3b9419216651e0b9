/**
 * The global router middleware, on every request including unknown routes: request id, access log,
 * maintenance, User-Agent, media type and body size checks, time-outs (408), and the answer as it
 * leaves (any non-JSON error answer of the framework re-dressed as the envelope, the headers every
 * answer carries, its metrics). What becomes of failures and defects: Envelope.ts `fromCause`.
 */
import { recordRequestUnsafe, routeLabel } from "../../services/infra/Metrics.ts"
import { ByteSize, Context, Effect, Fiber, LogLevel, References } from "effect"
import type { Types } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"
import { reasonPhrase } from "../../domain/infra/Errors.ts"
import { withDeadline } from "./Deadline.ts"
import { defaultMessage, envelope, fromCause, isJson } from "./Envelope.ts"
import { redactPath, redactQuery } from "../../services/infra/Redact.ts"
import { routedPath } from "../../services/infra/RoutedPath.ts"

const MAX_BODY_BYTES = 1024 * 1024

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export interface GlobalOptions {
  readonly maintenance: boolean
  readonly requestTimeoutMs: number
  readonly accessLog: boolean
}

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
  if (tokenPath(url)) {
    response = HttpServerResponse.setHeader(HttpServerResponse.setHeader(response, "cache-control", "no-store"), "pragma", "no-cache")
  }
  response = HttpServerResponse.setHeader(response, "x-request-id", requestId)
  const status = response.status
  // A bounded label, never the raw path (ids and names would make one series per resource).
  recordRequestUnsafe(fiber.context, method, routeLabel(url, status), status, (performance.now() - started) / 1000)
  // The sandbox's twins are called by the gateway's own pollers every few seconds: their lines are
  // Debug, so an idle sandbox gateway does not log a poll every 15 s.
  const level = url.startsWith("/sandbox/") ? "Debug" : "Info"
  // Below its level (e.g. LOG_LEVEL=Warn) the line is not built at all (read in place).
  if (!options.accessLog || LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), level)) {
    return Effect.succeed(response)
  }
  // Secrets out of the line (webhook tokens in paths, codes and states in queries): Redact.ts.
  const q = url.indexOf("?")
  return Effect.as(
    (level === "Debug" ? Effect.logDebug : Effect.logInfo)("request").pipe(
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
