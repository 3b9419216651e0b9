/**
 * The Node HTTP server under the application: its limits, the answers Node's parser makes on its
 * own, and the drain at shutdown.
 * - Rejections below the application (a bad request line or header, headers over 16 KiB, headers or a
 *   body that stop arriving) are answered with the envelope when a status can still be sent
 *   (decisions.md "Errors": 400, 431, 408), instead of Node's bare answer or a silent close.
 * - Shutdown: stop accepting, let in-flight requests finish for at most `shutdownGraceMs`, then cut
 *   the rest; one log line when the drain starts and one when it ends. No request is lost without an
 *   answer (issue #30): from the drain's start every answer says `Connection: close`; a kept-alive
 *   connection idle then is not closed under a request it may already be sending, but kept for
 *   `idleLingerMs`, and a request on it is answered 503 with Retry-After and `Connection: close`.
 */
import { Context, Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { Server } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Server as NetServer } from "node:net"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { reasonPhrase, ServiceUnavailable } from "../../domain/infra/Errors.ts"

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
  /** How long the drain keeps idle kept-alive connections for a request they may be sending (capped by the grace; see `drain`). */
  readonly idleLingerMs: number
}

export const defaultServerLimits: ServerLimitsShape = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
  timeoutCheckIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
  shutdownGraceMs: 10_000,
  idleLingerMs: 1_000
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
  /** Open client connections, busy or idle. */
  readonly connections: Set<Socket>
  draining: boolean
  /** Requests answered 503 by the drain (they arrived after it began). */
  refused: number
}

/** Retry-After of the drain's 503: long enough for a restart, or for a load balancer to pick another instance. */
export const DRAIN_RETRY_AFTER_SECONDS = 5

const drainAnswer = (() => {
  const envelope = Schema.encodeSync(ServiceUnavailable.envelope)(
    ServiceUnavailable.of("The gateway is shutting down; retry on a new connection.", DRAIN_RETRY_AFTER_SECONDS)
  )
  return JSON.stringify(envelope)
})()

/** The drain's answer to a request that arrived after it began: 503 with Retry-After, and the connection closed. */
const refuse = (req: IncomingMessage, res: ServerResponse, waitForBody: boolean) => {
  const send = () => {
    if (res.headersSent || res.destroyed) return
    res.writeHead(503, phrase(503), {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(drainAnswer),
      "retry-after": String(DRAIN_RETRY_AFTER_SECONDS),
      "x-request-id": randomUUID(),
      "cache-control": "no-store",
      connection: "close"
    })
    res.end(drainAnswer)
  }
  // The body is read first: closing with body bytes still arriving would reset the connection under the answer.
  if (!waitForBody || req.complete) return send()
  req.once("end", send)
  req.resume()
}

/** Node's server, with the requests that arrive during the drain answered here instead of by the application. */
class EdgeServer extends Server {
  edge: Edge | undefined
  override emit(event: string, ...args: Array<unknown>): boolean {
    const edge = this.edge
    if (edge?.draining === true && (event === "request" || event === "checkContinue")) {
      const [req, res] = args as [IncomingMessage, ServerResponse]
      edge.refused += 1
      edge.inFlight.add(res)
      res.once("close", () => edge.inFlight.delete(res))
      // With `Expect: 100-continue` the client sends no body until told to: answer at once.
      refuse(req, res, event === "request")
      return true
    }
    return super.emit(event, ...args)
  }
}

export const makeEdge = (limits: ServerLimitsShape): Edge => {
  const server = new EdgeServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
    maxHeaderSize: limits.maxHeaderBytes
  })
  const edge: Edge = { server, inFlight: new Set(), connections: new Set(), draining: false, refused: 0 }
  server.edge = edge
  server.on("clientError", onClientError(limits))
  server.on("connection", (socket: Socket) => {
    edge.connections.add(socket)
    socket.once("close", () => edge.connections.delete(socket))
  })
  // One listener function for every response (`this` is the response): no closure and no `once`
  // wrapper per request; `close` is emitted once per response anyway.
  function settled(this: ServerResponse) {
    edge.inFlight.delete(this)
  }
  server.on("request", (_req: IncomingMessage, res: ServerResponse) => {
    edge.inFlight.add(res)
    res.on("close", settled)
  })
  return edge
}

/**
 * The drain (a finalizer that runs before the HTTP layer's own): stop listening, wait for in-flight
 * requests up to the grace and for idle connections up to `idleLingerMs`, then cut what is left.
 * Closing an idle connection at once resets a request its client sent meanwhile, unanswered; kept, that
 * request gets the drain's 503 and the connection closes after it. A client that sends nothing more
 * delays the exit by the linger at most; the race remains only for a request that crosses the close then.
 */
export const drain = (edge: Edge, graceMs: number, idleLingerMs: number = defaultServerLimits.idleLingerMs) =>
  Effect.gen(function*() {
    const started = Date.now()
    const pending = edge.inFlight.size
    edge.draining = true
    yield* Effect.logInfo("shutdown: draining in-flight requests").pipe(
      Effect.annotateLogs({ in_flight: pending, grace_ms: graceMs })
    )
    for (const res of edge.inFlight) if (!res.headersSent) res.setHeader("connection", "close")
    // Only the listening socket: Node's `server.close()` would also close the idle connections now.
    if (edge.server.listening) NetServer.prototype.close.call(edge.server)
    const linger = Math.min(graceMs, idleLingerMs)
    const done = () => edge.inFlight.size === 0 && (edge.connections.size === 0 || Date.now() - started >= linger)
    const finished = yield* Effect.callback<boolean>((resume) => {
      if (done()) return resume(Effect.succeed(true))
      const timer = setTimeout(() => {
        clearInterval(poll)
        resume(Effect.succeed(edge.inFlight.size === 0))
      }, graceMs)
      // A response's `close` also ends the fiber that served it; polling keeps this independent of listener order.
      const poll = setInterval(() => {
        if (!done()) return
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
    // Node's own close now: nothing is idle any more, and its time-out checks stop.
    edge.server.close()
    const annotations = { finished: Math.max(0, pending - cut), cut, refused: edge.refused, duration_ms: Date.now() - started }
    yield* (finished
      ? Effect.logInfo("shutdown: drained")
      : Effect.logWarning("shutdown: grace period over; cut the requests still running")).pipe(Effect.annotateLogs(annotations))
  })
