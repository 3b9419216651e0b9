/**
 * Counts what the gateway sends to PostgreSQL, on the wire: a TCP proxy between the PgClient and the
 * database (PostgreSQL, or PGlite behind its socket) that parses the client's protocol messages.
 * A round trip is a message the client then waits on: a simple Query ('Q') or a Sync ('S') closing
 * an extended-protocol batch. Each executed statement's text is kept (from Parse/Bind, or the Query).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { createConnection, createServer } from "node:net"
import type { Socket } from "node:net"
import { embeddedPostgres } from "../../src/layers/infra/Embedded.ts"
import { MigrationsLayer } from "../../src/layers/migrations/Migrations.ts"
import type { DbKind } from "../utils/Db.ts"

export interface WireLog {
  /** Round trips since the last reset. */
  readonly roundTrips: () => number
  /** Statements executed since the last reset, in order (whitespace collapsed). */
  readonly statements: () => ReadonlyArray<string>
  readonly reset: () => void
}

export class Wire extends Context.Service<Wire, WireLog>()("test/Wire") {}

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104

const cstring = (buf: Buffer, at: number): [string, number] => {
  const end = buf.indexOf(0, at)
  return [buf.toString("utf8", at, end), end + 1]
}

/** The client → server stream of one connection: calls `onMessage` for each typed message. */
const parser = (onMessage: (type: string, body: Buffer) => void) => {
  let pending: Buffer = Buffer.alloc(0)
  let started = false
  return (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    for (;;) {
      if (!started) {
        if (pending.length < 8) return
        const len = pending.readInt32BE(0)
        if (pending.length < len) return
        const code = pending.readInt32BE(4)
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) started = true
        pending = pending.subarray(len)
        continue
      }
      if (pending.length < 5) return
      const len = pending.readInt32BE(1)
      if (pending.length < 1 + len) return
      onMessage(String.fromCharCode(pending[0]!), pending.subarray(5, 1 + len))
      pending = pending.subarray(1 + len)
    }
  }
}

const collapse = (text: string) => text.replace(/\s+/g, " ").trim()

/** A proxy to `host:port` on a free loopback port; every connection through it is logged. */
export const wireProxy = (host: string, port: number) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ port: number; log: WireLog; close: () => Promise<void> }>((resolve) => {
        let roundTrips = 0
        let statements: Array<string> = []
        const sockets = new Set<Socket>()
        const server = createServer((client) => {
          const upstream = createConnection({ host, port })
          sockets.add(client).add(upstream)
          const prepared = new Map<string, string>()
          const feed = parser((type, body) => {
            if (type === "Q") {
              roundTrips += 1
              statements.push(collapse(cstring(body, 0)[0]))
            } else if (type === "S") {
              roundTrips += 1
            } else if (type === "P") {
              const [name, next] = cstring(body, 0)
              prepared.set(name, collapse(cstring(body, next)[0]))
            } else if (type === "B") {
              const [, next] = cstring(body, 0)
              statements.push(prepared.get(cstring(body, next)[0]) ?? "<unknown prepared statement>")
            }
          })
          client.on("data", (chunk: Buffer) => {
            feed(chunk)
            upstream.write(chunk)
          })
          upstream.pipe(client)
          const end = () => (client.destroy(), upstream.destroy())
          client.on("error", end).on("close", end)
          upstream.on("error", end).on("close", end)
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resolve({
            port: typeof address === "object" && address !== null ? address.port : 0,
            log: {
              roundTrips: () => roundTrips,
              statements: () => statements,
              reset: () => {
                roundTrips = 0
                statements = []
              }
            },
            close: () =>
              new Promise<void>((done) => {
                for (const s of sockets) s.destroy()
                server.close(() => done())
              })
          })
        })
      })
    ),
    (proxy) => Effect.promise(proxy.close)
  )

const through = (url: string, options: { maxConnections: number; startupOptions?: string }) =>
  Effect.gen(function*() {
    const target = new URL(url)
    const proxy = yield* wireProxy(target.hostname, Number(target.port || 5432))
    target.host = `127.0.0.1:${proxy.port}`
    target.searchParams.set("sslmode", "disable")
    return { url: target.toString(), log: proxy.log, options }
  })

/**
 * A migrated database of `kind` reached through the counting proxy (PostgreSQL: a fresh schema on
 * TEST_DATABASE_URL, dropped at the end), with the proxy's log as the Wire service.
 */
export const countedDb = (kind: DbKind): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient | Wire, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    let setup: { url: string; log: WireLog; options: { maxConnections: number; startupOptions?: string } }
    if (kind === "postgres") {
      const url = process.env.TEST_DATABASE_URL!
      const schema = `t_${randomBytes(6).toString("hex")}`
      const admin = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
      yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
      yield* Effect.addFinalizer(() => admin.unsafe(`DROP SCHEMA ${schema} CASCADE`).pipe(Effect.ignore))
      setup = yield* through(url, { maxConnections: 5, startupOptions: `-c search_path=${schema}` })
    } else {
      const url = yield* embeddedPostgres("memory://")
      setup = yield* through(Redacted.value(url), { maxConnections: 1 })
    }
    const client = PgClient.layer({ url: Redacted.make(setup.url), ...setup.options })
    return Layer.mergeAll(MigrationsLayer.pipe(Layer.provideMerge(client)), Layer.succeed(Wire, setup.log))
  })).pipe(Layer.provide(Reactivity.layer))
