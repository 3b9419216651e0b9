// Bundles the server and the CLI with esbuild so `npm start` works on Node 20 (which cannot run
// .ts) and starts fast. PGlite stays external: it loads its WebAssembly files from its package.
// The build is skipped when the bundle is current: every file esbuild read last time (recorded in
// <outdir>/.build-inputs.json), this script, package.json and package-lock.json are older than the
// start of that build, and the outputs are there. `node scripts/build.mjs --force` (or BUILD_FORCE=1) always builds.
import { build } from "esbuild"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const outdir = resolve(ROOT, process.env.BUILD_OUTDIR ?? "dist")
const outputs = ["main.mjs", "cli.mjs"].map((f) => join(outdir, f))
const record = join(outdir, ".build-inputs.json")
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
  if (!existsSync(record) || outputs.some((f) => !existsSync(f))) return false
  let inputs
  try {
    inputs = JSON.parse(readFileSync(record, "utf8"))
  } catch {
    return false
  }
  if (inputs.version !== pkg.version || !Array.isArray(inputs.files) || typeof inputs.startedAt !== "number") return false
  // Compared with the time the last build started: a file saved while it ran is newer.
  const built = inputs.startedAt
  const sources = [fileURLToPath(import.meta.url), join(ROOT, "package.json"), join(ROOT, "package-lock.json"), ...inputs.files.map((f) => resolve(ROOT, f))]
  return sources.every((f) => mtime(f) < built)
}

if (current()) {
  if (process.env.BUILD_VERBOSE === "1") console.error(`build: ${outdir} is current`)
} else {
  const startedAt = Date.now()
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: "src/main.ts", cli: "src/cli.ts" },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    // V8 keeps a script's source text in the heap for as long as it runs, at two bytes a character
    // once one character is outside Latin-1 (a few in the bundled libraries' comments are): ASCII
    // output without comments and indentation takes the live heap's source text from 18.8 to ~7.5
    // MiB. Names are kept (no identifier minification), and the source map still gives stack traces.
    minifyWhitespace: true,
    charset: "ascii",
    legalComments: "none",
    logLevel: "warning",
    metafile: true,
    // The version lives in package.json only; the bundles read it from here.
    define: { __GATEWAY_VERSION__: JSON.stringify(pkg.version) },
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "redis", "@redis/*"],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
  })
  // Inputs are relative to ROOT; a file added to src/ shows up through an edited importer.
  const files = Object.keys(result.metafile.inputs).filter((f) => existsSync(resolve(ROOT, f)))
  writeFileSync(record, JSON.stringify({ version: pkg.version, startedAt, files }))
}

// The control panel's browser bundle (src/panel → <outdir>/panel), skipped when current.
const { buildPanel } = await import("./build-panel.mjs")
await buildPanel({ outdir: join(outdir, "panel") })
