// Writes test/durations.json (seconds per test file, hooks included: the order
// test/setup/DurationSequencer.ts falls back to on a checkout that has never run the tests) from
// vitest's own record of the last run of each file (node_modules/.vite/vitest/*/results.json).
// After a whole `npm test`: node scripts/test-durations.mjs
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const cacheDir = join(root, "node_modules/.vite/vitest")
const caches = existsSync(cacheDir) ? readdirSync(cacheDir).map((d) => join(cacheDir, d, "results.json")).filter(existsSync) : []
if (caches.length === 0) {
  console.error("no vitest results in node_modules/.vite/vitest: run the tests first")
  process.exit(1)
}
const files = {}
for (const cache of caches) {
  for (const project of Object.values(JSON.parse(readFileSync(cache, "utf8")).projects)) Object.assign(files, project.files)
}
const seconds = Object.fromEntries(
  Object.entries(files)
    .filter(([path]) => existsSync(join(root, path)))
    .map(([path, r]) => [path, Math.round(r.duration / 100) / 10])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
)
writeFileSync(join(root, "test/durations.json"), `${JSON.stringify(seconds, null, 1)}\n`)
console.log(`test/durations.json: ${Object.keys(seconds).length} files`)
