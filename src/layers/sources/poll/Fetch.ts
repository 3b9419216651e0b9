/**
 * HTTP manners for every poll: a descriptive User-Agent, conditional requests from the previous
 * PollState, redirects followed by hand (each hop guarded, loops and long chains refused), at most
 * N requests in flight per host (a semaphore per host, dropped when idle), a time-out per hop that
 * starts once the host's turn has come (waiting behind a busy host is not a fault of this source), a
 * body-size cap that stops reading as soon as it is passed, and 429/503 `Retry-After` kept.
 * Every fault is a PollFailed in words a feed's owner can act on.
 */
import { Duration, Effect, Redacted, Semaphore, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import type { HttpClientResponse } from "effect/http"
import { createHash } from "node:crypto"
import { PollFailed, type PollResult, type PollState } from "../../../services/sources/SourcePoller.ts"
import { countUpstream, upstreamRoute } from "../../../services/infra/Metrics.ts"
import { refusedPrivate } from "../Rss.ts"

export interface FetchSettings {
  readonly userAgent: string
  /** Per hop, from the moment the host's turn comes until the body is read. */
  readonly timeout: Duration.Input
  readonly maxBodyBytes: number
  readonly maxRedirects: number
  /** Requests in flight per host (feed hosts). */
  readonly hostConcurrency: number
  /** For guarded requests (user-given URLs): a client that connects to public addresses only (PublicOnlyClient.ts). */
  readonly guardedClient?: HttpClient.HttpClient | undefined
}

export interface Fetched {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  /** The URL that answered, after redirects (the base for relative links). */
  readonly url: string
}

export interface FetchRequest {
  readonly request: HttpClientRequest.HttpClientRequest
  /** Who is asked, as messages name it: `The feed at https://…`, `Twitch`. */
  readonly name: string
  /** Checked before each hop (the SSRF guard of user-given URLs). */
  readonly guard?: ((url: URL) => Effect.Effect<void, PollFailed>) | undefined
  /** Adds `If-None-Match` / `If-Modified-Since` from it. */
  readonly previous?: PollState | undefined
  /** Overrides the per-host limit (platform APIs take more than a blog). */
  readonly concurrency?: number | undefined
  /** The platform in metrics (`twitch`…); without it a user-given URL, counted as `rss` with no path. */
  readonly platform?: string | undefined
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

export const failed = (
  kind: PollFailed["kind"],
  message: string,
  extra: { readonly status?: number | undefined; readonly retryAfterSeconds?: number | undefined } = {}
) =>
  new PollFailed({
    kind,
    message,
    ...(extra.status === undefined ? {} : { status: extra.status }),
    ...(extra.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: extra.retryAfterSeconds })
  })

/** Seconds from `Retry-After` (seconds or an HTTP date), undefined when absent or unreadable. */
export const retryAfterSeconds = (value: string | undefined, nowMillis: number): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const n = Number(value.trim())
  if (Number.isFinite(n)) return n >= 0 ? Math.ceil(n) : undefined
  const at = Date.parse(value)
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - nowMillis) / 1000)) : undefined
}

/**
 * How long a 429/503 asks to wait: `Retry-After`, else the platforms' reset headers (X and Twitch
 * send the reset as epoch seconds, Reddit as seconds from now).
 */
export const retryAfterOf = (headers: Readonly<Record<string, string>>, nowMillis: number): number | undefined => {
  const standard = retryAfterSeconds(headers["retry-after"], nowMillis)
  if (standard !== undefined) return standard
  const raw = (headers["x-rate-limit-reset"] ?? headers["ratelimit-reset"] ?? headers["x-ratelimit-reset"] ?? "").trim()
  const reset = Number(raw)
  if (raw === "" || !Number.isFinite(reset) || reset < 0) return undefined
  return Math.max(0, Math.ceil(reset > 1e9 ? reset - nowMillis / 1000 : reset))
}

/** The request's full URL for loop detection and messages (secrets in parameters stay hidden). */
const shownUrl = (request: HttpClientRequest.HttpClientRequest): string => {
  const params = [...request.urlParams].map(([k, v]) => `${encodeURIComponent(k)}=${Redacted.isRedacted(v) ? "<redacted>" : encodeURIComponent(v)}`)
  return params.length === 0 ? request.url : `${request.url}${request.url.includes("?") ? "&" : "?"}${params.join("&")}`
}

/** Lets go of an answer whose body is not wanted: one chunk at most is read, then the request is aborted. */
const discard = (response: HttpClientResponse.HttpClientResponse) =>
  response.stream.pipe(Stream.runForEach(() => Effect.fail("enough" as const)), Effect.ignore)

const formatBytes = (n: number) => n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MiB` : `${Math.round(n / 1024)} KiB`

export const makeFetcher = (settings: FetchSettings) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const timeout = Duration.fromInputUnsafe(settings.timeout)
    const hosts = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()

    /** Runs `effect` holding one of the host's permits; the host's entry goes when nobody uses it. */
    const perHost = <A, E>(host: string, limit: number, effect: Effect.Effect<A, E>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          let entry = hosts.get(host)
          if (entry === undefined) {
            entry = { semaphore: Semaphore.makeUnsafe(Math.max(1, limit)), users: 0 }
            hosts.set(host, entry)
          }
          entry.users++
          return entry
        }),
        (entry) => entry.semaphore.withPermits(1)(effect),
        (entry) =>
          Effect.sync(() => {
            entry.users--
            if (entry.users === 0) hosts.delete(host)
          })
      )

    const readCapped = (response: HttpClientResponse.HttpClientResponse, name: string): Effect.Effect<Uint8Array, PollFailed> => {
      const max = settings.maxBodyBytes
      const tooLarge = failed("too-large", `${name} sent more than ${formatBytes(max)}; the gateway reads at most that much.`, { status: response.status })
      const length = Number(response.headers["content-length"] ?? "")
      if (Number.isFinite(length) && length > max) {
        // Drop the connection without reading: the stream's finaliser aborts the request.
        return discard(response).pipe(Effect.andThen(Effect.fail(tooLarge)))
      }
      return response.stream.pipe(
        Stream.runFoldEffect(
          () => ({ chunks: [] as Array<Uint8Array>, size: 0 }),
          (acc, chunk: Uint8Array) => {
            acc.size += chunk.length
            if (acc.size > max) return Effect.fail(tooLarge)
            acc.chunks.push(chunk)
            return Effect.succeed(acc)
          }
        ),
        Effect.map(({ chunks }): Uint8Array => Buffer.concat(chunks)),
        Effect.mapError((e) => e instanceof PollFailed ? e : failed("unreachable", `${name} broke off while sending its answer.`))
      )
    }

    type Hop =
      | { readonly _tag: "Redirect"; readonly status: number; readonly location: string | undefined }
      | { readonly _tag: "Done"; readonly fetched: Fetched }

    /** One request and its body, within the time-out. */
    const hop = (request: HttpClientRequest.HttpClientRequest, name: string, via: HttpClient.HttpClient): Effect.Effect<Hop, PollFailed> =>
      via.execute(request).pipe(
        Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
        Effect.mapError((e) =>
          refusedPrivate(e)
            ? failed("unreachable", `${name} resolves to a private or loopback address the gateway does not read.`)
            : failed("unreachable", `${name} could not be reached (${e.reason._tag === "TransportError" ? "connection failed" : e.reason._tag}).`)
        ),
        Effect.flatMap((response): Effect.Effect<Hop, PollFailed> => {
          if (REDIRECTS.has(response.status)) {
            return discard(response).pipe(Effect.as<Hop>({
              _tag: "Redirect",
              status: response.status,
              location: response.headers["location"]
            }))
          }
          return Effect.gen(function*() {
            const status = response.status
            if (status === 429 || status >= 500) {
              const retryAfter = retryAfterOf(response.headers, Date.now())
              yield* discard(response)
              return yield* Effect.fail(failed(
                "http",
                status === 429
                  ? `${name} asks the gateway to slow down (429)${retryAfter === undefined ? "" : `; retrying after ${retryAfter} s`}.`
                  : `${name} answered ${status}${status === 503 ? " (unavailable)" : ""}; the gateway retries later.`,
                { status, retryAfterSeconds: retryAfter }
              ))
            }
            const body = status === 304 || status === 204
              ? yield* discard(response).pipe(Effect.as(new Uint8Array(0)))
              : yield* readCapped(response, name)
            return { _tag: "Done", fetched: { status, headers: response.headers, body, url: request.url } } as const
          })
        }),
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () => Effect.fail(failed("timeout", `${name} did not answer within ${Duration.format(timeout)}.`))
        })
      )

    const fetch = (req: FetchRequest): Effect.Effect<Fetched, PollFailed> =>
      Effect.gen(function*() {
        let request = req.request
        if (request.headers["user-agent"] === undefined) request = HttpClientRequest.setHeader(request, "user-agent", settings.userAgent)
        const previous = req.previous
        if (previous?.etag != null) request = HttpClientRequest.setHeader(request, "if-none-match", previous.etag)
        if (previous?.lastModified != null) request = HttpClientRequest.setHeader(request, "if-modified-since", previous.lastModified)
        const seen: Array<string> = []
        for (let hops = 0; ; hops++) {
          const url = yield* Effect.try({
            try: () => new URL(request.url),
            catch: () => failed("unreachable", `${req.name} has an invalid URL (${request.url}).`)
          })
          seen.push(shownUrl(request))
          if (req.guard !== undefined) yield* req.guard(url)
          const limit = req.concurrency ?? settings.hostConcurrency
          // Keyed by limit too: a platform API and feeds on one host (the sandbox) keep their own limits.
          const via = req.guard !== undefined ? settings.guardedClient ?? client : client
          const route = req.platform === undefined ? "GET :feed" : upstreamRoute(request.method, request.url)
          const count = (status: number | undefined) => countUpstream(req.platform ?? "rss", route, status)
          const result = yield* perHost(`${limit}@${url.host}`, limit, hop(request, req.name, via)).pipe(
            Effect.tap((h) => count(h._tag === "Done" ? h.fetched.status : h.status)),
            Effect.tapError((e) => count(e.status))
          )
          if (result._tag === "Done") return result.fetched
          if (result.location === undefined || result.location.trim() === "") {
            return yield* Effect.fail(failed("http", `${req.name} answered ${result.status} without saying where to.`, { status: result.status }))
          }
          const next = yield* Effect.try({
            try: () => new URL(result.location!.trim(), request.url),
            catch: () => failed("http", `${req.name} redirects to an invalid URL.`, { status: result.status })
          })
          if (next.protocol !== "http:" && next.protocol !== "https:") {
            return yield* Effect.fail(failed("http", `${req.name} redirects to a non-web URL (${next.protocol}).`, { status: result.status }))
          }
          const nextShown = next.href
          if (seen.includes(nextShown)) {
            return yield* Effect.fail(failed("http", `${req.name} redirects in a loop (${[...seen, nextShown].join(" → ")}).`, { status: result.status }))
          }
          if (hops + 1 > settings.maxRedirects) {
            return yield* Effect.fail(failed("http", `${req.name} redirects more than ${settings.maxRedirects} times.`, { status: result.status }))
          }
          const crossOrigin = next.origin !== url.origin
          request = HttpClientRequest.setUrlParams(HttpClientRequest.setUrl(request, next.href), [])
          if (result.status === 303) request = HttpClientRequest.setMethod(request, "GET")
          // Credentials are for the host they were meant for.
          if (crossOrigin) request = HttpClientRequest.removeHeader(HttpClientRequest.removeHeader(request, "authorization"), "cookie")
        }
      })

    return { fetch }
  })

export type Fetcher = Effect.Success<ReturnType<typeof makeFetcher>>

/** The validators of an answer, for the next conditional request. */
export const validators = (fetched: Fetched) => ({
  etag: fetched.headers["etag"] ?? null,
  lastModified: fetched.headers["last-modified"] ?? null
})

/**
 * A 304, or the same body as last time → NotModified (validators refreshed, cursor kept); else
 * `read` with the new body's hash. Never NotModified on a first poll, so its answer is a baseline.
 */
export const unlessUnchanged = <A>(
  previous: PollState,
  fetched: Fetched,
  read: (bodyHash: string) => Effect.Effect<A, PollFailed>
): Effect.Effect<A | Extract<PollResult, { readonly _tag: "NotModified" }>, PollFailed> => {
  const hadAnswer = previous.bodyHash !== null || previous.etag !== null || previous.lastModified !== null
  const v = validators(fetched)
  const kept: PollState = { ...previous, etag: v.etag ?? previous.etag, lastModified: v.lastModified ?? previous.lastModified }
  if (fetched.status === 304 && hadAnswer) return Effect.succeed({ _tag: "NotModified", state: kept } as const)
  const hash = sha256(fetched.body)
  if (hash === previous.bodyHash) return Effect.succeed({ _tag: "NotModified", state: kept } as const)
  return read(hash)
}

/** The body as JSON, undefined when it is not. */
export const json = (fetched: Fetched): unknown => {
  try {
    return JSON.parse(Buffer.from(fetched.body).toString("utf8"))
  } catch {
    return undefined
  }
}
