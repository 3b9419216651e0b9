/**
 * A small node:http server for the poller tests: routes set per test (path without query →
 * handler), every request recorded (method, URL, headers, body) and the most requests in flight at once.
 */
import { afterAll, beforeAll, beforeEach } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { readFileSync } from "node:fs"
import { FetchHttpClient } from "effect/http"
import { Layer } from "effect"
import { SourcePollerHttp, type SourcePollerHttpOptions } from "../../../src/layers/sources/poll/SourcePollerHttp.ts"

export interface Recorded {
  readonly method: string
  readonly url: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void

export interface PollServer {
  readonly url: string
  readonly routes: Map<string, Handler>
  readonly requests: Array<Recorded>
  readonly stats: { inFlight: number; maxInFlight: number }
  readonly close: () => Promise<void>
  /** Requests to `path`. */
  readonly hits: (path: string) => ReadonlyArray<Recorded>
  readonly reset: () => void
}

export const startPollServer = (): Promise<PollServer> =>
  new Promise((resolve) => {
    const routes = new Map<string, Handler>()
    const requests: Array<Recorded> = []
    const stats = { inFlight: 0, maxInFlight: 0 }
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const u = new URL(req.url ?? "/", "http://test")
        const body = Buffer.concat(chunks).toString("utf8")
        requests.push({ method: req.method ?? "GET", url: req.url ?? "/", path: u.pathname, query: u.searchParams, headers: req.headers, body })
        stats.inFlight++
        stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight)
        let done = false
        const finish = () => {
          if (!done) {
            done = true
            stats.inFlight--
          }
        }
        res.on("finish", finish)
        res.on("close", finish)
        const handler = routes.get(u.pathname)
        if (handler === undefined) {
          res.writeHead(404, { "content-type": "text/plain" }).end("no route")
          return
        }
        handler(req, res, body)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        routes,
        requests,
        stats,
        hits: (path) => requests.filter((r) => r.path === path),
        reset: () => {
          requests.length = 0
          routes.clear()
          stats.maxInFlight = 0
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** Serves `body` with `headers` (status 200 unless given). */
export const serve = (body: string | Buffer, headers: Record<string, string> = {}, status = 200): Handler => (_req, res) => {
  res.writeHead(status, headers).end(body)
}

/** Answers JSON. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))
}

export const fixture = (name: string): Buffer => readFileSync(new URL(`../../fixtures/feeds/${name}`, import.meta.url))

/** The live poller over fetch with test-friendly defaults (loopback allowed, short time-out). */
export const pollerLayer = (options: SourcePollerHttpOptions) =>
  SourcePollerHttp.layer({
    timeout: "2 seconds",
    contact: "ops@example.org",
    rss: { allowPrivateAddresses: true },
    ...options
  }).pipe(Layer.provide(FetchHttpClient.layer))

/** Runs `f` with a fresh poller (its own token caches and host limits). */
export const withPoller = <A, E, R>(options: SourcePollerHttpOptions, f: Effect.Effect<A, E, R>) =>
  f.pipe(Effect.provide(pollerLayer(options)))

/**
 * The calling test file's PollServer: started before its tests, reset before each, closed after
 * them. Call it at the file's top level (hooks registered by a shared module's own top level would
 * run in the first file that imports it only: test workers share modules, `isolate: false`).
 */
export const pollServerForFile = (): PollServer => {
  let server: PollServer | undefined
  beforeAll(async () => {
    server = await startPollServer()
  })
  afterAll(() => server?.close())
  beforeEach(() => server?.reset())
  const started = (): PollServer => {
    if (server === undefined) throw new Error("the PollServer starts in beforeAll: use it inside a test or a hook")
    return server
  }
  return new Proxy({} as PollServer, { get: (_, key) => Reflect.get(started(), key) })
}

