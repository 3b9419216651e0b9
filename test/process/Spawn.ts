/** Starting the bundled gateway (`node dist/main.mjs`) as a child process with a clean environment (as Process.test.ts does). */
import { execFileSync, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

export const ROOT = resolve(import.meta.dirname, "../..")

export interface Run {
  readonly child: ChildProcess
  readonly output: () => { readonly stdout: string; readonly stderr: string }
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

const started: Array<ChildProcess> = []
const dirs: Array<string> = []

/** Sandbox mode, embedded database, nothing inherited that would change that. */
export const cleanEnv = (extra: Record<string, string>) => {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "OTEL_EXPORTER_OTLP_ENDPOINT", "METRICS_TOKEN"]) {
    delete base[name]
  }
  const dataDir = mkdtempSync(join(tmpdir(), "gateway-process-"))
  dirs.push(dataDir)
  return { ...base, DATA_DIR: dataDir, LOG_LEVEL: "Warn", ...extra }
}

export const buildBundle = () => execFileSync("node", ["scripts/build.mjs"], { cwd: ROOT, stdio: "ignore" })

export const runBundle = (extraEnv: Record<string, string>): Run => {
  const child = spawn("node", ["dist/main.mjs"], { cwd: ROOT, env: cleanEnv(extraEnv), stdio: ["ignore", "pipe", "pipe"], detached: true })
  started.push(child)
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (c: string) => stdout += c)
  child.stderr!.setEncoding("utf8").on("data", (c: string) => stderr += c)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  return { child, exited, output: () => ({ stdout, stderr }) }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const within = <A>(ms: number, promise: Promise<A>): Promise<A | "timeout"> =>
  Promise.race([promise, sleep(ms).then(() => "timeout" as const)])

/** Polls /readyz until 200; fails with the output if the process exits or the deadline passes. */
export const waitReady = async (url: string, server: Run, timeoutMs: number) => {
  let exited = false
  void server.exited.then(() => exited = true)
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && !exited) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(250)
  }
  const { stdout, stderr } = server.output()
  throw new Error(`not ready after ${timeoutMs} ms (exited: ${exited})\nstdout:\n${stdout}\nstderr:\n${stderr}`)
}

/** Ends every process started here (its whole group) and removes the data folders. */
export const cleanUp = () => {
  for (const child of started) {
    try {
      process.kill(-child.pid!, "SIGKILL")
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  // Forgotten once ended: a later file sharing this module must not signal a pid the system has reused.
  started.length = 0
  dirs.length = 0
}
