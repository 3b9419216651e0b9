/** Small request readers and answers shared by the external-source twins. */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/** The request's query (repeated keys kept, `getAll`). */
export const query = HttpServerRequest.HttpServerRequest.use((req) => Effect.succeed(new URL(req.url, "http://sandbox").searchParams))

export const header = (name: string) =>
  HttpServerRequest.HttpServerRequest.use((req) => Effect.succeed(req.headers[name.toLowerCase()] ?? ""))

/** The bearer token sent, or "" when none. */
export const bearer = Effect.map(header("authorization"), (h) => /^Bearer\s+(\S+)$/i.exec(h)?.[1] ?? "")

/** A path parameter ("" when absent). */
export const param = (name: string) => Effect.map(HttpRouter.params, (p) => p[name] ?? "")

/** The url-encoded form body merged over the query (OAuth token endpoints take either). */
export const formOrQuery = Effect.gen(function*() {
  const req = yield* HttpServerRequest.HttpServerRequest
  const params = new URL(req.url, "http://sandbox").searchParams
  const body = yield* req.text.pipe(Effect.catch(() => Effect.succeed("")))
  for (const [k, v] of new URLSearchParams(body)) params.set(k, v)
  return params
})

export const json = (body: unknown, status = 200, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe(body, headers === undefined ? { status } : { status, headers })
