/** PGlite in a folder, behind @electric-sql/pglite-socket on a loopback port. */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Redacted } from "effect"
import type { Scope } from "effect"
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { createServer } from "node:net"
import { lockDataDir } from "./DataDirLock.ts"

/** Listens on `port` (0: any) on the loopback address, closes, and answers the port it had. */
const probePort = (port: number) =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      const bound = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(bound))
    })
  })

/**
 * A port that was free a moment ago, for a listener started right after. Chosen below Linux's
 * ephemeral range (32768-60999 by default), because a port the kernel handed out for "any port" can
 * be given to an outgoing connection (to PostgreSQL, Redis, an upstream) before the listener binds it:
 * seen as EADDRINUSE in the test suite. After 20 taken ports, the kernel's choice.
 */
export const freePort = async (): Promise<number> => {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    try {
      return await probePort(port)
    } catch {
      // taken: another one
    }
  }
  return probePort(0)
}

/** The migrated template the build writes beside the bundle (EmbeddedTemplate.ts; every chunk is in dist/). */
export const bundledTemplate = fileURLToPath(new URL("pglite-migrated", import.meta.url))

/**
 * A folder that does not exist yet starts as a copy of the migrated template, if there is one: no
 * initdb, no migration run (~7 s less). Copied aside and renamed, so a start cut short leaves no
 * half database; a copy that fails leaves the folder to initdb, as without a template.
 */
const copyTemplate = (path: string | undefined, template: string | undefined): void => {
  if (path === undefined || template === undefined || existsSync(path) || !existsSync(`${template}/PG_VERSION`)) return
  const partial = `${path}.${process.pid}.partial`
  try {
    cpSync(template, partial, { recursive: true })
    renameSync(partial, path)
  } catch {
    rmSync(partial, { recursive: true, force: true })
  }
}

/**
 * Starts PGlite (in `dataDir`, or in memory for "memory://") and returns a PostgreSQL URL to it.
 * A folder is locked for this process first (DataDirLock.ts): PGlite itself takes no lock, and two
 * processes on one folder would corrupt it.
 */
export const embeddedPostgres = (
  dataDir: string,
  options: {
    readonly loadDataDir?: Blob
    /** A migrated data folder that a new DATA_DIR starts as a copy of (EmbeddedTemplate.ts). */
    readonly template?: string
  } = {}
): Effect.Effect<Redacted.Redacted<string>, Error, Scope.Scope> =>
  Effect.gen(function*() {
    if (dataDir !== "memory://") yield* lockDataDir(dataDir)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (dataDir !== "memory://") mkdirSync(dataDir, { recursive: true })
          const path = dataDir === "memory://" ? undefined : `${dataDir}/pglite`
          // loadDataDir: a data folder saved with PGlite's dumpDataDir (tests start from a migrated one).
          // (PGlite ignores its options argument when the path argument is undefined: one object.)
          if (options.loadDataDir === undefined) copyTemplate(path, options.template)
          const db = options.loadDataDir === undefined
            ? new PGlite(path)
            : new PGlite({ ...(path === undefined ? {} : { dataDir: path }), loadDataDir: options.loadDataDir })
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
