/**
 * A PostgreSQL server of a test's own, for what the shared one must never undergo (an immediate
 * stop under load): initdb into a temporary folder, started on a free loopback port, removed when
 * the scope closes. The binaries are the newest under /usr/lib/postgresql/<major>/bin (Debian's
 * layout), or PG_BIN's. initdb and postgres refuse to run as root: as root (CI), the folder is
 * given to the `postgres` OS user and every command runs as it (`runuser -u postgres --`).
 *
 * Two roles: `postgres`, the superuser (for inspection), and `gateway`, an ordinary role owning the
 * database `gateway`, as in production, where the gateway's user is no superuser.
 */
import { Effect, Redacted } from "effect"
import type { Scope } from "effect"
import { execFile } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "./FreePort.ts"

const run = promisify(execFile)

export interface ThrowawayPostgres {
  /** The URL of the database `gateway` as `user` (`gateway`, or `postgres` the superuser). */
  readonly url: (user: "gateway" | "postgres") => Redacted.Redacted<string>
  /** `pg_ctl stop -m immediate`: every server process ends at once, nothing written out (a crash). */
  readonly crash: Effect.Effect<void, Error>
  /** Starts the server again (after a crash: its recovery), answering once it accepts connections. */
  readonly start: Effect.Effect<void, Error>
  /** The server's log so far (for a failing assertion's message). */
  readonly log: () => string
}

const bindir = (): string => {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const root = "/usr/lib/postgresql"
  const majors = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : []
  majors.sort((a, b) => Number(b) - Number(a))
  if (majors[0] === undefined) throw new Error(`no PostgreSQL binaries under ${root}/<major>/bin (set PG_BIN)`)
  return join(root, majors[0], "bin")
}

export const throwawayPostgres: Effect.Effect<ThrowawayPostgres, Error, Scope.Scope> = Effect.gen(function*() {
  const bin = yield* Effect.try({ try: bindir, catch: (e) => e instanceof Error ? e : new Error(String(e)) })
  const asRoot = process.getuid?.() === 0
  const dir = mkdtempSync(join(tmpdir(), "gateway-pg-"))
  const data = join(dir, "data")
  const logFile = join(dir, "server.log")
  const port = yield* Effect.promise(() => freePort())
  // As root, the owner's uid for the folder and `runuser` for each command.
  const exec = (tool: string, args: ReadonlyArray<string>) =>
    Effect.tryPromise({
      try: () =>
        asRoot
          ? run("runuser", ["-u", "postgres", "--", join(bin, tool), ...args], { cwd: dir })
          : run(join(bin, tool), [...args], { cwd: dir }),
      catch: (e) => new Error(`${tool} failed: ${String(e)}\n${readLog()}`)
    })
  const readLog = () => existsSync(logFile) ? readFileSync(logFile, "utf8") : ""
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=100`
  const start = exec("pg_ctl", ["start", "-w", "-t", "60", "-D", data, "-l", logFile, "-o", options]).pipe(Effect.asVoid)
  const stop = exec("pg_ctl", ["stop", "-m", "immediate", "-w", "-D", data]).pipe(Effect.asVoid)

  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      if (existsSync(join(data, "postmaster.pid"))) yield* Effect.ignore(stop)
      rmSync(dir, { recursive: true, force: true })
    })
  )
  if (asRoot) {
    const { stdout } = yield* Effect.tryPromise({ try: () => run("id", ["-u", "postgres"]), catch: () => new Error("no `postgres` OS user to run initdb as") })
    chownSync(dir, Number(stdout.trim()), -1)
  }
  // --no-sync: only initdb's own final fsync is skipped; the server runs with fsync on.
  yield* exec("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale", "C"])
  yield* start
  const psql = (sql: string) => exec("psql", ["-X", "-q", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-c", sql])
  yield* psql("CREATE ROLE gateway LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
  yield* psql("CREATE DATABASE gateway OWNER gateway")
  return {
    url: (user) => Redacted.make(`postgres://${user}@127.0.0.1:${port}/gateway`),
    crash: stop,
    start,
    log: readLog
  }
})
