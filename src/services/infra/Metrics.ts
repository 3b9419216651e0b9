/**
 * The gateway's own metrics (Effect's Metric module), served in Prometheus text at /metrics
 * (http/infra/MetricsRoute.ts); defined here so http/ and layers/ both count. Attribute values are bounded: route templates, never raw paths.
 */
import { Effect, Metric } from "effect"
import type { Context } from "effect"
import { boundedMemo } from "./Memo.ts"
import { routedPath } from "./RoutedPath.ts"

const HTTP_REQUESTS = { description: "HTTP requests answered, by method, route template and status", incremental: true } as const
const HTTP_DURATION = {
  description: "HTTP request duration in seconds, by method and route template",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
} as const

/** Requests by method, route template and status (http/edge/Envelope.ts, the global middleware). */
export const httpRequests = Metric.counter("http_server_requests_total", HTTP_REQUESTS)

/** Latency by method and route template, in seconds. */
export const httpDuration = Metric.histogram("http_server_request_duration_seconds", HTTP_DURATION)

/**
 * Calls to upstreams (the chat platform, the external sources, the task board) by platform, route
 * template and status (`error` when no answer came: refused connection, time-out).
 */
export const upstreamRequests = Metric.counter("upstream_requests_total", {
  description: "Calls to upstreams, by platform, route template and status (error: no answer)",
  incremental: true
})

/** The upstreams' 429 answers by platform and route template. */
export const upstreamRateLimited = Metric.counter("upstream_rate_limited_total", {
  description: "429 answers of upstreams, by platform and route template",
  incremental: true
})

/** Counts one upstream call; `status` undefined when no answer came. A 429 also counts as rate limited. */
export const countUpstream = (platform: string, route: string, status: number | undefined) =>
  status === 429
    ? Effect.all([
      Metric.update(Metric.withAttributes(upstreamRequests, { platform, route, status: "429" }), 1),
      Metric.update(Metric.withAttributes(upstreamRateLimited, { platform, route }), 1)
    ], { discard: true })
    : Metric.update(Metric.withAttributes(upstreamRequests, { platform, route, status: status === undefined ? "error" : String(status) }), 1)

/** Words kept in an upstream route template; any other path segment is a parameter. */
const STATIC_SEGMENT = /^[a-z][a-z_]*[0-9]?(_v[0-9]+)?(\.json)?$|^[0-9]$/i
/** Segments whose next segment is a name (Reddit's /r/:name, X's /by/username/:name, Trello's /organizations/:name). */
const NAME_BEFORE = new Set(["r", "user", "username", "organizations"])

/**
 * The route template of an upstream URL, e.g. `GET /2/users/:id/tweets`, `GET /r/:name/about`: ids
 * (numbers) become `:id`, the segment after a name-taking one
 * `:name`, and any segment that is not a plain word `:param`, so labels stay bounded.
 */
export const upstreamRoute = (method: string, url: string): string => {
  let path = url
  const scheme = path.indexOf("://")
  if (scheme !== -1) {
    const slash = path.indexOf("/", scheme + 3)
    path = slash === -1 ? "/" : path.slice(slash)
  }
  const end = path.search(/[?#]/)
  if (end !== -1) path = path.slice(0, end)
  const segments = path.split("/")
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!
    if (segment === "") continue
    if (NAME_BEFORE.has(segments[i - 1]!.toLowerCase()) && !segments[i - 1]!.startsWith(":")) segments[i] = ":name"
    else if (/^[0-9]+$/.test(segment) && segment.length > 1) segments[i] = ":id"
    else if (!STATIC_SEGMENT.test(segment) || segment.length > 40) segments[i] = ":param"
  }
  return `${method} ${segments.join("/")}`
}

/** Requests refused by the gateway's own rate limits (http/edge/RateLimit.ts), by limit. */
export const rateLimitRejections = Metric.counter("rate_limit_rejections_total", {
  description: "Requests refused by the gateway's rate limits, by limit",
  incremental: true
})

const CACHE_LOOKUPS = { description: "Cache lookups, by cache and result (hit, miss)", incremental: true } as const

/** Cache lookups by cache and result (hit or miss): the hit ratio is hits / all. */
export const cacheLookups = Metric.counter("cache_lookups_total", CACHE_LOOKUPS)

/** Counts one lookup of `cache`. */
export const countLookup = (cache: string, hit: boolean) =>
  Metric.update(Metric.withAttributes(cacheLookups, { cache, result: hit ? "hit" : "miss" }), 1)

/**
 * A counter of one cache's lookups, its two series made once (caches sit on hot paths), each its own
 * metric with fixed attributes: the same series as `withAttributes(cacheLookups, …)`, but its
 * registry key is computed once, where wrappers of one metric that alternate recompute it (a sort and
 * a JSON.stringify) on every update.
 */
export const lookupCounter = (cache: string) => {
  const metrics = lookupMetrics(cache)
  const hit = Metric.update(metrics.hit, 1)
  const miss = Metric.update(metrics.miss, 1)
  return (found: boolean) => found ? hit : miss
}

/** The two series of `lookupCounter(cache)` as metrics, for code that updates them without an Effect (`updateUnsafe`). */
export const lookupMetrics = (cache: string) => ({
  hit: Metric.counter("cache_lookups_total", { ...CACHE_LOOKUPS, attributes: { cache, result: "hit" } }),
  miss: Metric.counter("cache_lookups_total", { ...CACHE_LOOKUPS, attributes: { cache, result: "miss" } })
})

/** Jobs of the job engine's queues by queue and state (queued, active, failed), sampled at scrape time. */
export const jobQueueJobs = Metric.gauge("job_queue_jobs", {
  description: "Jobs in the job engine's queues, by queue and state (queued, active, failed)"
})

/** Database connections by state, as the database reports them, sampled at scrape time. */
export const dbConnections = Metric.gauge("db_connections", {
  description: "Connections of the gateway to its database, by state (active, idle, idle_in_transaction)"
})

/**
 * Samplers of the gauges read at scrape time, added by the layers that can read them (the job
 * engine, the database) for as long as their scope lives; /metrics runs them before formatting. A
 * module-level set, like the metric registry it feeds: one process, one set of metrics.
 */
const samplers = new Set<Effect.Effect<void>>()

/** Adds `sample` to what a scrape runs, until the scope closes. Failures of a sample are ignored. */
export const sampleOnScrape = (sample: Effect.Effect<void, unknown>) => {
  const quiet = Effect.ignore(sample)
  return Effect.acquireRelease(
    Effect.sync(() => samplers.add(quiet)),
    () => Effect.sync(() => samplers.delete(quiet))
  )
}

/** Runs every sampler, at most 2 s each: a slow database must not hold the scrape. */
export const runSamplers: Effect.Effect<void> = Effect.suspend(() =>
  Effect.forEach([...samplers], (s) => Effect.timeoutOrElse(s, { duration: "2 seconds", orElse: () => Effect.void }), {
    concurrency: "unbounded",
    discard: true
  })
)

/** The series of one method, route label and status, made once (see lookupCounter); labels are bounded. */
interface RequestSeries {
  readonly count: Metric.Metric<number, unknown>
  readonly duration: Metric.Metric<number, unknown>
}
const requestSeries = new Map<string, RequestSeries>()

const seriesOf = (method: string, route: string, status: number): RequestSeries => {
  const key = `${method} ${status} ${route}`
  let series = requestSeries.get(key)
  if (series === undefined) {
    if (requestSeries.size >= 10_000) requestSeries.clear()
    series = {
      count: Metric.counter("http_server_requests_total", { ...HTTP_REQUESTS, attributes: { method, route, status: String(status) } }),
      duration: Metric.histogram("http_server_request_duration_seconds", { ...HTTP_DURATION, attributes: { method, route } })
    }
    requestSeries.set(key, series)
  }
  return series
}

/**
 * Records one answered request, in place, for the global middleware that already holds its fiber:
 * the two updates (`Metric.update` is `updateUnsafe` with the fiber's context) without two effects
 * per request.
 */
export const recordRequestUnsafe = (context: Context.Context<never>, method: string, route: string, status: number, seconds: number): void => {
  const series = seriesOf(method, route, status)
  series.count.updateUnsafe(1, context)
  series.duration.updateUnsafe(seconds, context)
}

/**
 * The route label of a request: the path with every id (a decimal segment) as `:id` and the name
 * after `getUserId`/`getGameId` as `:name`; the sandbox as one label; a 404 as `unmatched`, so a
 * scanner's invented paths never add series. The global middleware runs outside the router, where
 * the matched template is not known, so the template is rebuilt from the path's shape — read as the
 * router reads it (RoutedPath.ts), so that `/API/…`, `//api/…`, `…/user;x=1` or a trailing slash
 * add no series of their own and never carry a looked-up name.
 */
export const routeLabel = (url: string, status: number): string => {
  if (status === 404) return "unmatched"
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  if (path.startsWith("/sandbox")) return "/sandbox/*"
  // The same /api and /auth paths (ids only, no secrets: the query is cut off above) come back
  // request after request: their labels are kept, in a map bounded like the series (a scan of
  // distinct paths starts it over).
  return path.startsWith("/api/") || path.startsWith("/auth/") ? keptRouteLabel(path) : labelOf(path)
}

/** The API's path words that take a name after them, as its templates spell them (compared in lower case). */
const NAME_LOOKUPS: Readonly<Record<string, string>> = { getuserid: "getUserId", getgameid: "getGameId" }

const labelOf = (path: string): string => {
  const routed = routedPath(path)
  if (routed.startsWith("/sandbox")) return "/sandbox/*"
  const segments = routed.split("/")
  // `/api/v1/user/` is routed as `/api/v1/user`.
  if (segments.length > 2 && segments[segments.length - 1] === "") segments.pop()
  const label = segments.map((segment, i) =>
    /^[0-9]+$/.test(segment) ? ":id" : i > 0 && NAME_LOOKUPS[segments[i - 1]!] !== undefined ? ":name" : NAME_LOOKUPS[segment] ?? segment
  )
  return label.join("/")
}
const keptRouteLabel = boundedMemo(10_000, labelOf)
