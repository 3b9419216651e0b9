/**
 * Shutdown as an operator sees it (issue #12, item 20): the bundled server in a child process, a
 * request hanging on an upstream (the sandbox's `hang` fault) when SIGTERM arrives. The drain is
 * bounded by SHUTDOWN_GRACE_MS: a line when it starts, a line when it ends, the hanging request is
 * cut, and the process exits 0 soon after the grace (not after the upstream time-out), through its
 * finalizers (pg-boss stopped: its instance row is marked stopped; the database closed), not
 * through main.ts's last resort ("still running … exiting", 5 s after the grace).
 * On PGlite, and on PostgreSQL with TEST_DATABASE_URL (each case in a database of its own).
 */
import { PGlite } from "@electric-sql/pglite"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import type { Run } from "../utils/ChildProcesses.ts"
import { freePort } from "../utils/TestApp.ts"
import { ROOT, sharedBundle, waitReady as waitUntilReady, within } from "./SpawnFixtures.ts"

let OUT = ""
const UA = { "user-agent": "shutdown-test" }

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? ""
/** The grace the cases give. */
const GRACE_MS = 2_000
/** main.ts's last resort: a process that ends this way skipped the finalizers still running. */
const LAST_RESORT = "shutdown: still running"
const LAST_RESORT_AFTER_GRACE_MS = 5_000
/**
 * The exit must come within the grace plus this: the rest of the shutdown (pg-boss's stop, the
 * database's close; tens of ms measured, seconds on a loaded machine), still before the last resort.
 */
const AFTER_GRACE_MS = LAST_RESORT_AFTER_GRACE_MS - 500
/**
 * The idle worker's grace: long, so that waiting it (nothing is in flight) cannot pass for a slow
 * machine: the exit must come well before it, and `terminate` gives up at 15 s.
 */
const IDLE_GRACE_MS = 30_000
const IDLE_EXIT_MS = 10_000

const processes = childProcesses()

const start = (extra: Record<string, string>) => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "ALLOWED_REDIRECT_URIS", "ROLE"]) {
    delete env[name]
  }
  const dataDir = processes.tempDir("gateway-shutdown-")
  const run = processes.spawn(process.execPath, [join(OUT, "main.mjs")], { cwd: ROOT, env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: "Info", ...extra } })
  return Object.assign(run, { dataDir })
}

/** A fresh database on TEST_DATABASE_URL's server (dropped at the clean-up): its URL and a client. */
const freshDatabase = async () => {
  const name = `gateway_shutdown_${randomBytes(6).toString("hex")}`
  const scope = Effect.runSync(Scope.make())
  const client = (url: string) =>
    Effect.runPromise(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer), Scope.provide(scope)))
  const admin = await client(TEST_DATABASE_URL)
  await Effect.runPromise(admin.unsafe(`CREATE DATABASE ${name}`))
  processes.onCleanUp(async () => {
    await Effect.runPromise(admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return { url: url.toString(), sql: await client(url.toString()) }
}

interface InstanceRow {
  readonly name: string
  readonly stopped: boolean
}
const INSTANCES = "SELECT name, stopped_on IS NOT NULL AS stopped FROM pgboss.instance ORDER BY started_on"

/** pg-boss's instance rows in a stopped process's embedded database (its folder, opened once the process is gone). */
const pgliteInstances = async (dataDir: string): Promise<ReadonlyArray<InstanceRow>> => {
  const db = new PGlite(join(dataDir, "pglite"))
  try {
    return (await db.query<InstanceRow>(INSTANCES)).rows
  } finally {
    await db.close()
  }
}

/** What every SIGTERM must end with: exit 0 through the finalizers, pg-boss stopped (its graceful stop marks its instance row). */
const assertCleanExit = (
  exit: unknown,
  output: { readonly stdout: string; readonly stderr: string },
  instances: ReadonlyArray<InstanceRow>,
  role: string
) => {
  const { stdout, stderr } = output
  assert.deepStrictEqual(exit, { code: 0, signal: null }, `stderr:\n${stderr}`)
  assert.notInclude(stderr, LAST_RESORT, `the process ended through main.ts's last resort, not its finalizers\nstdout:\n${stdout}`)
  const bad = stdout.split("\n").filter((l) => l.includes(`"level":"ERROR"`) || l.includes("did not stop cleanly"))
  assert.deepStrictEqual(bad, [], stdout)
  assert.deepStrictEqual(instances, [{ name: role, stopped: true }], "pg-boss stopped gracefully (its instance row marked stopped)")
}

const waitReady = (url: string, server: Run, timeoutMs: number) => waitUntilReady(url, server, timeoutMs, UA)

const lines = (stdout: string) =>
  stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { message: unknown; level: string; annotations: Record<string, unknown> })

beforeAll(async () => {
  OUT = await sharedBundle()
}, 300_000)

afterAll(processes.cleanUp)

/** SIGTERM, then the exit (within 15 s, else the test fails with the output), its time and the output. */
const terminate = async (server: Run) => {
  const t0 = Date.now()
  server.child.kill("SIGTERM")
  const exit = await within(15_000, server.exited)
  const elapsed = Date.now() - t0
  const { stdout, stderr } = server.output()
  if (exit === "timeout") assert.fail(`still running 15 s after SIGTERM\nstdout:\n${stdout}\nstderr:\n${stderr}`)
  return { exit, elapsed, stdout, stderr }
}

const databases = [
  { kind: "PGlite", skip: false },
  { kind: "PostgreSQL", skip: TEST_DATABASE_URL === "" }
] as const

describe("shutdown (SIGTERM)", () => {
  if (TEST_DATABASE_URL === "") console.warn("TEST_DATABASE_URL is not set: the shutdown cases on PostgreSQL are skipped")

  for (const { kind, skip } of databases) {
    it.skipIf(skip)(`SIGTERM on ${kind}: drain logged at start and end, the hanging request cut at SHUTDOWN_GRACE_MS, exit 0 through the finalizers`, async () => {
      const port = await freePort()
      const url = `http://127.0.0.1:${port}`
      const db = kind === "PostgreSQL" ? await freshDatabase() : undefined
      // The gateway's own upstream time-out is far away: only the grace can end the wait.
      const server = start({
        PORT: String(port),
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        UPSTREAM_TIMEOUT_MS: "60000",
        ...(db === undefined ? {} : { DATABASE_URL: db.url })
      })
      await waitReady(url, server, 90_000)

      // A sign-in up to the callback, whose code exchange with the platform will hang.
      const login = await fetch(`${url}/auth/idp/login?redirect_uri=${encodeURIComponent("http://127.0.0.1/callback")}`, { headers: UA, redirect: "manual" })
      assert.strictEqual(login.status, 307, await login.text())
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!
      const authorize = await fetch(`${login.headers.get("location")!}&login_hint=${ALICE_ID}`, { redirect: "manual" })
      const callback = authorize.headers.get("location")!
      assert.include(callback, "/auth/idp/callback")
      const fault = await fetch(`${url}/sandbox/faults`, {
        method: "POST",
        headers: { ...UA, "content-type": "application/json" },
        // The code exchange itself: the start-up also calls the platform (the bots' applications, /submit), which "*" could catch.
        body: JSON.stringify({ route: "POST /oauth2/token", kind: "hang", count: 1 })
      })
      assert.strictEqual(fault.status, 200, await fault.text())

      const hanging = fetch(callback, { headers: { ...UA, cookie }, redirect: "manual" }).then(
        (res) => `answered ${res.status}`,
        () => "cut"
      )
      assert.strictEqual(await within(1_500, hanging), "timeout", "the request hangs on the upstream")

      const { exit, elapsed, stdout, stderr } = await terminate(server)
      const instances = db === undefined ? await pgliteInstances(server.dataDir) : await Effect.runPromise(db.sql.unsafe<InstanceRow>(INSTANCES))
      assertCleanExit(exit, { stdout, stderr }, instances, "all")
      // The grace and the rest of the shutdown (tens of ms), with room for a loaded machine; the upstream
      // time-out is 60 s, and main.ts's last resort fires at grace + 5 s (assertCleanExit checks its line too).
      assert.isBelow(elapsed, GRACE_MS + AFTER_GRACE_MS, `exit ${elapsed} ms after SIGTERM\nstderr:\n${stderr}`)
      assert.isAtLeast(elapsed, GRACE_MS - 100, "in-flight requests get the grace")
      assert.notStrictEqual(await within(2_000, hanging), "timeout", "the hanging request was cut, not left open")

      const logged = lines(stdout)
      const startLine = logged.find((l) => String(l.message).includes("shutdown: draining"))
      assert.isDefined(startLine, stdout)
      assert.isAtLeast(Number(startLine!.annotations["in_flight"]), 1)
      assert.strictEqual(startLine!.annotations["grace_ms"], 2000)
      const endLine = logged.find((l) => String(l.message).startsWith("shutdown: grace period over"))
      assert.isDefined(endLine, stdout)
      assert.isAtLeast(Number(endLine!.annotations["cut"]), 1)
      assert.isAbove(logged.indexOf(endLine!), logged.indexOf(startLine!))
    }, 200_000)
  }

  it.skipIf(TEST_DATABASE_URL === "")("SIGTERM to an idle ROLE=worker on PostgreSQL: workers off, pg-boss stopped, exit 0 at once", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const db = await freshDatabase()
    const server = start({ PORT: String(port), ROLE: "worker", SHUTDOWN_GRACE_MS: String(IDLE_GRACE_MS), DATABASE_URL: db.url })
    await waitReady(url, server, 90_000)
    const connected = await Effect.runPromise(db.sql.unsafe<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    ))
    assert.isAtLeast(connected[0]!.n, 1, "the worker holds connections while it runs")

    const { exit, elapsed, stdout, stderr } = await terminate(server)
    assertCleanExit(exit, { stdout, stderr }, await Effect.runPromise(db.sql.unsafe<InstanceRow>(INSTANCES)), "worker")
    // Nothing in flight: the grace (30 s) is not waited for (tens of ms measured; bounded generously for a loaded machine).
    assert.isBelow(elapsed, IDLE_EXIT_MS, `exit ${elapsed} ms after SIGTERM\nstderr:\n${stderr}`)
    const drained = lines(stdout).find((l) => l.message === "shutdown: drained")
    assert.isDefined(drained, stdout)
    assert.strictEqual(drained!.annotations["cut"], 0)
  }, 200_000)

  it("SHUTDOWN_GRACE_MS=abc stops start-up with one line naming it", async () => {
    const server = start({ PORT: String(await freePort()), SHUTDOWN_GRACE_MS: "abc", LOG_LEVEL: "Error" })
    const exit = await within(60_000, server.exited)
    const { stderr } = server.output()
    assert.isTrue(exit !== "timeout" && exit.code !== 0, JSON.stringify(exit))
    const errorLines = stderr.split("\n").filter((l) => l.length > 0)
    assert.strictEqual(errorLines.length, 1, stderr)
    assert.include(errorLines[0]!, "SHUTDOWN_GRACE_MS")
  }, 90_000)
})
