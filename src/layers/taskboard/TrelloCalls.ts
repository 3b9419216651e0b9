/**
 * One Trello REST call for the board writes: the pairing's key and token in Trello's OAuth header
 * (never in a URL; `authorization` is redacted wherever Effect renders headers), a time-out, Trello's
 * per-token rate limit obeyed, and every failure a `TaskBoardError` that says whether it may heal.
 *
 * Rate limit (Trello: 100 requests per 10 s per token, `x-rate-limit-api-token-*` headers, 429 with
 * no Retry-After): each token's last known `remaining` is kept with the end of its window (at most
 * `interval-ms` after the answer that reported it); a call finding none left waits for that end. A
 * 429 (nothing was done) waits Retry-After when given, else the interval, and is sent again; waits
 * past `maxRateLimitWait` in all fail as retryable instead, so a job never sleeps for long.
 * Only 429 is sent again here: after a 5xx or a time-out a write may have happened, which only the
 * caller (the job, with its record) can decide.
 */
import { Clock, Duration, Effect, Redacted } from "effect"
import { createHash } from "node:crypto"
import { HttpClient, HttpClientRequest } from "effect/http"
import { dependencyFailed, dependencySucceeded } from "../../services/infra/DependencyHealth.ts"
import { countUpstream, upstreamRoute } from "../../services/infra/Metrics.ts"
import { TaskBoardError } from "../../services/taskboard/TaskBoard.ts"
import type { Pairing } from "../../services/taskboard/TaskboardPairings.ts"
import { join } from "../sources/Upstream.ts"

export interface TrelloCallsOptions {
  readonly baseUrl: string
  readonly timeout: Duration.Input
  /** The longest a call waits in all for Trello's rate limit before failing as retryable. Default 15 s. */
  readonly maxRateLimitWait?: Duration.Input | undefined
}

const DEPENDENCY = "task board (Trello)"
const DEFAULT_INTERVAL_MS = 10_000
/** 429s taken in one call before it gives up (each one is followed by a wait). */
const MAX_REFUSALS = 3

/** Trello's quoted OAuth header value: the credentials must not carry quotes. */
const quoted = (r: Redacted.Redacted<string>) => Redacted.value(r).replace(/["\\]/g, "")
export const oauthHeader = (p: Pairing) => `OAuth oauth_consumer_key="${quoted(p.key)}", oauth_token="${quoted(p.token)}"`

const fail = (reason: TaskBoardError["reason"], message: string, extra: { status?: number; retryAfterSeconds?: number } = {}) =>
  Effect.fail(new TaskBoardError({ reason, retryable: reason === "unavailable" || reason === "timeout", message, ...extra }))

/** What an answer's status means for the call (2xx aside). */
export const failureOf = (status: number): { readonly reason: TaskBoardError["reason"]; readonly what: string } =>
  status === 401 || status === 403
    ? { reason: "refused", what: "refused the pairing's credentials or access to the board" }
    : status === 404
    ? { reason: "not_found", what: "no longer has the board, list or card" }
    : status >= 500
    ? { reason: "unavailable", what: "failed" }
    : { reason: "invalid", what: "refused the request" }

const headerNumber = (headers: Readonly<Record<string, string>>, name: string): number | undefined => {
  const raw = headers[name]
  const n = raw === undefined || raw.trim() === "" ? NaN : Number(raw)
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

/**
 * A token's window as this client knows it: requests left, when it ends at the latest, the token's
 * limit and interval (from Trello's headers). `confirmed` is false for a window this client opened
 * itself when the last one ended: the first answer in it fixes its end.
 */
interface Window { remaining: number | undefined; resetAt: number; max: number | undefined; interval: number; confirmed: boolean }

export const makeTrelloCalls = (options: TrelloCallsOptions) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const maxWait = Duration.toMillis(Duration.fromInputUnsafe(options.maxRateLimitWait ?? "15 seconds"))
    const windows = new Map<string, Window>()
    const tokenId = (p: Pairing) => createHash("sha256").update(Redacted.value(p.token)).digest("base64url")

    /** Takes one request from the token's window, or says how long to wait for the next window. */
    const take = (id: string, now: number): number => {
      const w = windows.get(id)
      if (w === undefined) return 0
      if (now >= w.resetAt) {
        // A new window: when the limit is known, only that many go before the first answer fixes its end.
        if (w.max === undefined) windows.delete(id)
        else windows.set(id, { remaining: w.max - 1, resetAt: now + w.interval, max: w.max, interval: w.interval, confirmed: false })
        return 0
      }
      if (w.remaining === undefined || w.remaining > 0) {
        if (w.remaining !== undefined) w.remaining -= 1
        return 0
      }
      return w.resetAt - now
    }

    const observe = (id: string, headers: Readonly<Record<string, string>>, now: number) => {
      const remaining = headerNumber(headers, "x-rate-limit-api-token-remaining")
      if (remaining === undefined) return
      const interval = headerNumber(headers, "x-rate-limit-api-token-interval-ms") ?? DEFAULT_INTERVAL_MS
      const max = headerNumber(headers, "x-rate-limit-api-token-max")
      const w = windows.get(id)
      if (w === undefined || now >= w.resetAt) windows.set(id, { remaining, resetAt: now + interval, max, interval, confirmed: true })
      else {
        w.remaining = Math.min(remaining, w.remaining ?? remaining)
        if (!w.confirmed) Object.assign(w, { resetAt: now + interval, confirmed: true })
      }
    }

    const block = (id: string, until: number) => {
      const w = windows.get(id)
      windows.set(id, { remaining: 0, resetAt: until, max: w?.max, interval: w?.interval ?? DEFAULT_INTERVAL_MS, confirmed: true })
    }

    const tooLong = (waitMs: number) =>
      fail("unavailable", `Trello's rate limit asks for a wait of ${Math.ceil(waitMs / 1000)} s; retry later.`, {
        status: 429,
        retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000))
      })

    const send = (request: HttpClientRequest.HttpClientRequest) => {
      const count = (status: number | undefined) => countUpstream("trello", upstreamRoute(request.method, request.url), status)
      return client.execute(request).pipe(
        Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, headers: response.headers, text }))),
        Effect.tap((answer) => count(answer.status)),
        Effect.catch((error) =>
          Effect.andThen(
            Effect.andThen(dependencyFailed(DEPENDENCY, { source: "task board", reason: error.reason._tag }), count(undefined)),
            fail("unavailable", "Trello is unreachable; retry.")
          )
        ),
        Effect.timeoutOrElse({
          duration: options.timeout,
          orElse: () =>
            Effect.andThen(
              Effect.andThen(dependencyFailed(DEPENDENCY, { source: "task board", reason: "timeout" }), count(undefined)),
              fail("timeout", `Trello did not answer within ${Duration.format(Duration.fromInputUnsafe(options.timeout))}; retry.`)
            )
        })
      )
    }

    /** Sends `method path` with `body` (JSON) as the pairing; the answer's JSON, or why not. */
    const call = (pairing: Pairing, method: "GET" | "POST", path: string, body?: Record<string, unknown>): Effect.Effect<unknown, TaskBoardError> => {
      const id = tokenId(pairing)
      const base = (method === "GET" ? HttpClientRequest.get : HttpClientRequest.post)(join(options.baseUrl, path), { acceptJson: true })
      const request = (body === undefined ? base : HttpClientRequest.bodyJsonUnsafe(base, body)).pipe(
        HttpClientRequest.setHeader("authorization", oauthHeader(pairing))
      )
      const attempt = (waited: number, refusals = 0): Effect.Effect<unknown, TaskBoardError> =>
        Effect.gen(function*() {
          const wait = take(id, yield* Clock.currentTimeMillis)
          if (wait > 0) {
            if (waited + wait > maxWait) return yield* tooLong(wait)
            yield* Effect.sleep(Duration.millis(wait))
            return yield* attempt(waited + wait, refusals)
          }
          const answer = yield* send(request)
          const now = yield* Clock.currentTimeMillis
          observe(id, answer.headers, now)
          if (answer.status === 429) {
            const seconds = headerNumber(answer.headers, "retry-after")
            const pause = seconds !== undefined ? seconds * 1000 : headerNumber(answer.headers, "x-rate-limit-api-token-interval-ms") ?? DEFAULT_INTERVAL_MS
            if (refusals + 1 >= MAX_REFUSALS) return yield* tooLong(pause)
            block(id, now + pause)
            yield* Effect.logWarning("Trello rate limited a task-board call; waiting").pipe(Effect.annotateLogs({ waitMs: pause, path: upstreamRoute(method, path) }))
            return yield* attempt(waited, refusals + 1)
          }
          if (answer.status >= 200 && answer.status < 300) {
            yield* dependencySucceeded(DEPENDENCY)
            return yield* Effect.try({ try: () => JSON.parse(answer.text) as unknown, catch: () => undefined }).pipe(
              Effect.catch(() => fail("unavailable", "Trello answered something unexpected.", { status: answer.status }))
            )
          }
          if (answer.status >= 500) yield* dependencyFailed(DEPENDENCY, { source: "task board", status: answer.status })
          else yield* dependencySucceeded(DEPENDENCY)
          const { reason, what } = failureOf(answer.status)
          return yield* fail(reason, `Trello ${what} (${answer.status}${answer.text === "" ? "" : `: ${answer.text.slice(0, 200)}`}).`, { status: answer.status })
        })
      return attempt(0).pipe(Effect.withSpan("TaskBoard.call", { attributes: { route: upstreamRoute(method, path) } }))
    }

    return { call }
  })
