/**
 * vitest globalSetup: one production bundle per `vitest run` for every file that runs it
 * (test/setup/SharedBundle.ts builds it on first use, so a run of files that never start the bundle
 * builds nothing). The folder is this run's own (.build-test/run-<pid>): a run going on at the same
 * time in the same checkout, after a source changed, never rebuilds a bundle this run's processes use.
 * Beside it, run-<pid>.pglite: the run's saved PGlite folders (test/utils/PgliteTemplate.ts).
 */
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import type { TestProject } from "vitest/node"

const ROOT = resolve(import.meta.dirname, "../..")
const BUILDS = join(ROOT, ".build-test")

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

export default function setup(project: TestProject) {
  // The folders of runs that ended without their teardown (killed): their process is gone.
  for (const name of existsSync(BUILDS) ? readdirSync(BUILDS) : []) {
    const pid = /^run-(\d+)(?:\.lock|\.failed|\.pglite)?$/.exec(name)?.[1]
    if (pid !== undefined && !alive(Number(pid))) rmSync(join(BUILDS, name), { recursive: true, force: true })
  }
  const dir = join(BUILDS, `run-${process.pid}`)
  const remove = () => {
    rmSync(dir, { recursive: true, force: true })
    rmSync(`${dir}.lock`, { recursive: true, force: true })
    rmSync(`${dir}.failed`, { force: true })
    rmSync(`${dir}.pglite`, { recursive: true, force: true })
  }
  remove() // a killed run's, whose pid this process got
  project.provide("sharedBundleDir", dir)
  project.provide("pgliteTemplateDir", `${dir}.pglite`)
  return remove
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Where this run's shared bundle goes (test/setup/SharedBundle.ts). */
    sharedBundleDir: string
  }
}
