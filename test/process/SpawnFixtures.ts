/** Starting the bundled gateway (`node dist/main.mjs`) as a child process with a clean environment (as Process.test.ts does). */
import { execFileSync } from "node:child_process"
import { resolve } from "node:path"
import { childProcesses } from "../utils/ChildProcesses.ts"
import type { Run } from "../utils/ChildProcesses.ts"

export type { Run }

export const ROOT = resolve(import.meta.dirname, "../..")

// This module's processes and folders: shared by the files that use it in a worker (one at a time),
// each of which calls `cleanUp` in its afterAll.
const processes = childProcesses()

/** Sandbox mode, embedded database, nothing inherited that would change that. */
export const cleanEnv = (extra: Record<string, string>) => {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "OTEL_EXPORTER_OTLP_ENDPOINT", "METRICS_TOKEN"]) {
    delete base[name]
  }
  const dataDir = processes.tempDir("gateway-process-")
  return { ...base, DATA_DIR: dataDir, LOG_LEVEL: "Warn", ...extra }
}

export const buildBundle = () => execFileSync("node", ["scripts/build.mjs"], { cwd: ROOT, stdio: "ignore" })

/** The bundle (`main.mjs`, `cli.mjs`) built once per run, in a folder no other run rebuilds; its path. */
export { sharedBundle } from "../setup/SharedBundle.ts"

/** `node dist/main.mjs` (built by `buildBundle`), as `npm start` runs it. */
export const runBundle = (extraEnv: Record<string, string>): Run =>
  processes.spawn("node", ["dist/main.mjs"], { cwd: ROOT, env: cleanEnv(extraEnv) })

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const within = <A>(ms: number, promise: Promise<A>): Promise<A | "timeout"> =>
  Promise.race([promise, sleep(ms).then(() => "timeout" as const)])

/** Polls /readyz (with `headers`) until 200; fails with the output if the process exits or the deadline passes. */
export const waitReady = async (url: string, server: Run, timeoutMs: number, headers: Record<string, string> = {}) => {
  let exited = false
  void server.exited.then(() => exited = true)
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && !exited) {
    try {
      if ((await fetch(`${url}/readyz`, { headers })).status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(250)
  }
  const { stdout, stderr } = server.output()
  throw new Error(`not ready after ${timeoutMs} ms (exited: ${exited})\nstdout:\n${stdout}\nstderr:\n${stderr}`)
}

/** Ends every process started here (its whole group, awaited) and removes the data folders. */
export const cleanUp = processes.cleanUp
