// The V8 flags the gateway runs with, read from one place: the `start` script of package.json
// (`exec node <flags> dist/main.mjs`). The image's CMD carries the same flags (test/deploy checks);
// the benchmarks start their gateways and workers with them, so they measure what `npm start` runs.
// One script serves Node 20 and 24, and Node refuses a V8 flag its V8 lacks (exit 9, "bad option"):
// only flags both have (test/deploy/Packaging.test.ts runs them on the Node it runs on).
import { readFileSync } from "node:fs"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
const start = /\bexec node((?: --[\w-]+(?:=\S+)?)*) dist\/main\.mjs\b/.exec(pkg.scripts.start)
if (start === null) throw new Error("package.json: the start script is not `... exec node [flags] dist/main.mjs`")

/** e.g. ["--max-semi-space-size=16"] */
export const nodeFlags = start[1].split(" ").filter((flag) => flag !== "")
