/**
 * The embedded database's folder belongs to one process (layers/infra/DataDirLock.ts), as an operator
 * meets it: with a server running on DATA_DIR, the CLI and a second server on the same DATA_DIR
 * are refused with one line naming DATA_DIR and a non-zero exit, and the server is unharmed; a
 * server stopped cleanly leaves no lock; one killed (SIGKILL) leaves a stale lock that the next
 * opener takes over.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "../utils/FreePort.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import { ROOT, sharedBundle, sleep } from "./SpawnFixtures.ts"

let OUT = ""
const KEY = "k1:" + Buffer.alloc(32, 5).toString("base64")
const UA = { "user-agent": "lock-test" }
/** Start-up on the embedded database takes seconds alone, much longer on a loaded 2-core machine. */
const READY_MS = 150_000

const processes = childProcesses()

const cleanEnv = (extra: Record<string, string>): Record<string, string> => {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "PORT", "ROLE", "LOG_LEVEL", "OTEL_EXPORTER_OTLP_ENDPOINT", "METRICS_TOKEN"]) {
    delete base[name]
  }
  return { ...base, TOKEN_ENCRYPTION_KEY: KEY, ...extra } as Record<string, string>
}

const server = (dataDir: string, port: number) => ({
  ...processes.spawn(process.execPath, [join(OUT, "main.mjs")], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: "Warn" }) }),
  url: `http://127.0.0.1:${port}`
})
type Server = ReturnType<typeof server>

const waitReady = async (s: Server) => {
  const deadline = Date.now() + READY_MS
  while (Date.now() < deadline && s.child.exitCode === null) {
    if (await fetch(`${s.url}/readyz`, { headers: UA }).then((r) => r.status === 200, () => false)) return
    await sleep(250)
  }
  assert.fail(`not ready (exit ${s.child.exitCode}):\n${s.output().stdout}\n${s.output().stderr}`)
}

const cli = (dataDir: string, args: ReadonlyArray<string>) =>
  promisify(execFile)(process.execPath, [join(OUT, "cli.mjs"), ...args], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir }), encoding: "utf8", timeout: 120_000 })
    .then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" })
    )

const lines = (text: string) => text.split("\n").filter((l) => l.length > 0)

afterAll(processes.cleanUp)

describe("DATA_DIR is one process's", () => {
  it("the CLI and a second server are refused while a server runs on it; a killed server's lock is taken over", async () => {
    OUT = await sharedBundle()
    const dataDir = processes.tempDir("gateway-lock-")
    const first = server(dataDir, await freePort())
    await waitReady(first)
    assert.strictEqual(readFileSync(join(dataDir, "gateway.lock"), "utf8").trim(), String(first.child.pid), "the lock names the server")

    // The CLI: one line naming DATA_DIR and the server's pid, exit 1, nothing opened.
    const refused = await cli(dataDir, ["bots", "list"])
    assert.strictEqual(refused.code, 1, `stderr:\n${refused.stderr}`)
    assert.deepStrictEqual(lines(refused.stderr), [
      `error: DATA_DIR=${dataDir} is in use by another gateway process (pid ${first.child.pid}): the embedded database is one process's; stop that process first, or use DATABASE_URL (PostgreSQL) to share a database`
    ])
    assert.strictEqual(refused.stdout, "")

    // A second server on another port: one line, non-zero exit, no stack.
    const second = server(dataDir, await freePort())
    const exit = await Promise.race([second.exited, sleep(60_000).then(() => "timeout" as const)])
    assert.notStrictEqual(exit, "timeout", "the second server did not stop")
    assert.isTrue(exit !== "timeout" && exit.code !== 0 && exit.code !== null, JSON.stringify(exit))
    const { stderr } = second.output()
    assert.strictEqual(lines(stderr).length, 1, `stderr:\n${stderr}`)
    assert.include(lines(stderr)[0]!, `DATA_DIR=${dataDir} is in use by another gateway process (pid ${first.child.pid})`)
    assert.notMatch(stderr, /^\s+at /m)

    // The first server is unharmed and still holds the lock.
    assert.strictEqual((await fetch(`${first.url}/readyz`, { headers: UA })).status, 200)
    assert.strictEqual(readFileSync(join(dataDir, "gateway.lock"), "utf8").trim(), String(first.child.pid))

    // Killed: the lock stays behind with a dead pid; the CLI takes it over and works.
    first.child.kill("SIGKILL")
    await first.exited
    assert.isTrue(existsSync(join(dataDir, "gateway.lock")), "SIGKILL leaves the lock")
    const listed = await cli(dataDir, ["bots", "list"])
    assert.strictEqual(listed.code, 0, `stderr:\n${listed.stderr}`)
    assert.match(listed.stdout, /\t/, "the sandbox's bots, listed")
    assert.isFalse(existsSync(join(dataDir, "gateway.lock")), "the CLI let go of it when done")

    // A server stopped cleanly lets go too.
    const third = server(dataDir, await freePort())
    await waitReady(third)
    third.child.kill("SIGTERM")
    assert.deepStrictEqual(await third.exited, { code: 0, signal: null })
    assert.isFalse(existsSync(join(dataDir, "gateway.lock")), "a clean stop removes the lock")
  }, 3 * READY_MS)
})
