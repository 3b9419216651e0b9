/**
 * Shutdown as an operator sees it (issue #12, item 20): the bundled server in a child process, a
 * request hanging on an upstream (the sandbox's `hang` fault) when SIGTERM arrives. The drain is
 * bounded by SHUTDOWN_GRACE_MS: a line when it starts, a line when it ends, the hanging request is
 * cut, and the process exits 0 soon after the grace (not after the upstream time-out).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { join } from "node:path"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import type { Run } from "../utils/ChildProcesses.ts"
import { freePort } from "../utils/TestApp.ts"
import { ROOT, sharedBundle, waitReady as waitUntilReady, within } from "./Spawn.ts"

let OUT = ""
const UA = { "user-agent": "shutdown-test" }

const processes = childProcesses()

const start = (extra: Record<string, string>) => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "ALLOWED_REDIRECT_URIS"]) {
    delete env[name]
  }
  const dataDir = processes.tempDir("gateway-shutdown-")
  return processes.spawn(process.execPath, [join(OUT, "main.mjs")], { cwd: ROOT, env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: "Info", ...extra } })
}

const waitReady = (url: string, server: Run, timeoutMs: number) => waitUntilReady(url, server, timeoutMs, UA)

const lines = (stdout: string) =>
  stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { message: unknown; level: string; annotations: Record<string, unknown> })

beforeAll(async () => {
  OUT = await sharedBundle()
}, 300_000)

afterAll(processes.cleanUp)

describe("shutdown with a hung upstream", () => {
  it("SIGTERM: drain logged at start and end, the hanging request cut at SHUTDOWN_GRACE_MS, exit 0", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    // The gateway's own upstream time-out is far away: only the grace can end the wait.
    const server = start({ PORT: String(port), SHUTDOWN_GRACE_MS: "2000", UPSTREAM_TIMEOUT_MS: "60000" })
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
      body: JSON.stringify({ route: "*", kind: "hang", count: 1 })
    })
    assert.strictEqual(fault.status, 200, await fault.text())

    const hanging = fetch(callback, { headers: { ...UA, cookie }, redirect: "manual" }).then(
      (res) => `answered ${res.status}`,
      () => "cut"
    )
    assert.strictEqual(await within(1_500, hanging), "timeout", "the request hangs on the upstream")

    const t0 = Date.now()
    server.child.kill("SIGTERM")
    const exit = await within(15_000, server.exited)
    const elapsed = Date.now() - t0
    const { stdout, stderr } = server.output()
    assert.notStrictEqual(exit, "timeout", `still running 15 s after SIGTERM\nstdout:\n${stdout}\nstderr:\n${stderr}`)
    assert.deepStrictEqual(exit, { code: 0, signal: null }, `stderr:\n${stderr}`)
    // The grace (2 s) and the rest of the shutdown, with room for a loaded machine; the upstream time-out is 60 s.
    assert.isBelow(elapsed, 8_000, `exit ${elapsed} ms after SIGTERM`)
    assert.isAtLeast(elapsed, 1_900, "in-flight requests get the grace")
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
