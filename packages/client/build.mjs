// Builds the publishable @bot-module-gateway/client into packages/client/dist from the sources of
// truth, src/http/client.ts → Api.ts, Middleware.ts, src/domain/*: esbuild bundles the JavaScript
// (ESM, `effect` left external), TypeScript writes the declarations. The package's version and its
// `effect` pin are read from the root package.json, so the version lives in one place.
//   node packages/client/build.mjs   (npm run build:client)   →   npm pack ./packages/client/dist
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = resolve(HERE, "../..")
const OUT = join(HERE, "dist")
const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
const workspace = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"))

const effect = root.dependencies.effect
if (workspace.dependencies?.effect !== effect) {
  throw new Error(`packages/client/package.json pins effect ${workspace.dependencies?.effect}; the root pins ${effect}: make them equal`)
}

rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })

await build({
  entryPoints: [join(ROOT, "src/http/client.ts")],
  outfile: join(OUT, "index.js"),
  bundle: true,
  // Only `effect` is imported; anything else reaching the bundle would be a dependency the package does not declare.
  external: ["effect", "effect/*"],
  format: "esm",
  platform: "neutral",
  target: "es2022",
  sourcemap: true,
  sourcesContent: true,
  legalComments: "none",
  logLevel: "warning",
  absWorkingDir: ROOT,
  metafile: true
}).then(({ metafile }) => {
  const stray = Object.keys(metafile.inputs).filter((f) => !f.startsWith("src/"))
  if (stray.length > 0) throw new Error(`the client bundle reaches outside src/: ${stray.join(", ")}`)
  const imports = Object.values(metafile.outputs).flatMap((o) => o.imports.map((i) => i.path))
  const foreign = imports.filter((p) => p !== "effect" && !p.startsWith("effect/"))
  if (foreign.length > 0) throw new Error(`the client imports more than effect: ${[...new Set(foreign)].join(", ")}`)
})

// Declarations: TypeScript (7, tsgo) from the same sources, then `./x.ts` specifiers → `./x.js`.
const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc")
try {
  execFileSync(process.execPath, [tsc, "-p", join(HERE, "tsconfig.build.json")], { cwd: HERE, stdio: "pipe" })
} catch (e) {
  throw new Error(`declaration build failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`)
}
const types = join(OUT, "types")
const walk = (dir) => readdirSync(dir).flatMap((f) => statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)])
for (const file of walk(types)) {
  const text = readFileSync(file, "utf8")
  writeFileSync(file, text.replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g, "$1$2.js$3"))
}
writeFileSync(join(OUT, "index.d.ts"), `export * from "./types/http/client.js"\n`)

const manifest = {
  name: workspace.name,
  version: root.version,
  description: "Typed Effect client of the Bot Module Configuration Gateway: the HttpApi contract, its schemas, branded ids and error classes, and makeClient.",
  license: root.license ?? "MIT",
  type: "module",
  sideEffects: false,
  exports: { ".": { types: "./index.d.ts", default: "./index.js" }, "./package.json": "./package.json" },
  main: "./index.js",
  types: "./index.d.ts",
  files: ["index.js", "index.js.map", "index.d.ts", "types", "README.md", "LICENSE"],
  engines: root.engines,
  dependencies: { effect },
  keywords: ["effect", "http-api", "client", "discord", "bot"]
}
writeFileSync(join(OUT, "package.json"), JSON.stringify(manifest, null, 2) + "\n")
copyFileSync(join(HERE, "README.md"), join(OUT, "README.md"))
if (existsSync(join(ROOT, "LICENSE"))) copyFileSync(join(ROOT, "LICENSE"), join(OUT, "LICENSE"))
console.log(`built ${manifest.name}@${manifest.version} in ${OUT}`)
