/**
 * The Node HTTP server under the application: its limits, the answers Node's parser makes on its
 * own, and the drain at shutdown.
 * - Rejections below the application (a bad request line or header, headers over 16 KiB, headers or a
 *   body that stop arriving) are answered with the envelope when a status can still be sent
 *   (decisions.md "Errors": 400, 431, 408), instead of Node's bare answer or a silent close.
 * - Shutdown: stop accepting, let in-flight requests finish for at most `shutdownGraceMs`, then cut
 *   the rest; one log line when the drain starts and one when it ends.
 */
import { Context, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { reasonPhrase } from "../../domain/infra/Errors.ts"

export interface ServerLimitsShape {
  /** Node's `headersTimeout`: the headers must have arrived within this (then 408). */
  readonly headersTimeoutMs: number
  /** Node's `requestTimeout`: the whole request, body included (then 408). Below the app's own 30 s. */
  readonly requestTimeoutMs: number
  /** How often Node checks the two time-outs above (its default, 30 s, makes them up to 30 s late). */
  readonly timeoutCheckIntervalMs: number
  /** Request line and headers together (then 431). */
  readonly maxHeaderBytes: number
  /** SHUTDOWN_GRACE_MS: how long in-flight requests may finish after SIGTERM before they are cut. */
  readonly shutdownGraceMs: number
}

export const defaultServerLimits: ServerLimitsShape = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
  timeoutCheckIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
  shutdownGraceMs: 10_000
}

/** The limits of the server; tests and main provide other values (`Layer.succeed(ServerLimits, …)`). */
export const ServerLimits = Context.Reference<ServerLimitsShape>("gateway/ServerLimits", {
  defaultValue: () => defaultServerLimits
})

const phrase = (status: number) => reasonPhrase[status] ?? "Error"

/** A complete HTTP/1.1 answer with the envelope, written straight to the socket (there is no response object). */
export const rawEnvelope = (status: number, message: string): string => {
  const body = JSON.stringify({ errors: [{ code: phrase(status), message }] })
  return `HTTP/1.1 ${status} ${phrase(status)}\r\n` +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${randomUUID()}\r\n` +
    "Cache-Control: no-store\r\n" +
    "Connection: close\r\n\r\n" + body
}

const rejection = (code: string | undefined, limits: ServerLimitsShape): readonly [number, string] => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, `The request line and headers exceed ${Math.round(limits.maxHeaderBytes / 1024)} KiB.`]
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [
        408,
        `The request did not arrive in time (headers within ${limits.headersTimeoutMs / 1000} s, the whole request within ${
          limits.requestTimeoutMs / 1000
        } s); retry.`
      ]
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return [413, "A chunk extension of the body is too large."]
    default:
      return [400, "The request is not valid HTTP/1.1 (request line, a header or the body framing); nothing was processed."]
  }
}

/** Node's `clientError`: the envelope when a status can still be sent, then the connection is closed. */
const onClientError = (limits: ServerLimitsShape) => (error: Error & { readonly code?: string }, socket: Duplex) => {
  // An answer already under way on this connection cannot be followed by another one.
  const current = (socket as Duplex & { readonly _httpMessage?: ServerResponse | null })._httpMessage
  if (error.code === "ECONNRESET" || !socket.writable || current?.headersSent === true) {
    socket.destroy()
    return
  }
  const [status, message] = rejection(error.code, limits)
  socket.end(rawEnvelope(status, message))
  // The peer normally closes on our FIN; a peer that does not is not waited for.
  setTimeout(() => socket.destroy(), 2_000).unref()
}

/** A Node server with the limits and the enveloped parser rejections, and what the drain needs to know. */
export interface Edge {
  readonly server: Server
  /** Responses not yet closed. */
  readonly inFlight: Set<ServerResponse>
  draining: boolean
}

export const makeEdge = (limits: ServerLimitsShape): Edge => {
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
    maxHeaderSize: limits.maxHeaderBytes
  })
  const edge: Edge = { server, inFlight: new Set(), draining: false }
  server.on("clientError", onClientError(limits))
  // One listener function for every response (`this` is the response): no closure and no `once`
  // wrapper per request; `close` is emitted once per response anyway.
  function settled(this: ServerResponse) {
    edge.inFlight.delete(this)
  }
  server.on("request", (_req: IncomingMessage, res: ServerResponse) => {
    edge.inFlight.add(res)
    res.on("close", settled)
    // During the drain no connection is kept for a next request.
    if (edge.draining && !res.headersSent) res.setHeader("connection", "close")
  })
  return edge
}

/**
 * The drain (a finalizer that runs before the HTTP layer's own): stop listening, wait for in-flight
 * requests up to the grace, cut what is left, close idle keep-alive connections.
 */
export const drain = (edge: Edge, graceMs: number) =>
  Effect.gen(function*() {
    const started = Date.now()
    const pending = edge.inFlight.size
    edge.draining = true
    yield* Effect.logInfo("shutdown: draining in-flight requests").pipe(
      Effect.annotateLogs({ in_flight: pending, grace_ms: graceMs })
    )
    for (const res of edge.inFlight) if (!res.headersSent) res.setHeader("connection", "close")
    if (edge.server.listening) edge.server.close()
    const finished = yield* Effect.callback<boolean>((resume) => {
      if (edge.inFlight.size === 0) return resume(Effect.succeed(true))
      const timer = setTimeout(() => {
        clearInterval(poll)
        resume(Effect.succeed(false))
      }, graceMs)
      // A response's `close` also ends the fiber that served it; polling keeps this independent of listener order.
      const poll = setInterval(() => {
        if (edge.inFlight.size > 0) return
        clearTimeout(timer)
        clearInterval(poll)
        resume(Effect.succeed(true))
      }, 20)
      return Effect.sync(() => {
        clearTimeout(timer)
        clearInterval(poll)
      })
    })
    const cut = edge.inFlight.size
    // Cuts the requests still running (their fibers are interrupted when the socket closes) and idle keep-alives.
    edge.server.closeAllConnections()
    const annotations = { finished: Math.max(0, pending - cut), cut, duration_ms: Date.now() - started }
    yield* (finished
      ? Effect.logInfo("shutdown: drained")
      : Effect.logWarning("shutdown: grace period over; cut the requests still running")).pipe(Effect.annotateLogs(annotations))
  })
