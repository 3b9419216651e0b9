/**
 * What `node scripts/build.mjs` ships, as far as memory goes (#14, #16): every output is ASCII (one
 * non-ASCII character, e.g. in a regular expression literal, which esbuild's ascii charset leaves as
 * written, makes V8 hold that whole file as a two-byte string: twice its size), and what a process
 * loads at start (main.mjs and the chunks it imports statically) leaves out the large modules only ever imported dynamically:
 * Scalar's and Swagger's scripts (the first /docs request loads Scalar's). The bundle checked is the
 * run's shared one (test/setup/SharedBundle.ts): the same script and options, built once per run.
 */
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { sharedBundle } from "../setup/SharedBundle.ts"

let OUT = ""
beforeAll(async () => {
  OUT = await sharedBundle()
}, 300_000)
const read = (file: string) => readFileSync(join(OUT, file), "utf8")
const outputs = () => readdirSync(OUT).filter((f) => f.endsWith(".mjs"))

/** main.mjs and every chunk it imports statically, transitively (what runs before any dynamic import). */
const loadedAtStart = (entry: string) => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    // esbuild's minified static imports: `import{a as b}from"./chunk-X.mjs";` and `import"./chunk-X.mjs";`
    for (const m of read(file).matchAll(/(?:\bfrom|\bimport)\s*"\.\/([^"]+\.mjs)"/g)) visit(m[1]!)
  }
  visit(entry)
  return seen
}

describe("the bundle", () => {
  it("is ASCII in every output (the build refuses to write one that is not)", () => {
    const files = outputs()
    assert.include(files, "main.mjs")
    assert.include(files, "cli.mjs")
    for (const f of files) assert.notMatch(read(f), /[^\x00-\x7f]/, `${f} has a non-ASCII character`)
  }, 120_000)

  it("starts without Scalar's and Swagger's scripts: they are chunks of their own, imported on first use", () => {
    const atStart = loadedAtStart("main.mjs")
    assert.isAbove(atStart.size, 1, "main.mjs imports its shared chunks")
    // The first lines of the scripts effect ships (effect/dist/http-api/internal/httpApi{Scalar,Swagger}.js).
    for (const [name, marker] of [["Scalar", "Original file: /npm/@scalar/api-reference"], ["Swagger UI", "swagger-ui-bundle.js.LICENSE.txt"]]) {
      const files = outputs().filter((f) => read(f).includes(marker!))
      assert.strictEqual(files.length, 1, `${name}'s script is in the build, once`)
      assert.isFalse(atStart.has(files[0]!), `${files[0]} (${name}) is loaded at start`)
    }
  }, 120_000)
})
