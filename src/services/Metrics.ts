/**
 * The gateway's own metrics (Effect's Metric module), served in Prometheus text at /metrics
 * (http/Metrics.ts); defined here so http/ and layers/ both count. Attribute values are bounded: route templates, never raw paths.
 */
import { Effect, Metric } from "effect"

/** Requests by method, route template and status (http/Envelope.ts, the global middleware). */
export const httpRequests = Metric.counter("http_server_requests_total", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

/** Latency by method and route template, in seconds. */
export const httpDuration = Metric.histogram("http_server_request_duration_seconds", {
  description: "HTTP request duration in seconds, by method and route template",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
})

/** Calls to the chat platform by route template and status (layers/discord/DiscordRest.ts). */
export const upstreamRequests = Metric.counter("upstream_requests_total", {
  description: "Calls to the chat platform, by platform route and status",
  incremental: true
})

/** The platform's 429 answers by route template. */
export const upstreamRateLimited = Metric.counter("upstream_rate_limited_total", {
  description: "429 answers of the chat platform, by platform route",
  incremental: true
})

/** Requests refused by the gateway's own rate limits (http/RateLimit.ts), by limit. */
export const rateLimitRejections = Metric.counter("rate_limit_rejections_total", {
  description: "Requests refused by the gateway's rate limits, by limit",
  incremental: true
})

/** Cache lookups by cache and result (hit or miss): the hit ratio is hits / all. */
export const cacheLookups = Metric.counter("cache_lookups_total", {
  description: "Cache lookups, by cache and result (hit, miss)",
  incremental: true
})

/** Counts one lookup of `cache`. */
export const countLookup = (cache: string, hit: boolean) =>
  Metric.update(Metric.withAttributes(cacheLookups, { cache, result: hit ? "hit" : "miss" }), 1)

/** The same, outside an Effect (a plain function in a cache's hot path). */
export const countLookupUnsafe = (cache: string, hit: boolean) => Effect.runSync(countLookup(cache, hit))

/** Records one answered request. */
export const recordRequest = (method: string, route: string, status: number, seconds: number) =>
  Effect.all([
    Metric.update(Metric.withAttributes(httpRequests, { method, route, status: String(status) }), 1),
    Metric.update(Metric.withAttributes(httpDuration, { method, route }), seconds)
  ], { discard: true })

/**
 * The route label of a request: the path with every id (a decimal segment) as `:id` and the name
 * after `getUserId`/`getGameId` as `:name`; the sandbox as one label; a 404 as `unmatched`, so a
 * scanner's invented paths never add series. The global middleware runs outside the router, where
 * the matched template is not known, so the template is rebuilt from the path's shape.
 */
export const routeLabel = (url: string, status: number): string => {
  if (status === 404) return "unmatched"
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  if (path.startsWith("/sandbox")) return "/sandbox/*"
  const segments = path.split("/")
  for (let i = 0; i < segments.length; i++) {
    if (/^[0-9]+$/.test(segments[i]!)) segments[i] = ":id"
    else if (i > 0 && (segments[i - 1] === "getUserId" || segments[i - 1] === "getGameId")) segments[i] = ":name"
  }
  return segments.join("/")
}
