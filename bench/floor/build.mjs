// Bundles bench/floor/server.ts (it imports the gateway's middleware from src/) with esbuild, as
// scripts/build.mjs bundles the gateway, so the floor runs on Node 20 too.
// `node bench/floor/build.mjs <out.mjs>` or `buildFloor(outfile)` from bench/run.mjs (which builds it
// into <tmpdir>/gateway-bench-floor/floor.mjs on every run, from the src/ of the checkout).
import { build } from "esbuild"
import { fileURLToPath } from "node:url"
import { serverBundleOptions } from "../../scripts/bundle-options.mjs"

const root = fileURLToPath(new URL("../..", import.meta.url))

export const buildFloor = async (outfile) => {
  await build({
    absWorkingDir: root,
    entryPoints: ["bench/floor/server.ts"],
    outfile,
    ...serverBundleOptions,
    define: { __GATEWAY_VERSION__: JSON.stringify("bench-floor") }
  })
  return outfile
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildFloor(process.argv[2] ?? "/tmp/floor.mjs")
}
