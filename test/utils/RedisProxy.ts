/**
 * A TCP proxy to a Redis that a test controls, so an outage never touches the shared Redis itself:
 * - `cut()`: every connection dropped, new ones refused (Redis stopped);
 * - `blackhole()`: connections stay open and new ones are accepted, but nothing passes either way
 *   (a network partition: no error, no answer); what was sent meanwhile is held, not lost;
 * - `restore()`: traffic passes again (held bytes first, in order);
 * - `dropNext(n)`: the next `n` connections are closed at their first bytes (a handshake cut).
 */
import { Effect } from "effect"
import { connect, createServer } from "node:net"
import type { Socket } from "node:net"

export interface RedisProxy {
  readonly url: string
  readonly cut: () => void
  readonly blackhole: () => void
  readonly restore: () => void
  readonly dropNext: (n: number) => void
}

interface Pair {
  readonly client: Socket
  upstream: Socket | undefined
  toUpstream: Array<Buffer>
  toClient: Array<Buffer>
}

export const redisProxy = (target: URL) =>
  Effect.acquireRelease(
    Effect.callback<RedisProxy & { readonly close: () => void }>((resume) => {
      let mode: "up" | "cut" | "blackhole" = "up"
      let toDrop = 0
      const pairs = new Set<Pair>()
      const flush = (pair: Pair) => {
        for (const chunk of pair.toUpstream.splice(0)) pair.upstream!.write(chunk)
        for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk)
      }
      const open = (pair: Pair) => {
        const upstream = connect(Number(target.port || 6379), target.hostname)
        pair.upstream = upstream
        upstream.on("error", () => {})
        upstream.on("close", () => pair.client.destroy())
        upstream.on("data", (chunk: Buffer) => mode === "up" ? pair.client.write(chunk) : pair.toClient.push(chunk))
        flush(pair)
      }
      const server = createServer((client) => {
        if (mode === "cut") return client.destroy()
        if (toDrop > 0) {
          toDrop--
          client.on("error", () => {})
          client.once("data", () => client.destroy())
          return
        }
        const pair: Pair = { client, upstream: undefined, toUpstream: [], toClient: [] }
        pairs.add(pair)
        client.on("error", () => {})
        client.on("close", () => {
          pairs.delete(pair)
          pair.upstream?.destroy()
        })
        client.on("data", (chunk: Buffer) =>
          mode === "up" && pair.upstream !== undefined ? pair.upstream.write(chunk) : pair.toUpstream.push(chunk))
        if (mode === "up") open(pair)
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as { port: number }).port
        resume(Effect.succeed({
          url: `redis://127.0.0.1:${port}`,
          cut: () => {
            mode = "cut"
            for (const pair of pairs) {
              pair.client.destroy()
              pair.upstream?.destroy()
            }
          },
          blackhole: () => {
            mode = "blackhole"
          },
          restore: () => {
            mode = "up"
            for (const pair of pairs) pair.upstream === undefined ? open(pair) : flush(pair)
          },
          dropNext: (n) => {
            toDrop = n
          },
          close: () => {
            for (const pair of pairs) pair.client.destroy()
            server.close()
          }
        }))
      })
    }),
    (proxy) => Effect.sync(() => proxy.close())
  )
