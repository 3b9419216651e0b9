/** PGlite in a folder, behind @electric-sql/pglite-socket on a loopback port. */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Redacted } from "effect"
import type { Scope } from "effect"
import { mkdirSync } from "node:fs"
import { createServer } from "node:net"
import { lockDataDir } from "./DataDirLock.ts"

/** A free loopback port (bound, read, released). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * Starts PGlite (in `dataDir`, or in memory for "memory://") and returns a PostgreSQL URL to it.
 * A folder is locked for this process first (DataDirLock.ts): PGlite itself takes no lock, and two
 * processes on one folder would corrupt it.
 */
export const embeddedPostgres = (dataDir: string): Effect.Effect<Redacted.Redacted<string>, Error, Scope.Scope> =>
  Effect.gen(function*() {
    if (dataDir !== "memory://") yield* lockDataDir(dataDir)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (dataDir !== "memory://") mkdirSync(dataDir, { recursive: true })
          const db = new PGlite(dataDir === "memory://" ? undefined : `${dataDir}/pglite`)
          await db.waitReady
          return db
        },
        catch: (cause) => new Error(`cannot open the embedded database in ${dataDir}: ${String(cause)}`)
      }),
      (db) => Effect.promise(() => db.close())
    )
    const port = yield* Effect.promise(freePort)
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections: 1 })
          await server.start()
          return server
        },
        catch: (cause) => new Error(`cannot serve the embedded database: ${String(cause)}`)
      }),
      (server) => Effect.promise(() => server.stop())
    )
    return Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`)
  })
