/**
 * The production bundle (`node scripts/build.mjs`: main.mjs, cli.mjs, their chunks, panel/), built
 * once per `vitest run` into the folder test/setup/BuildOnce.ts picked, by the first file that asks:
 * the others (in any worker) wait for it. Files that test the build itself build their own.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { promisify } from "node:util"
import { inject } from "vitest"

const ROOT = resolve(import.meta.dirname, "../..")
/** A build on a loaded 2-core machine takes up to a minute; beyond that something is wrong. */
const WAIT_MS = 240_000

/** The folder of the bundle, once built; fails with the build's output if it failed. */
export const sharedBundle = async (): Promise<string> => {
  // Without the global setup (a config that leaves it out), a folder of this process's own.
  const dir = inject("sharedBundleDir") ?? join(ROOT, ".build-test", `run-${process.pid}`)
  const ready = join(dir, ".shared-ready")
  const failed = `${dir}.failed`
  mkdirSync(dirname(dir), { recursive: true })
  let builder = false
  try {
    mkdirSync(`${dir}.lock`) // atomic: exactly one caller of the run builds
    builder = true
  } catch {
    // another file builds it
  }
  if (builder) {
    try {
      await promisify(execFile)(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, env: { ...process.env, BUILD_OUTDIR: dir, BUILD_FORCE: "1" }, maxBuffer: 16 * 1024 * 1024 })
      writeFileSync(ready, "")
    } catch (e) {
      const { stdout = "", stderr = "" } = e as { stdout?: string; stderr?: string }
      writeFileSync(failed, `${String(e)}\n${stdout}\n${stderr}`)
    }
  }
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    if (existsSync(ready)) return dir
    if (existsSync(failed)) throw new Error(`the shared bundle did not build:\n${readFileSync(failed, "utf8")}`)
    if (Date.now() > deadline) throw new Error(`the shared bundle (${dir}) was not built within ${WAIT_MS} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
