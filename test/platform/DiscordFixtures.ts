/**
 * A scripted stand-in for Discord's HTTP API over real HTTP on a loopback port, for the chat platform
 * client's tests: each test decides per request what to answer (rate-limit headers, 429s, 5xx, hangs).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string | undefined>
  readonly body: string
  readonly at: number
}

export interface Reply {
  readonly status?: number
  readonly headers?: Record<string, string>
  readonly json?: unknown
}

/** `"hang"` never answers; `"destroy"` drops the connection. */
export type Handler = (request: Received, index: number) => Reply | "hang" | "destroy" | Promise<Reply | "hang" | "destroy">

export interface FakeDiscord {
  readonly url: string
  readonly calls: Array<Received>
  readonly statuses: Array<number>
  handler: Handler
}

const flat = (headers: Record<string, string | Array<string> | undefined>) => {
  const out: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(headers)) out[k] = Array.isArray(v) ? v.join(", ") : v
  return out
}

/** Starts the server for the enclosing scope. */
export const fakeDiscord = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<FakeDiscord & { close: () => Promise<void> }>((resolve) => {
        const state = { calls: [] as Array<Received>, statuses: [] as Array<number>, handler }
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            const received: Received = {
              method: req.method ?? "GET",
              path: req.url ?? "/",
              headers: flat(req.headers),
              body: Buffer.concat(chunks).toString("utf8"),
              at: Date.now()
            }
            const index = state.calls.push(received) - 1
            void Promise.resolve(state.handler(received, index)).then((reply) => {
              if (reply === "hang") return
              if (reply === "destroy") return void req.socket.destroy()
              const status = reply.status ?? 200
              state.statuses.push(status)
              res.writeHead(status, { "content-type": "application/json", ...reply.headers })
              res.end(reply.json === undefined ? "" : JSON.stringify(reply.json))
            })
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve(Object.assign(state, {
            url: `http://127.0.0.1:${port}`,
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          }))
        })
      })
    ),
    (server) => Effect.promise(() => server.close())
  ).pipe(Effect.map((server): FakeDiscord => server))

export const user = (id: string) => ({ id, username: `user${id}`, discriminator: "0", avatar: null, global_name: null, extra: 1 })
export const guildSummary = (id: string) => ({ id, name: `Guild ${id}`, icon: null, owner: false, permissions: "32", features: [] })

/** Calls in the `ms` before `now` (what a server enforcing a sliding window counts). */
export const countSince = (times: ReadonlyArray<number>, now: number, ms: number): number =>
  times.filter((t) => t > now - ms && t <= now).length

/** Largest number of calls in any sliding window of `ms`. */
export const maxInWindow = (times: ReadonlyArray<number>, ms: number): number => {
  const sorted = [...times].sort((a, b) => a - b)
  let max = 0
  let start = 0
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= ms) start++
    max = Math.max(max, end - start + 1)
  }
  return max
}
