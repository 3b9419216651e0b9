// The vitest configuration of mutation runs: the project's, with `include` narrowed to the test files
// that exercise the mutated file (MUTATION_TEST_FILES, set by scripts/mutation.mjs; else every file of
// `targets`). Narrowing here and not with Stryker's `testFiles` option matters: with `testFiles`,
// Stryker 10 activates static mutants (code run while a module loads) only after the module has
// loaded, so every one of them "survives".
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
// @ts-expect-error: a plain .mjs module without types
import { targets } from "../../stryker.config.mjs"
import base from "../../vitest.config.ts"

const fromEnv = process.env["MUTATION_TEST_FILES"]?.split(",").filter((f) => f.length > 0)
const include: Array<string> = fromEnv ?? [...new Set(Object.values(targets as Record<string, Array<string>>).flat())]

export default defineConfig({
  ...base,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: { ...base.test, include }
})
