/**
 * The import rules of the layout (.dependency-cruiser.cjs, issue #31): `npm run lint:imports` finds
 * no violation in src, and it reads the TypeScript imports at all (with swc: TypeScript 7 has no JS
 * API), so a silent parser could not pass it off as "no violations".
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const root = fileURLToPath(new URL("../..", import.meta.url))
const depcruise = fileURLToPath(new URL("../../node_modules/dependency-cruiser/bin/dependency-cruise.mjs", import.meta.url))

interface Cruise {
  readonly modules: ReadonlyArray<{ readonly source: string; readonly dependencies: ReadonlyArray<{ readonly resolved: string }> }>
  readonly summary: { readonly violations: ReadonlyArray<unknown>; readonly error: number }
}

describe("import rules", () => {
  it("src has no violation, and its TypeScript imports are seen", { timeout: 60_000 }, async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [depcruise, "src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 }
    )
    const result = JSON.parse(stdout) as Cruise
    assert.deepStrictEqual(result.summary.violations, [])
    assert.strictEqual(result.summary.error, 0)
    const app = result.modules.find((m) => m.source === "src/layers/App.ts")
    assert.isDefined(app)
    const deps = app!.dependencies.map((d) => d.resolved)
    assert.include(deps, "src/layers/Mode.ts")
    assert.include(deps, "src/http/contract/OpenApiDocument.ts")
    // The sandbox is chosen by main.ts, not by the composition root.
    assert.isTrue(deps.every((d) => !d.startsWith("src/sandbox/")))
    const panel = result.modules.find((m) => m.source === "src/panel/problems.ts")
    assert.deepStrictEqual(panel!.dependencies.map((d) => d.resolved).filter((d) => d.startsWith("src/")), ["src/http/client.ts"])
  })
})
