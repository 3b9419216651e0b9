// One load window in its own process (so the load generator never shares a core's event loop with
// the orchestrator): autocannon warm-up, then the measured window. Input: a JSON argument
// { url, method, headers, body, bodies, connections, warmupSeconds, seconds, pid, postgres }. Output: one JSON
// line { rps, p50_ms, p99_ms, requests, non2xx, errors, timeouts, cpu_ms, cpu_us_per_req, db_cpu_us_per_req }.
// `pid`: the server's process, whose CPU (utime + stime of /proc/<pid>/stat) over the measured window
// gives cpu_ms and cpu_us_per_req (null without /proc or pid). Steadier than rates on a busy machine.
// `postgres`: also the local PostgreSQL server's CPU per request (db_cpu_us_per_req; null without one).
import autocannon from "autocannon"
import { readdirSync, readFileSync } from "node:fs"

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

// A process's command name and the fields after it (the name may hold spaces), from field 3 on:
// utime is 14, stime 15, the reaped children's cutime 16 and cstime 17, in clock ticks of 10 ms.
const TICK_MS = 10
const procStat = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  return { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), fields: stat.slice(stat.lastIndexOf(")") + 2).split(" ") }
}
// CPU time of a process in ms (utime + stime).
const cpuMs = (pid) => {
  if (pid === undefined) return undefined
  try {
    const { fields } = procStat(pid)
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS
  } catch {
    return undefined
  }
}

/**
 * CPU time in ms of the PostgreSQL server on this machine: every process named `postgres`, with the
 * CPU of the children each has reaped (a backend that exits mid-window moves its time to the
 * postmaster's). The whole server, so its background writers count too; other databases are idle
 * during a window. Undefined without /proc or a local server (PGlite runs inside the gateway).
 */
const postgresCpuMs = () => {
  let total = 0
  let found = false
  let pids
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d))
  } catch {
    return undefined
  }
  for (const pid of pids) {
    try {
      const { name, fields } = procStat(pid)
      if (name !== "postgres") continue
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * TICK_MS
      found = true
    } catch {
      // gone meanwhile
    }
  }
  return found ? total : undefined
}

if ((spec.warmupSeconds ?? 0) > 0) await run(spec.warmupSeconds)
const cpuBefore = cpuMs(spec.pid)
const dbBefore = spec.postgres ? postgresCpuMs() : undefined
const r = await run(spec.seconds ?? 5)
const cpuAfter = cpuMs(spec.pid)
const dbAfter = spec.postgres ? postgresCpuMs() : undefined
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
    cpu_us_per_req: cpu === null || r.requests.total === 0 ? null : Math.round((cpu * 1000) / r.requests.total),
    db_cpu_us_per_req: dbBefore === undefined || dbAfter === undefined || r.requests.total === 0
      ? null
      : Math.round(((dbAfter - dbBefore) * 1000) / r.requests.total)
  }) + "\n"
)
