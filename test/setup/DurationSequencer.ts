/**
 * vitest's order of the files, longest first, with a fallback for a checkout that has never run them.
 * vitest's own sequencer orders files by their last run's duration (its cache in node_modules/.vite)
 * and, with no cache, by size: on a fresh clone (CI) a long, short file (a process test, a timer-bound
 * one) then started last and ran alone while the other worker idled (~20 s of tail, 2026-12-02). The
 * fallback here is test/durations.json (seconds per file, rewritten from vitest's cache after a whole
 * run by `node scripts/test-durations.mjs`); a file in neither (a new one) counts as long, so it
 * starts early. Failed files still run first.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { BaseSequencer } from "vitest/node"
import type { TestSpecification } from "vitest/node"

const ROOT = resolve(import.meta.dirname, "../..")

const committed = (): Record<string, number> => {
  try {
    return JSON.parse(readFileSync(resolve(ROOT, "test/durations.json"), "utf8")) as Record<string, number>
  } catch {
    return {}
  }
}

/** What a file never measured counts as: longer than most, so that it starts early. */
const UNKNOWN_MS = 20_000

export class DurationSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const known = committed()
    const estimate = (spec: TestSpecification) => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec)
      if (cached !== undefined) return { failed: cached.failed === true, ms: cached.duration ?? UNKNOWN_MS }
      const seconds = known[spec.moduleId.slice(ROOT.length + 1).replaceAll("\\", "/")]
      return { failed: false, ms: seconds === undefined ? UNKNOWN_MS : seconds * 1000 }
    }
    const of = new Map(files.map((spec) => [spec, estimate(spec)]))
    return [...files].sort((a, b) => {
      const x = of.get(a)!
      const y = of.get(b)!
      if (x.failed !== y.failed) return x.failed ? -1 : 1
      return y.ms - x.ms
    })
  }
}
