// Bundles bench/floor/server.ts (it imports the gateway's middleware from src/) with esbuild, as
// scripts/build.mjs bundles the gateway, so the floor runs on Node 20 too.
// `node bench/floor/build.mjs <out.mjs>` or `buildFloor(outfile)` from bench/run.mjs (which builds it
// into <tmpdir>/gateway-bench-floor/floor.mjs on every run, from the src/ of the checkout).
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

export const buildFloor = async (outfile) => {
  await build({
    absWorkingDir: root,
    entryPoints: ["bench/floor/server.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // profile-summary.mjs maps the profile's frames back to src/ through it.
    sourcemap: true,
    // As scripts/build.mjs: the bundle's shape (and its heap) like the gateway's.
    minifyWhitespace: true,
    charset: "ascii",
    legalComments: "none",
    logLevel: "warning",
    define: { __GATEWAY_VERSION__: JSON.stringify("bench-floor") },
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "redis", "@redis/*"],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
  })
  return outfile
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildFloor(process.argv[2] ?? "/tmp/floor.mjs")
}
