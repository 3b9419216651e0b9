/** PGlite in a folder, behind @electric-sql/pglite-socket on a loopback port. */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Redacted } from "effect"
import type { Scope } from "effect"
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { lockDataDir } from "./DataDirLock.ts"

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
    // Port 0: the kernel picks a free port as it binds, where a port probed free first could be
    // taken by another process before the bind (a failed start).
    const server = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 1 })
          await server.start()
          return server
        },
        catch: (cause) => new Error(`cannot serve the embedded database: ${String(cause)}`)
      }),
      (server) => Effect.promise(() => server.stop())
    )
    // "127.0.0.1:<port>", the port as bound.
    const port = Number(server.getServerConn().split(":").pop())
    return Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`)
  })
