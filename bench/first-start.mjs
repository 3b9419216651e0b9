// A fresh clone's first start, after the build: an empty DATA_DIR, `node <npm start's flags> dist/main.mjs`,
// timed from spawn to the first GET /readyz 200 (polled every 25 ms), then SIGTERM. Prints the time
// and, with --log, the start's log lines with their offsets (where the seconds go).
// --compare: each round also starts without the build's migrated template (dist/pglite-migrated moved
// aside for that run), so both are measured under the same load.
// Usage: node bench/first-start.mjs [--runs 3] [--compare] [--keep-data] [--log]
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve, dirname } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name)
  return i < 0 ? fallback : process.argv[i + 1]
}
const runs = Number(arg("--runs", "1"))
const showLog = process.argv.includes("--log")
const flags = ["--max-semi-space-size=16", "--heap-growing-percent=50", "--no-concurrent-recompilation", "--liftoff-only"]

const freePort = () => new Promise((ok) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address()
    s.close(() => ok(port))
  })
})

const once = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "first-start-"))
  const port = await freePort()
  const started = performance.now()
  const lines = []
  const child = spawn(process.execPath, [...flags, join(ROOT, "dist/main.mjs")], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: join(dataDir, ".data"), PORT: String(port), DATABASE_URL: "", REDIS_URL: "", LOG_FORMAT: "json" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const collect = (chunk) => {
    for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(`${((performance.now() - started) / 1000).toFixed(2)} s  ${line.slice(0, 160)}`)
  }
  child.stdout.on("data", collect)
  child.stderr.on("data", collect)
  let exited = false
  child.once("exit", () => { exited = true })
  let ready
  while (!exited && performance.now() - started < 60_000) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`)
      if (res.status === 200) {
        ready = performance.now() - started
        break
      }
    } catch {
      // not listening yet
    }
    await new Promise((ok) => setTimeout(ok, 25))
  }
  child.kill("SIGTERM")
  await new Promise((ok) => exited ? ok() : child.once("exit", ok))
  if (!process.argv.includes("--keep-data")) rmSync(dataDir, { recursive: true, force: true })
  if (showLog || ready === undefined) console.log(lines.join("\n"))
  return ready
}

const template = join(ROOT, "dist/pglite-migrated")
const aside = `${template}.aside`
const withoutTemplate = async () => {
  if (!existsSync(template)) throw new Error("no dist/pglite-migrated: run the build first")
  renameSync(template, aside)
  try {
    return await once()
  } finally {
    renameSync(aside, template)
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const times = { template: [], none: [] }
for (let i = 0; i < runs; i++) {
  const pair = process.argv.includes("--compare") ? [["none", withoutTemplate], ["template", once]] : [["template", once]]
  for (const [label, start] of pair) {
    const ms = await start()
    if (ms === undefined) {
      console.error("never ready")
      process.exit(1)
    }
    times[label].push(ms)
    console.log(`round ${i + 1}, ${label === "none" ? "migrating (no template)" : "as built"}: ready in ${(ms / 1000).toFixed(2)} s`)
  }
}
for (const [label, xs] of Object.entries(times)) {
  if (xs.length > 0) console.log(`median ${label === "none" ? "migrating (no template)" : "as built"}: ${(median(xs) / 1000).toFixed(2)} s over ${xs.length} run(s)`)
}
