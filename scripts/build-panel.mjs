// Bundles the control panel (src/panel) for browsers with esbuild: dist/panel/app.js and app.css,
// minified, no CDN. The server (src/http/server/PanelPage.ts) reads them, hashes them into their URLs and
// compresses them. Skipped when current, like scripts/build.mjs (`--force` or BUILD_FORCE=1 builds).
// Run by scripts/build.mjs, so `npm start` builds it; the panel's tests run it too.
import { build } from "esbuild"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")

const mtime = (file) => {
  try {
    return statSync(file).mtimeMs
  } catch {
    return Infinity
  }
}

/** Builds the panel into `outdir` (default dist/panel) unless it is current; returns the directory. */
export const buildPanel = async ({ outdir = resolve(ROOT, process.env.BUILD_OUTDIR ?? "dist", "panel"), force = false } = {}) => {
  const record = join(outdir, ".build-inputs.json")
  const outputs = ["app.js", "app.css"].map((f) => join(outdir, f))
  const current = () => {
    if (force || process.argv.includes("--force") || process.env.BUILD_FORCE === "1") return false
    if (!existsSync(record) || outputs.some((f) => !existsSync(f))) return false
    try {
      const inputs = JSON.parse(readFileSync(record, "utf8"))
      const sources = [fileURLToPath(import.meta.url), join(ROOT, "package-lock.json"), ...inputs.files.map((f) => resolve(ROOT, f))]
      return sources.every((f) => mtime(f) < inputs.startedAt)
    } catch {
      return false
    }
  }
  if (current()) return outdir
  const startedAt = Date.now()
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [{ in: "src/panel/main.ts", out: "app" }, { in: "src/panel/app.css", out: "app" }],
    outdir,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: ["es2022", "chrome111", "firefox115", "safari16"],
    minify: true,
    legalComments: "none",
    sourcemap: false,
    logLevel: "warning",
    metafile: true
  })
  const files = Object.keys(result.metafile.inputs).filter((f) => existsSync(resolve(ROOT, f)))
  writeFileSync(record, JSON.stringify({ startedAt, files }))
  return outdir
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildPanel()
