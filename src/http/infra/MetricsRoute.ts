/**
 * GET /metrics: Effect's metrics in Prometheus text exposition format. Served only when
 * METRICS_TOKEN is set, and only to `Authorization: Bearer <METRICS_TOKEN>` (README "Observing"):
 * the API's port is public, and the metrics name routes, volumes and error rates.
 */
import { Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { timingSafeEqual } from "node:crypto"
import { runSamplers } from "../../services/infra/Metrics.ts"
import { envelope } from "../edge/Envelope.ts"

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The route, or nothing when no token is configured (then /metrics is 404 like any unknown path). */
export const MetricsRoute = (token: Redacted.Redacted<string> | undefined, refresh: Effect.Effect<void> = runSamplers) =>
  token === undefined ? Layer.empty : HttpRouter.add("GET", "/metrics", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const given = /^Bearer\s+(.+)$/i.exec(request.headers["authorization"] ?? "")?.[1]?.trim() ?? ""
    if (!sameSecret(given, Redacted.value(token))) {
      // The envelope like every other refusal (the global middleware adds WWW-Authenticate).
      return envelope(401, "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.")
    }
    // Gauges read at scrape time (the job engine's queues, the database's connections) are brought up to date first.
    yield* refresh
    const body = yield* PrometheusMetrics.format()
    return HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8", headers: { "cache-control": "no-store" } })
  }))
