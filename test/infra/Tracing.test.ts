/**
 * The tracing layer (src/layers/infra/Tracing.ts) against an in-test OTLP/HTTP endpoint:
 * with an endpoint, a span reaches `<endpoint>/v1/traces` as OTLP JSON, named as the gateway and
 * with the version of the root package.json (the version lives there only); without one, no span is
 * built at all. (The whole bundle with OTEL_EXPORTER_OTLP_ENDPOINT: Observing.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, References } from "effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { SERVICE_VERSION, Tracing } from "../../src/layers/infra/Tracing.ts"

const ROOT_VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version

interface Received {
  readonly path: string
  readonly body: any
}

interface Collector {
  readonly url: string
  readonly received: Array<Received>
  readonly close: () => void
}

/** An OTLP/HTTP collector on a free loopback port: every POST kept, answered 200. */
const collector = Effect.acquireRelease(
  Effect.callback<Collector>((resume) => {
    const received: Array<Received> = []
    const server = createServer((req, res) => {
      let body = ""
      req.setEncoding("utf8").on("data", (c: string) => body += c).on("end", () => {
        received.push({ path: req.url ?? "", body: JSON.parse(body) })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resume(Effect.succeed({ url, received, close: () => void server.close() }))
    })
  }),
  (c) => Effect.sync(c.close)
)

const attributesOf = (resource: { attributes?: ReadonlyArray<{ key: string; value: { stringValue?: string } }> }) =>
  Object.fromEntries((resource.attributes ?? []).map((a) => [a.key, a.value.stringValue]))

describe("OTLP traces", () => {
  it("the service version is the root package.json's", () => {
    assert.strictEqual(SERVICE_VERSION, ROOT_VERSION)
  })

  it.live("with an endpoint: a span arrives at <endpoint>/v1/traces, with the service's name and version", () =>
    Effect.gen(function*() {
      const otlp = yield* collector
      // A trailing slash in the variable is not doubled in the path.
      yield* Effect.gen(function*() {
        yield* Effect.void.pipe(Effect.withSpan("tracing-test.work", { attributes: { "test.case": "export" } }))
        // The exporter sends each second; the layer's end flushes what is left.
      }).pipe(Effect.provide(Tracing(`${otlp.url}/`)))
      for (let i = 0; i < 100 && otlp.received.length === 0; i++) yield* Effect.sleep("100 millis")
      assert.isAbove(otlp.received.length, 0, "no export reached the collector")
      assert.deepStrictEqual([...new Set(otlp.received.map((r) => r.path))], ["/v1/traces"])
      const resourceSpans = otlp.received.flatMap((r) => r.body.resourceSpans as Array<any>)
      const spans = resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s: any) => s.spans as Array<any>))
      const span = spans.find((s) => s.name === "tracing-test.work")
      assert.isDefined(span, JSON.stringify(otlp.received))
      const resource = attributesOf(resourceSpans.find((rs) => rs.scopeSpans.some((s: any) => s.spans.includes(span))).resource)
      assert.strictEqual(resource["service.name"], "bot-module-gateway")
      assert.strictEqual(resource["service.version"], ROOT_VERSION)
    }).pipe(Effect.scoped))

  it.live("without an endpoint: spans are no-ops (nothing recorded, nothing to send)", () => {
    const spanOfWork = Effect.gen(function*() {
      yield* Effect.annotateCurrentSpan("test.case", "off")
      return yield* Effect.currentSpan
    }).pipe(Effect.withSpan("tracing-test.off"))
    return Effect.gen(function*() {
      const off = yield* spanOfWork.pipe(Effect.provide(Tracing(undefined)))
      assert.isFalse(off.sampled)
      assert.isFalse(off.attributes.has("test.case"), "an attribute was recorded with tracing off")
      // The same work with tracing on records it: the check above can tell the two apart.
      const on = yield* spanOfWork.pipe(Effect.provideService(References.TracerEnabled, true))
      assert.isTrue(on.sampled)
      assert.strictEqual(on.attributes.get("test.case"), "off")
    })
  })
})
