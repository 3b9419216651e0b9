/**
 * The global middleware and the edge after their per-request CPU was cut (issue #16): the middleware
 * is plain code around the handler instead of an Effect.gen, updates its metrics in place, reads the
 * log level in place, and provides the body limit to the handler; NodeEdge tracks in-flight responses with one shared
 * `close` listener. What must not change, asserted here over real HTTP: a chunked body over 1 MiB is
 * a 413 envelope both ways of serving, the request id, the series counted per request (exact deltas),
 * the access line at Info (and none at Warn), and the drain's in-flight set.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Metric, References } from "effect"
import type { LogLevel } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { request as httpRequest } from "node:http"
import { createServer } from "node:http"
import type { ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { GlobalMiddleware, MAX_BODY_SIZE } from "../../src/http/edge/GlobalMiddleware.ts"
import { makeEdge, defaultServerLimits } from "../../src/http/server/NodeEdge.ts"
import { serve } from "../../src/http/server/Server.ts"
import { freePort } from "../utils/FreePort.ts"

const UA = "gateway-tests/1.0"

// A route template no other file counts (the metric registry is per process).
const OK_PATH = "/api/hot-path-global/ok"

/** The routes under test: a GET, and a POST that reads its body and says what limit it ran under. */
const routes = Layer.mergeAll(
  HttpRouter.add("GET", OK_PATH, HttpServerResponse.jsonUnsafe({ ok: true })),
  HttpRouter.add("POST", "/api/hot-path-global/echo", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text
    return HttpServerResponse.jsonUnsafe({ length: text.length })
  })),
  GlobalMiddleware({ maintenance: false, requestTimeoutMs: 30_000, accessLog: true })
) as Layer.Layer<never, never, HttpRouter.HttpRouter>

interface Line {
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

/** The routes on a free port, served by `serve` (Server.ts) or by Effect's own `HttpRouter.serve`, with a log capture. */
const server = (how: "gateway" | "router", level: LogLevel.LogLevel, lines: Array<Line>) =>
  Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    const served = how === "gateway"
      ? serve(routes, { port, host: "127.0.0.1" })
      : HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" }))
      )
    const capture = Logger.layer([Logger.make((o) => {
      lines.push({ message: o.message, annotations: { ...o.fiber.getRef(References.CurrentLogAnnotations) } })
    })])
    yield* Layer.build(served.pipe(
      Layer.provide(capture),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, level))
    ))
    return `http://127.0.0.1:${port}`
  })

/** A POST with a chunked body of `bytes` bytes (no Content-Length: only the body limit can stop it). */
const chunkedPost = (base: string, path: string, bytes: number) =>
  Effect.callback<{ status: number; body: string }>((resume) => {
    const req = httpRequest(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": UA, "transfer-encoding": "chunked" }
    }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => body += c)
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
    })
    // The server may answer 413 and close before every chunk is written.
    req.on("error", () => undefined)
    const chunk = "x".repeat(64 * 1024)
    for (let sent = 0; sent < bytes; sent += chunk.length) req.write(chunk)
    req.end()
  })

const get = (base: string, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const res = await fetch(`${base}${path}`, { headers: { "user-agent": UA, ...headers } })
    return { status: res.status, headers: res.headers, body: await res.text() }
  })

/** The current value of the request counter and the histogram's count for OK_PATH. */
const counted = Effect.map(Metric.snapshot, (all) => {
  let requests = 0
  let observed = 0
  for (const m of all) {
    const a = m.attributes as Record<string, string> | undefined
    if (a?.["route"] !== OK_PATH || a["method"] !== "GET") continue
    if (m.id === "http_server_requests_total" && a["status"] === "200") requests += Number((m.state as { count: number | bigint }).count)
    if (m.id === "http_server_request_duration_seconds") observed += Number((m.state as { count: number }).count)
  }
  return { requests, observed }
})

describe("global middleware and edge, per request", () => {
  it.live("served by `serve`: 413 for a chunked body over 1 MiB, the body read under it, series counted, access line at Info", () =>
    Effect.scoped(Effect.gen(function*() {
      const lines: Array<Line> = []
      const base = yield* server("gateway", "Info", lines)

      const small = yield* chunkedPost(base, "/api/hot-path-global/echo", 128 * 1024)
      assert.strictEqual(small.status, 200, small.body)
      assert.deepStrictEqual(JSON.parse(small.body), { length: 128 * 1024 })
      const large = yield* chunkedPost(base, "/api/hot-path-global/echo", 2 * 1024 * 1024)
      assert.strictEqual(large.status, 413, large.body)
      assert.deepStrictEqual(JSON.parse(large.body), { errors: [{ code: "Payload Too Large", message: "The body is larger than 1 MiB." }] })

      const before = yield* counted
      for (let i = 0; i < 3; i++) {
        const res = yield* get(base, `${OK_PATH}?i=${i}`, { "x-request-id": `global-${i}` })
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.body, `{"ok":true}`)
        assert.strictEqual(res.headers.get("x-request-id"), `global-${i}`)
      }
      const generated = yield* get(base, OK_PATH)
      assert.match(generated.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
      const after = yield* counted
      assert.deepStrictEqual({ requests: after.requests - before.requests, observed: after.observed - before.observed }, { requests: 4, observed: 4 })

      const access = lines.filter((l) => l.message === "request" || (Array.isArray(l.message) && l.message[0] === "request"))
      const forOk = access.filter((l) => l.annotations["path"] === OK_PATH)
      assert.strictEqual(forOk.length, 4)
      assert.deepStrictEqual(
        forOk.slice(0, 3).map((l) => [l.annotations["method"], l.annotations["status"], l.annotations["request_id"], l.annotations["query"]]),
        [0, 1, 2].map((i) => ["GET", 200, `global-${i}`, "i=[redacted]"])
      )
      assert.strictEqual(typeof forOk[0]!.annotations["duration_ms"], "number")
      assert.isTrue(access.some((l) => l.annotations["status"] === 413))
    })))

  it.live("served another way (Effect's HttpRouter.serve): the middleware still cuts a chunked body at 1 MiB; no access line at Warn", () =>
    Effect.scoped(Effect.gen(function*() {
      const lines: Array<Line> = []
      const base = yield* server("router", "Warn", lines)
      const large = yield* chunkedPost(base, "/api/hot-path-global/echo", 2 * 1024 * 1024)
      assert.strictEqual(large.status, 413, large.body)
      const small = yield* chunkedPost(base, "/api/hot-path-global/echo", 1000)
      assert.strictEqual(small.status, 200, small.body)
      const ok = yield* get(base, OK_PATH, { "x-request-id": "warn-level" })
      assert.strictEqual(ok.status, 200)
      assert.strictEqual(ok.headers.get("x-request-id"), "warn-level")
      assert.deepStrictEqual(lines, [])
      // The limit the middleware provides: 1 MiB.
      assert.strictEqual(Number(MAX_BODY_SIZE), 1024 * 1024)
    })))

  it.live("NodeEdge: a response is in flight until it closes, then leaves the set", () =>
    Effect.gen(function*() {
      const edge = makeEdge(defaultServerLimits)
      const held: Array<ServerResponse> = []
      edge.server.on("request", (_req, res: ServerResponse) => held.push(res))
      yield* Effect.callback<void>((resume) => {
        edge.server.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      const port = (edge.server.address() as AddressInfo).port
      const answers = [1, 2, 3].map(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text()))
      while (held.length < 3) yield* Effect.sleep("5 millis")
      assert.strictEqual(edge.inFlight.size, 3)
      held[0]!.end("a")
      assert.strictEqual(yield* Effect.promise(() => answers[0]!), "a")
      while (edge.inFlight.size > 2) yield* Effect.sleep("5 millis")
      assert.deepStrictEqual([...edge.inFlight], held.slice(1))
      held[1]!.end("b")
      held[2]!.end("c")
      assert.deepStrictEqual(yield* Effect.promise(() => Promise.all(answers.slice(1))), ["b", "c"])
      while (edge.inFlight.size > 0) yield* Effect.sleep("5 millis")
      assert.strictEqual(edge.inFlight.size, 0)
      edge.server.closeAllConnections()
      yield* Effect.callback<void>((resume) => {
        edge.server.close(() => resume(Effect.void))
      })
    }))
})
