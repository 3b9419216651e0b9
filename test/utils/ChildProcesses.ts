/**
 * The child processes a test file starts (the bundled gateway, its workers, `npm start`) and their
 * clean-up, in one place: each is spawned in a process group of its own (`detached`), so the clean-up
 * can kill the whole group (a server orphaned behind an exited npm is still in it), waits for it to
 * be gone, and only then removes its temporary folders and runs the file's other clean-ups.
 *
 * One `childProcesses()` per test file, made at module level: files share this module in a worker
 * (vitest `isolate: false`), so nothing here is module state.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface Run {
  readonly child: ChildProcess
  /** What the process printed so far: each stream, and both as they arrived. */
  readonly output: () => { readonly stdout: string; readonly stderr: string; readonly all: string }
  readonly exited: Promise<Exit>
}

/** How long the clean-up waits for a killed group's leader to be reaped before going on. */
const REAP_MS = 10_000

export interface ChildProcesses {
  /** Starts `command` in its own process group with piped output, ended by `cleanUp` at the latest. */
  readonly spawn: (command: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv }) => Run
  /** A new temporary folder, removed by `cleanUp`. */
  readonly tempDir: (prefix: string) => string
  /** Something else `cleanUp` undoes once the processes are gone (the latest registered first). */
  readonly onCleanUp: (f: () => void | Promise<void>) => void
  /** SIGKILL to every group started, each awaited; then the folders and clean-ups. Forgets them all: safe to call again. */
  readonly cleanUp: () => Promise<void>
}

export const childProcesses = (): ChildProcesses => {
  let runs: Array<Run> = []
  let cleanups: Array<() => void | Promise<void>> = []
  return {
    spawn: (command, args, { cwd, env }) => {
      const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
      let stdout = ""
      let stderr = ""
      let all = ""
      child.stdout!.setEncoding("utf8").on("data", (c: string) => (stdout += c, all += c))
      child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c, all += c))
      const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))
      const run: Run = { child, exited, output: () => ({ stdout, stderr, all }) }
      runs.push(run)
      return run
    },
    tempDir: (prefix) => {
      const dir = mkdtempSync(join(tmpdir(), prefix))
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
      return dir
    },
    onCleanUp: (f) => {
      cleanups.push(f)
    },
    cleanUp: async () => {
      // Forgotten first: a later file must not signal a pid the system has reused.
      const [ending, undo] = [runs, cleanups]
      runs = []
      cleanups = []
      await Promise.all(ending.map(async ({ child, exited }) => {
        try {
          process.kill(-child.pid!, "SIGKILL")
        } catch {
          // already gone
        }
        if (child.exitCode === null && child.signalCode === null) {
          let timer: NodeJS.Timeout | undefined
          await Promise.race([exited, new Promise((resolve) => timer = setTimeout(resolve, REAP_MS))])
          clearTimeout(timer)
        }
      }))
      for (const f of undo.reverse()) await f()
    }
  }
}
