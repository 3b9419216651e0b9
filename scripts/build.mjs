// Bundles the server and the CLI with esbuild so `npm start` works on Node 20 (which cannot run
// .ts) and starts fast. PGlite stays external: it loads its WebAssembly files from its package.
// The build is skipped when the bundle is current: every file esbuild read last time (recorded in
// <outdir>/.build-inputs.json), this script, package.json and package-lock.json are older than the
// start of that build, and the outputs are there. `node scripts/build.mjs --force` (or BUILD_FORCE=1) always builds.
// Code splitting: a module only ever imported dynamically (Scalar's and Swagger's scripts, ~6 MB, that
// effect loads for the first /docs request; undici) is a chunk of its own next to main.mjs, read only
// when it is imported; what the two entries share is in chunks too. A process reads ~3.7 MB at start
// instead of 8 (RSS at /readyz, Node 24: 153 -> 125 MiB for a worker, with the two-byte fix below).
import { execFileSync } from "node:child_process"
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { serverBundleOptions } from "./bundle-options.mjs"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const outdir = resolve(ROOT, process.env.BUILD_OUTDIR ?? "dist")
const record = join(outdir, ".build-inputs.json")
const readRecord = () => {
  try {
    return JSON.parse(readFileSync(record, "utf8"))
  } catch {
    return undefined
  }
}
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))

const mtime = (file) => {
  try {
    return statSync(file).mtimeMs
  } catch {
    return Infinity // gone or unreadable: rebuild
  }
}

/** Whether the outputs are newer than everything they were built from (and from the same script and version). */
const current = () => {
  if (process.argv.includes("--force") || process.env.BUILD_FORCE === "1") return false
  const inputs = readRecord()
  if (inputs === undefined || inputs.version !== pkg.version || !Array.isArray(inputs.files) || typeof inputs.startedAt !== "number") return false
  // Every output of that build, the chunks included (a missing chunk fails only when it is imported).
  if (!Array.isArray(inputs.outputs) || inputs.outputs.some((f) => !existsSync(join(outdir, f)))) return false
  // Compared with the time the last build started: a file saved while it ran is newer.
  const built = inputs.startedAt
  const sources = [fileURLToPath(import.meta.url), join(ROOT, "scripts/bundle-options.mjs"), join(ROOT, "package.json"), join(ROOT, "package-lock.json"), ...inputs.files.map((f) => resolve(ROOT, f))]
  return sources.every((f) => mtime(f) < built)
}

/** Where `file` has a character outside ASCII, if anywhere: "line:column U+XXXX". */
const firstNonAscii = (file) => {
  const lines = readFileSync(file, "utf8").split("\n")
  for (let i = 0; i < lines.length; i++) {
    const column = lines[i].search(/[^\x00-\x7f]/)
    if (column >= 0) return `${i + 1}:${column + 1} U+${lines[i].charCodeAt(column).toString(16).toUpperCase().padStart(4, "0")}`
  }
  return undefined
}

if (current()) {
  if (process.env.BUILD_VERBOSE === "1") console.error(`build: ${outdir} is current`)
} else {
  const startedAt = Date.now()
  const previous = readRecord()?.outputs
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: "src/main.ts", cli: "src/cli.ts", template: "src/template.ts" },
    outdir,
    outExtension: { ".js": ".mjs" },
    ...serverBundleOptions,
    // Chunks beside the entries (not in a folder): import.meta.url means the same directory in every
    // output (http/server/PanelPage.ts finds dist/panel from it).
    splitting: true,
    chunkNames: "[name]-[hash]",
    metafile: true,
    // The version lives in package.json only; the bundles read it from here.
    define: { __GATEWAY_VERSION__: JSON.stringify(pkg.version) }
  })
  const outputs = Object.keys(result.metafile.outputs).map((f) => basename(f))
  // esbuild's ascii charset leaves regular expression literals as written: one `/ς/` made V8 hold the
  // whole bundle as a two-byte string (16 MiB instead of 8: a ROLE=worker's RSS, #14). Write such a
  // character as an escape in the source (`/\u03C2/`); the build refuses to ship one.
  for (const f of outputs.filter((f) => f.endsWith(".mjs"))) {
    const where = firstNonAscii(join(outdir, f))
    if (where !== undefined) throw new Error(`build: ${f} has a non-ASCII character at ${where} (V8 would hold the file at two bytes a character): escape it in the source`)
  }
  // The chunks of the last build that this one no longer has (their names carry a content hash).
  for (const f of Array.isArray(previous) ? previous : []) {
    if (!outputs.includes(f) && basename(f) === f) rmSync(join(outdir, f), { force: true })
  }
  // Inputs are relative to ROOT; a file added to src/ shows up through an edited importer.
  const files = Object.keys(result.metafile.inputs).filter((f) => existsSync(resolve(ROOT, f)))
  // What the migrated template is made of: the migrations and the sources they import.
  const migrationInputs = new Set()
  const visit = (f) => {
    if (migrationInputs.has(f) || !f.startsWith("src/")) return
    migrationInputs.add(f)
    for (const i of result.metafile.inputs[f]?.imports ?? []) visit(i.path)
  }
  visit("src/layers/migrations/Migrations.ts")
  writeFileSync(record, JSON.stringify({ version: pkg.version, startedAt, files, outputs, migrationInputs: [...migrationInputs].sort() }))
}

// The migrated embedded database a new DATA_DIR starts from (src/layers/infra/EmbeddedTemplate.ts):
// a fresh clone's first start skips initdb and every migration (~7 s on 2 cores). Rebuilt (~8 s) only
// when what it is made of changed: the migrations and their imports, PGlite's and effect's versions
// (a key beside it); a start with an older template or none migrates what is missing, as before.
const template = join(outdir, "pglite-migrated")
const templateKeyFile = `${template}.key`
const templateKey = (() => {
  const hash = createHash("sha256")
  for (const f of readRecord()?.migrationInputs ?? []) hash.update(`${f}\0`).update(readFileSync(resolve(ROOT, f)))
  for (const p of ["@electric-sql/pglite", "effect", "@effect/sql-pg"]) {
    hash.update(`${p}@${JSON.parse(readFileSync(join(ROOT, "node_modules", p, "package.json"), "utf8")).version}\0`)
  }
  return hash.digest("hex")
})()
const keyOf = () => {
  try {
    return readFileSync(templateKeyFile, "utf8")
  } catch {
    return undefined
  }
}
if (!existsSync(join(template, "PG_VERSION")) || keyOf() !== templateKey) {
  const began = Date.now()
  execFileSync(process.execPath, [join(outdir, "template.mjs"), template], { stdio: "inherit" })
  writeFileSync(templateKeyFile, templateKey)
  if (process.env.BUILD_VERBOSE === "1") console.error(`build: ${template} in ${Date.now() - began} ms`)
}

// The control panel's browser bundle (src/panel → <outdir>/panel), skipped when current.
const { buildPanel } = await import("./build-panel.mjs")
await buildPanel({ outdir: join(outdir, "panel") })
