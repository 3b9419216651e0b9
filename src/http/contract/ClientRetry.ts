/**
 * Safe retries for the typed client (client.ts): each POST, PATCH and DELETE under /api/ carries a
 * fresh `Idempotency-Key`, and is sent again with that same key when its connection was reset (or
 * failed before an answer) or when the gateway answered 503, waiting as `Retry-After` says. The
 * gateway then answers a retry with the first answer (http/edge/IdempotencyLive.ts): a write is never
 * applied twice, and a client whose connection was cut finds out what happened. GETs are retried
 * too (they change nothing); other writes (/auth: a code is single-use) are not.
 * Only `effect` is imported: the client package depends on nothing else.
 */
import { Duration, Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import type { HttpClientError } from "effect/http"

export interface RetryOptions {
  /** Attempts in all, the first included. Default 3. */
  readonly attempts?: number
  /** The longest wait between two attempts (a longer `Retry-After` ends the retries). Default 30 s. */
  readonly maxDelayMs?: number
  /** Wait when the answer names none (doubled each attempt). Default 250 ms. */
  readonly baseDelayMs?: number
}

const WRITES = new Set(["POST", "PATCH", "DELETE"])

const newKey = (): string => globalThis.crypto.randomUUID()

const pathOf = (url: string) => {
  try {
    return new URL(url, "http://localhost").pathname
  } catch {
    return url
  }
}

/** Whether a request may be sent again: GET and HEAD, and writes under /api/ (they carry a key). */
export const isRetryable = (request: HttpClientRequest.HttpClientRequest) =>
  request.method === "GET" || request.method === "HEAD" || (WRITES.has(request.method) && pathOf(request.url).startsWith("/api/"))

/** `Retry-After` in milliseconds (seconds or an HTTP date), or undefined. */
export const retryAfterMs = (value: string | undefined, now = Date.now()): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  // An HTTP date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`); Date.parse alone would take "-1".
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return undefined
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** Adds a fresh key to each write under /api/ that has none (a caller's own key is kept). */
export const withIdempotencyKey = (request: HttpClientRequest.HttpClientRequest) =>
  WRITES.has(request.method) && pathOf(request.url).startsWith("/api/") && request.headers["idempotency-key"] === undefined
    ? HttpClientRequest.setHeader(request, "idempotency-key", newKey())
    : request

/** Sends the same request again (same key) on a transport failure or a 503, at most `attempts` times in all. */
export const retrying = (options: RetryOptions = {}) => {
  const attempts = Math.max(1, options.attempts ?? 3)
  const maxDelay = options.maxDelayMs ?? 30_000
  const base = options.baseDelayMs ?? 250
  return <E, R>(client: HttpClient.HttpClient.With<E, R>) =>
    HttpClient.transform(client, (effect, request) => {
      if (!isRetryable(request)) return effect
      const loop = (attempt: number): typeof effect =>
        Effect.flatMap(
          Effect.result(effect),
          (result): typeof effect => {
            const last = attempt + 1 >= attempts
            if (result._tag === "Success") {
              const response = result.success
              if (response.status !== 503 || last) return Effect.succeed(response)
              const wait = retryAfterMs(response.headers["retry-after"]) ?? base * 2 ** attempt
              if (wait > maxDelay) return Effect.succeed(response)
              return Effect.andThen(Effect.sleep(Duration.millis(wait)), loop(attempt + 1))
            }
            const error = result.failure as unknown
            const transport = typeof error === "object" && error !== null && "reason" in error &&
              (error as HttpClientError.HttpClientError).reason._tag === "TransportError"
            if (!transport || last) return Effect.fail(result.failure)
            return Effect.andThen(Effect.sleep(Duration.millis(base * 2 ** attempt)), loop(attempt + 1))
          }
        )
      return loop(0)
    })
}
