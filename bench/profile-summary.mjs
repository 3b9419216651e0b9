// Summarises a .cpuprofile (node --cpu-prof): top functions by self time, and by inclusive time for
// names matching an optional filter. Usage: node bench/profile-summary.mjs <file> [topN] [filter]
// (PROFILE_FROM, PROFILE_TO, PROFILE_BUSY, PROFILE_TIMELINE: below)
import { readFileSync } from "node:fs"
import { frameLabel, printTables } from "./frames.mjs"

const [file, topArg, filter] = process.argv.slice(2)
const top = Number(topArg ?? 40)
const prof = JSON.parse(readFileSync(file, "utf8"))
const byId = new Map(prof.nodes.map((n) => [n.id, n]))
// PROFILE_FROM / PROFILE_TO: only the samples between those seconds after the profile's start (one
// window of a process that served several, e.g. the gateway's S1 rounds). PROFILE_BUSY=1: only the
// seconds in which the main thread was busy more than 30 % of the time, without (idle): the load
// windows of a long-lived process, not its start-up or the waits between windows. PROFILE_TIMELINE=1:
// first the busy share of every 5 s (a warm-up shows as a busier start at the same request rate).
// Wall-clock samples: on a loaded machine a process preempted in a system call (writev waking the
// load generator) has that time counted to the call; `perf record -e cpu-clock` counts CPU only.
const from = Number(process.env.PROFILE_FROM ?? 0) * 1e6
const to = Number(process.env.PROFILE_TO ?? Infinity) * 1e6
const idleIds = new Set(prof.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id))
const at = []
for (let i = 0, t = 0; i < prof.samples.length; i++) at.push((t += prof.timeDeltas[i] ?? 0))
const busyPerSecond = new Map()
for (let i = 0; i < prof.samples.length; i++) {
  if (idleIds.has(prof.samples[i])) continue
  const s = Math.floor(at[i] / 1e6)
  busyPerSecond.set(s, (busyPerSecond.get(s) ?? 0) + (prof.timeDeltas[i + 1] ?? 0))
}
const busyOnly = process.env.PROFILE_BUSY === "1"
if (process.env.PROFILE_TIMELINE === "1") {
  const last = Math.floor((at[at.length - 1] ?? 0) / 1e6)
  const line = []
  for (let s = 0; s <= last; s += 5) {
    let busy = 0
    for (let k = s; k < s + 5; k++) busy += busyPerSecond.get(k) ?? 0
    line.push(`${s}s ${Math.round(busy / 5e4)}%`)
  }
  console.log(`busy share per 5 s: ${line.join(", ")}\n`)
}
const dt = new Map()
for (let i = 0; i < prof.samples.length; i++) {
  if (at[i] < from || at[i] > to) continue
  if (busyOnly && (idleIds.has(prof.samples[i]) || (busyPerSecond.get(Math.floor(at[i] / 1e6)) ?? 0) <= 0.3e6)) continue
  dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0))
}
const total = [...dt.values()].reduce((a, b) => a + b, 0)
const label = (n) => frameLabel(n.callFrame)
const self = new Map()
for (const n of prof.nodes) {
  const k = label(n)
  self.set(k, (self.get(k) ?? 0) + (dt.get(n.id) ?? 0))
}
// Inclusive: each sample's stack counted once per distinct label.
const parent = new Map()
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const incl = new Map()
for (const [id, t] of dt) {
  const seen = new Set()
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const k = label(byId.get(cur))
    if (!seen.has(k)) {
      seen.add(k)
      incl.set(k, (incl.get(k) ?? 0) + t)
    }
  }
}
const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`
console.log(`total ${(total / 1e6).toFixed(1)} s sampled`)
printTables({ self, incl, top, filter, show: pct })
