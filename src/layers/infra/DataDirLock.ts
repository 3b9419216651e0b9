/**
 * The embedded database belongs to one process: DATA_DIR holds a lock file with the owner's PID
 * while PGlite is open (a server, or the CLI). A second opener (the CLI next to a running server,
 * a second server) is refused with one line naming DATA_DIR and the owner. A lock whose PID no
 * longer runs (the owner was killed) is stale and taken over.
 */
import { Effect } from "effect"
import type { Scope } from "effect"
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export const LOCK_FILE = "gateway.lock"

/** Another live process has the embedded database open. */
export class DataDirInUse extends Error {
  readonly _tag = "DataDirInUse"
  constructor(readonly dataDir: string, readonly pid: number | undefined) {
    super(
      `DATA_DIR=${dataDir} is in use by another gateway process${pid === undefined ? "" : ` (pid ${pid})`}: ` +
        "the embedded database is one process's; stop that process first, or use DATABASE_URL (PostgreSQL) to share a database"
    )
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readPid = (path: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** A lock file without a PID is being written, unless it is older than this (its writer died first). */
const UNWRITTEN_GRACE_MS = 5_000

const acquire = (dataDir: string): string => {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCK_FILE)
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: "wx", mode: 0o644 })
      return path
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    const pid = readPid(path)
    if (pid === undefined) {
      const age = (() => {
        try {
          return Date.now() - statSync(path).mtimeMs
        } catch {
          return Infinity
        }
      })()
      if (age < UNWRITTEN_GRACE_MS) throw new DataDirInUse(dataDir, undefined)
    } else if (pid !== process.pid && alive(pid)) {
      throw new DataDirInUse(dataDir, pid)
    }
    // Stale: its process is gone (or it is this PID again, e.g. PID 1 in a restarted container).
    rmSync(path, { force: true })
  }
  throw new DataDirInUse(dataDir, readPid(path))
}

/** Removes the lock if it is still this process's. */
const release = (path: string) => {
  if (readPid(path) === process.pid) rmSync(path, { force: true })
}

/** Holds DATA_DIR's lock for the scope; fails with DataDirInUse when a live process holds it. */
export const lockDataDir = (dataDir: string): Effect.Effect<void, DataDirInUse | Error, Scope.Scope> =>
  Effect.asVoid(Effect.acquireRelease(
    Effect.try({
      try: () => acquire(dataDir),
      catch: (e) => e instanceof DataDirInUse ? e : new Error(`cannot lock DATA_DIR=${dataDir}: ${e instanceof Error ? e.message : String(e)}`)
    }),
    (path) => Effect.sync(() => release(path))
  ))
