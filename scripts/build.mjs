// Bundles the server and the CLI with esbuild so `npm start` works on Node 20 (which cannot run
// .ts) and starts fast. PGlite stays external: it loads its WebAssembly files from its package.
import { build } from "esbuild"

await build({
  entryPoints: { main: "src/main.ts", cli: "src/cli.ts" },
  outdir: process.env.BUILD_OUTDIR ?? "dist",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  external: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "redis", "@redis/*"],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
})
