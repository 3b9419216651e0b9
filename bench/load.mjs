// One load window in its own process (so the load generator never shares a core's event loop with
// the orchestrator): autocannon warm-up, then the measured window. Input: a JSON argument
// { url, method, headers, body, bodies, connections, warmupSeconds, seconds, pid }. Output: one JSON line
// { rps, p50_ms, p99_ms, requests, non2xx, errors, timeouts, cpu_ms, cpu_us_per_req } on stdout.
// `pid`: the server's process, whose CPU (utime + stime of /proc/<pid>/stat) over the measured window
// gives cpu_ms and cpu_us_per_req (null without /proc or pid). Steadier than rates on a busy machine.
import autocannon from "autocannon"
import { readFileSync } from "node:fs"

const spec = JSON.parse(process.argv[2])

const run = (seconds) =>
  new Promise((resolve, reject) => {
    const opts = {
      url: spec.url,
      method: spec.method ?? "GET",
      headers: spec.headers ?? {},
      connections: spec.connections ?? 50,
      pipelining: 1,
      duration: seconds,
      timeout: 10
    }
    if (spec.body !== undefined) opts.body = spec.body
    // BENCH_RATE: a fixed overall request rate (compare CPU per request of two builds on a busy machine).
    if (process.env.BENCH_RATE !== undefined) opts.overallRate = Number(process.env.BENCH_RATE)
    // Several request shapes (e.g. audit pages) cycled per connection.
    if (spec.paths !== undefined) {
      opts.requests = spec.paths.map((path) => ({ method: opts.method, path, headers: opts.headers }))
    }
    const instance = autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)))
    instance.on("error", () => {})
  })

// CPU time of a process in ms (utime + stime, in clock ticks of 10 ms on Linux).
const TICK_MS = 10
const cpuMs = (pid) => {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS
  } catch {
    return undefined
  }
}

if ((spec.warmupSeconds ?? 0) > 0) await run(spec.warmupSeconds)
const cpuBefore = cpuMs(spec.pid)
const r = await run(spec.seconds ?? 5)
const cpuAfter = cpuMs(spec.pid)
const seconds = r.duration > 0 ? r.duration : spec.seconds
const cpu = cpuBefore === undefined || cpuAfter === undefined ? null : cpuAfter - cpuBefore
process.stdout.write(
  JSON.stringify({
    rps: Math.round(r.requests.total / seconds),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    cpu_ms: cpu,
    cpu_us_per_req: cpu === null || r.requests.total === 0 ? null : Math.round((cpu * 1000) / r.requests.total)
  }) + "\n"
)
