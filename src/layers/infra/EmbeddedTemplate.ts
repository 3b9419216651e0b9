/**
 * A migrated embedded database kept as a PGlite data folder, so a fresh DATA_DIR starts from a copy
 * instead of running initdb and every migration (~7 s of a first start on 2 cores). A folder, not
 * PGlite's dumpDataDir tarball: copying it is quicker than PGlite unpacking a tarball and holds no
 * 40 MB Blob in memory. scripts/build.mjs writes it next to the bundle (dist/pglite-migrated/, by the
 * `template` entry, src/template.ts); Embedded.ts copies it to a DATA_DIR that has no database yet.
 * A template older than the migrations is still right: the migrator applies what it lacks at start.
 * The test databases start from the same kind of copy (test/utils/PgliteTemplate.ts).
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, References } from "effect"
import { renameSync, rmSync } from "node:fs"
import { MigrationsLayer } from "../migrations/Migrations.ts"

/** Every migration over the wire, as the gateway applies them (PgClient through the socket). */
export const migrateOverSocket = async (db: PGlite): Promise<void> => {
  // Port 0: the kernel's choice as it binds ("127.0.0.1:<port>").
  const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 1 })
  await server.start()
  try {
    const port = Number(server.getServerConn().split(":").pop())
    const url = Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`)
    await Effect.runPromise(Layer.build(MigrationsLayer.pipe(
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Layer.provide(PgClient.layer({ url, maxConnections: 1 }))
    )).pipe(Effect.scoped))
  } finally {
    await server.stop()
  }
}

/**
 * Writes a fresh database with every migration applied and no rows into the folder `dir` (replaced
 * whole: built aside, then renamed, so a start never copies half a template).
 */
export const buildMigratedTemplate = async (dir: string): Promise<void> => {
  const partial = `${dir}.${process.pid}.partial`
  rmSync(partial, { recursive: true, force: true })
  const db = new PGlite(partial)
  try {
    await db.waitReady
    await migrateOverSocket(db)
    // Written out, a started copy has no WAL to replay.
    await db.exec("CHECKPOINT")
  } finally {
    await db.close()
  }
  rmSync(dir, { recursive: true, force: true })
  renameSync(partial, dir)
}
