// What a server allocates per request (issue #16: "the allocation profile of one request"), preloaded
// into a bench process: `BENCH_GATEWAY_NODE_ARGS="--import ./bench/alloc-sampler.mjs"` (or
// BENCH_FLOOR_NODE_ARGS for the floors). The first SIGUSR2 starts V8's sampling heap profiler, with
// the objects that the young and old generation collections free kept in the profile (all that
// was allocated, not what stays alive), and starts counting the HTTP requests the process receives;
// the second stops both and writes `{ requests, seconds, profile }` to
// `$ALLOC_PROFILE_DIR/alloc-<pid>-<n>.json` (default /tmp). `bench/alloc-summary.mjs` reads it.
// ALLOC_SAMPLING_INTERVAL: the mean bytes between two samples (default 1024; V8's own is 32768).
import { Server } from "node:http"
import { Session } from "node:inspector"
import { writeFileSync } from "node:fs"
import { join } from "node:path"

const dir = process.env.ALLOC_PROFILE_DIR ?? "/tmp"
const interval = Number(process.env.ALLOC_SAMPLING_INTERVAL ?? 1024)
const session = new Session()
session.connect()
session.post("HeapProfiler.enable")

let sampling = false
let requests = 0
let started = 0
let n = 0
const emit = Server.prototype.emit
Server.prototype.emit = function(event, ...args) {
  if (sampling && event === "request") requests += 1
  return emit.call(this, event, ...args)
}

process.on("SIGUSR2", () => {
  if (!sampling) {
    session.post("HeapProfiler.startSampling", {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true
    })
    requests = 0
    started = performance.now()
    sampling = true
    return
  }
  sampling = false
  const seconds = (performance.now() - started) / 1000
  // The main thread's session answers synchronously.
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error) return void console.error("alloc-sampler:", error.message)
    const file = join(dir, `alloc-${process.pid}-${++n}.json`)
    writeFileSync(file, JSON.stringify({ requests, seconds, interval, profile: result.profile }))
    console.error(`alloc-sampler: ${requests} requests in ${seconds.toFixed(1)} s -> ${file}`)
  })
})
