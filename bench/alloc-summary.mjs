// Summarises a profile written by bench/alloc-sampler.mjs: bytes allocated per request, then the
// top allocating functions (self: the function that allocated; inclusive: everything allocated
// under it), source-mapped like bench/profile-summary.mjs.
// Usage: node bench/alloc-summary.mjs <alloc-….json> [topN] [filter for the inclusive list]
import { readFileSync } from "node:fs"
import { frameLabel, printTables } from "./frames.mjs"

const [file, topArg, filter] = process.argv.slice(2)
const top = Number(topArg ?? 30)
const { requests, seconds, profile } = JSON.parse(readFileSync(file, "utf8"))

const label = frameLabel

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
printTables({ self, incl, top, filter, show: perRequest })
