/**
 * GET /metrics at its edges, as a scraper meets it (issue 13 item 7): refused without the token,
 * with the wrong one or with another scheme — the error envelope with WWW-Authenticate, like every
 * other 401, and never a metric in the body; served in the text exposition format, uncached, to
 * the right token; absent (404 envelope) when METRICS_TOKEN is unset. The scrape of each family is
 * test/infra/MetricFamilies.test.ts; the bundle with OTLP traces, Observing.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { json, raw, TestApp } from "../utils/TestApp.ts"

const TOKEN = "metrics-edge-token-0123456789"

const WithMetrics = TestApp.layer({ capabilities: "memory", config: { metricsToken: Redacted.make(TOKEN) } }).pipe(
  Layer.provideMerge(CapturedLogs.layer)
)

layer(WithMetrics, { excludeTestServices: true, timeout: 60_000 })("GET /metrics with METRICS_TOKEN set", (it) => {
  it.effect("no token, a wrong one, another scheme: 401 envelope with WWW-Authenticate, no metrics", () =>
    Effect.gen(function*() {
      const attempts: ReadonlyArray<Record<string, string>> = [
        {},
        { authorization: "Bearer not-the-token" },
        { authorization: `Bearer ${TOKEN}x` },
        { authorization: `Basic ${Buffer.from(`prometheus:${TOKEN}`).toString("base64")}` },
        { authorization: TOKEN }
      ]
      for (const headers of attempts) {
        const res = yield* raw({ headers }, "/metrics")
        const body = yield* json(res)
        assert.strictEqual(res.status, 401, JSON.stringify(headers))
        assert.match(res.headers.get("content-type") ?? "", /^application\/json/)
        assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/)
        assert.deepStrictEqual(Object.keys(body), ["errors"])
        assert.strictEqual(body.errors.length, 1)
        assert.strictEqual(body.errors[0].code, "Unauthorized")
        assert.match(body.errors[0].message, /METRICS_TOKEN/)
        assert.notInclude(JSON.stringify(body), TOKEN, "the token is not echoed")
      }
    }))

  it.effect("the token, in any case of `Bearer`: 200 text exposition, not cached, with this request counted", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* raw({}, "/healthz")).status, 200)
      for (const scheme of ["Bearer", "bearer"]) {
        const res = yield* raw({ headers: { authorization: `${scheme} ${TOKEN}` } }, "/metrics")
        const text = yield* Effect.promise(() => res.text())
        assert.strictEqual(res.status, 200, text)
        assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
        assert.strictEqual(res.headers.get("cache-control"), "no-store")
        assert.match(text, /^# (HELP|TYPE) /m)
        assert.match(text, /^http_server_requests_total\{[^}]*route="\/healthz"[^}]*\} [1-9]/m)
        assert.notInclude(text, TOKEN)
      }
      // Whatever the gateway logged meanwhile (refusals included), never the token.
      const logs = yield* CapturedLogs.use((c) => c.lines)
      assert.notInclude(JSON.stringify(logs), TOKEN)
    }))
})

layer(TestApp.layer({ capabilities: "memory" }).pipe(Layer.provideMerge(CapturedLogs.layer)), { excludeTestServices: true, timeout: 60_000 })(
  "GET /metrics without METRICS_TOKEN",
  (it) => {
    it.effect("404 envelope, whatever the Authorization: there is nothing to scrape", () =>
      Effect.gen(function*() {
        for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }]) {
          const res = yield* raw({ headers }, "/metrics")
          const body = yield* json(res)
          assert.strictEqual(res.status, 404, JSON.stringify(body))
          assert.strictEqual(body.errors[0].code, "Not Found")
        }
      }))
  }
)
