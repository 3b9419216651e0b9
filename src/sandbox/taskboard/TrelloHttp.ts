/**
 * What every Trello twin route does before its own work, as Trello does it: credentials from the
 * query (`key`, `token`) or the `Authorization: OAuth oauth_consumer_key="..", oauth_token=".."`
 * header, refused with Trello's plain-text 401s; the request counted against the token's and the
 * key's windows, every answer carrying `x-rate-limit-api-token-*` and `x-rate-limit-api-key-*`
 * headers, and a request past a limit answered 429 with Trello's JSON (no Retry-After: Trello sends
 * none). Parameters are read from the query and the body (JSON or url-encoded), body first.
 */
import { Clock, Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { header, query } from "../sources/Http.ts"
import { TaskBoardState } from "./State.ts"

export const text = (body: string, status: number) => HttpServerResponse.text(body, { status })

/** Trello's answer for a well-formed id that names nothing (or something deleted). */
export const notFound = () => text("The requested resource was not found.", 404)

/** Trello ids are 24 hex digits; anything else is "invalid id" (400). */
export const isTrelloId = (id: string) => /^[0-9a-f]{24}$/.test(id)

/** The request's parameters: the body's (JSON or url-encoded) over the query's; arrays joined by commas. */
export const params = Effect.gen(function*() {
  const req = yield* HttpServerRequest.HttpServerRequest
  const out = new Map<string, string>(new URL(req.url, "http://sandbox").searchParams)
  const body = yield* req.text.pipe(Effect.catch(() => Effect.succeed("")))
  if ((req.headers["content-type"] ?? "").includes("json") && body.trim() !== "") {
    const parsed: unknown = yield* Effect.try(() => JSON.parse(body) as unknown).pipe(Effect.orElseSucceed(() => undefined))
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      for (const [k, v] of Object.entries(parsed)) out.set(k, Array.isArray(v) ? v.join(",") : v === null ? "null" : String(v))
    }
  } else {
    for (const [k, v] of new URLSearchParams(body)) out.set(k, v)
  }
  return out
})

const credentials = Effect.gen(function*() {
  const q = yield* query
  const auth = yield* header("authorization")
  return {
    key: q.get("key") ?? /oauth_consumer_key="([^"]*)"/.exec(auth)?.[1] ?? "",
    token: q.get("token") ?? /oauth_token="([^"]*)"/.exec(auth)?.[1] ?? ""
  }
})

const withHeaders = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string>) =>
  HttpServerResponse.setHeaders(response, headers)

/** Runs a Trello route: credentials, then the rate limits, then the handler, its answer with the limit headers. */
export const trello = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function*() {
    const { key, token } = yield* credentials
    if (key === "") return text("invalid key", 401)
    if (token === "") return text("unauthorized permission requested", 401)
    const store = yield* TaskBoardState
    const now = yield* Clock.currentTimeMillis
    const { intervalMs, keyLimit, tokenLimit } = store.limits
    const tokenLeft = store.count(`token:${token}`, tokenLimit, now)
    const keyLeft = store.count(`key:${key}`, keyLimit, now)
    const headers = {
      "x-rate-limit-api-token-interval-ms": String(intervalMs),
      "x-rate-limit-api-token-max": String(tokenLimit),
      "x-rate-limit-api-token-remaining": String(Math.max(0, tokenLeft)),
      "x-rate-limit-api-key-interval-ms": String(intervalMs),
      "x-rate-limit-api-key-max": String(keyLimit),
      "x-rate-limit-api-key-remaining": String(Math.max(0, keyLeft))
    }
    if (tokenLeft < 0 || keyLeft < 0) {
      const error = tokenLeft < 0 ? "API_TOKEN_LIMIT_EXCEEDED" : "API_KEY_LIMIT_EXCEEDED"
      return withHeaders(HttpServerResponse.jsonUnsafe({ error, message: "Rate limit exceeded" }, { status: 429 }), headers)
    }
    return withHeaders(yield* handler, headers)
  })
