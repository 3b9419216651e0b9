// Summarises a profile written by bench/alloc-sampler.mjs: bytes allocated per request, then the
// top allocating functions (self: the function that allocated; inclusive: everything allocated
// under it), source-mapped like bench/profile-summary.mjs.
// Usage: node bench/alloc-summary.mjs <alloc-….json> [topN] [filter for the inclusive list]
import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

const [file, topArg, filter] = process.argv.slice(2)
const top = Number(topArg ?? 30)
const { requests, seconds, profile } = JSON.parse(readFileSync(file, "utf8"))

const maps = new Map()
const mapOf = (url) => {
  if (!maps.has(url)) {
    let map
    try {
      const path = url.startsWith("file:") ? fileURLToPath(url) : url
      if (existsSync(`${path}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, "utf8")))
    } catch {}
    maps.set(url, map)
  }
  return maps.get(url)
}
const label = (f) => {
  const entry = f.lineNumber >= 0 ? mapOf(f.url)?.findEntry(f.lineNumber, f.columnNumber) : undefined
  if (entry?.originalSource) {
    const src = entry.originalSource.replace(/^.*\/(node_modules\/|src\/)/, "$1")
    return `${f.functionName || "(anon)"} ${src}:${entry.originalLine + 1}`
  }
  const url = f.url.replace(/^.*\/(node_modules\/|dist\/|src\/)/, "$1")
  return `${f.functionName || "(anon)"} ${url}:${f.lineNumber + 1}`
}

// The profile is a tree; `selfSize` is V8's estimate of the bytes allocated at that node.
const self = new Map()
const incl = new Map()
let total = 0
const walk = (node, stack) => {
  const k = label(node.callFrame)
  const here = stack.includes(k) ? stack : [...stack, k]
  if (node.selfSize > 0) {
    total += node.selfSize
    self.set(k, (self.get(k) ?? 0) + node.selfSize)
    for (const s of here) incl.set(s, (incl.get(s) ?? 0) + node.selfSize)
  }
  for (const c of node.children ?? []) walk(c, here)
}
walk(profile.head, [])

const perRequest = (bytes) => `${Math.round(bytes / requests).toString().padStart(6)} B/req`
console.log(`${requests} requests in ${seconds.toFixed(1)} s; ${(total / 1024 / 1024).toFixed(1)} MiB allocated: ${perRequest(total)}`)
console.log("\n-- self --")
for (const [k, b] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(perRequest(b), k)
if (filter !== undefined) {
  console.log(`\n-- inclusive, matching /${filter}/ --`)
  const re = new RegExp(filter)
  for (const [k, b] of [...incl].filter(([k]) => re.test(k)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(perRequest(b), k)
}
const perFile = new Map()
for (const [k, b] of self) {
  const f = k.split(" ").slice(1).join(" ").replace(/:\d+$/, "")
  perFile.set(f, (perFile.get(f) ?? 0) + b)
}
console.log("\n-- self per file --")
for (const [k, b] of [...perFile].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(perRequest(b), k)
