// One load window in its own process (so the load generator never shares a core's event loop with
// the orchestrator): autocannon warm-up, then the measured window. Input: a JSON argument
// { url, method, headers, body, bodies, connections, warmupSeconds, seconds }. Output: one JSON line
// { rps, p50_ms, p99_ms, requests, non2xx, errors, timeouts } on stdout.
import autocannon from "autocannon"

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

if ((spec.warmupSeconds ?? 0) > 0) await run(spec.warmupSeconds)
const r = await run(spec.seconds ?? 5)
const seconds = r.duration > 0 ? r.duration : spec.seconds
process.stdout.write(
  JSON.stringify({
    rps: Math.round(r.requests.total / seconds),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts
  }) + "\n"
)
