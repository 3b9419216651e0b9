// bench/run.mjs's side of S8–S10: runs bench/delivery.mjs in a process of its own (it starts its own
// API and workers on its own database) and formats its result for the table.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./delivery.mjs", import.meta.url))

/** The result of `node bench/delivery.mjs [--quick]`; its progress lines go to our stderr. */
export const runDelivery = (quick) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...(quick ? ["--quick"] : [])], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.once("exit", (code) => {
      const last = out.trim().split("\n").pop()
      let result
      try {
        result = JSON.parse(last)
      } catch {
        return reject(new Error(`bench/delivery.mjs exited ${code} without a result`))
      }
      resolve(result)
    })
  })

const fmt = (x, w) => String(x ?? "–").padStart(w)

/** Table lines in run.mjs's layout (rps = polls/s or messages/s, p50/p99 = latency beyond the poll wait). */
export const deliveryLines = (r) => {
  const s8 = r.S8
  const w = s8.workers[0]
  const p10 = r.S10.polls
  const pct = (xs) => xs.map((x) => `${Math.round(x * 100)} %`).join(" / ")
  const row = (name, what, rate, p50, p99, errors, other) =>
    `${name.padEnd(4)} ${what.padEnd(38)} ${fmt(rate, 8)} ${fmt(p50, 8)} ${fmt(p99, 8)} ${fmt("", 12)} ${fmt(errors, 7)}  ${other}`
  const posts = (name, what, d, shares) =>
    row(name, what, d.messages_per_s, d.beyond_wait_p50_ms, d.beyond_wait_p99_ms, d.missing + d.duplicates + d.unexpected,
      `msg/s (${d.posting_per_s} while posting); ms beyond the poll wait; ${d.duplicates} duplicates${shares ? `; poll shares ${pct(d.share)}` : ""}`)
  const steady = `${r.settings.steady_rate}/s`
  return [
    row("S8", `polls, ${r.settings.s8_feeds} feeds / ${r.settings.s8_sources} sources (304)`, s8.polls_per_s, "", "", w.polls_other,
      `polls/s; worker CPU ${w.cpu_ms_per_poll} ms/poll (+ PostgreSQL ${s8.postgres_cpu_ms_per_poll ?? "?"}, sandbox ${s8.api_cpu_ms_per_poll}); ${s8.due_at_end} polls overdue at the end`),
    posts("S9", `${r.S9.items} items at once, ${r.S9.feeds} feeds, 1 worker`, r.S9, false),
    posts("S9", `${r.S9_steady.items} items at ${steady}, 1 worker`, r.S9_steady, false),
    row("S10", "S8's polls, 2 workers", p10.polls_per_s, "", "", p10.workers.reduce((a, x) => a + x.polls_other, 0),
      `polls/s; shares ${pct(p10.share)}; CPU ${p10.workers.map((x) => x.cpu_ms_per_poll).join(" / ")} ms/poll`),
    posts("S10", `${r.S10.delivery.items} items at once, 2 workers`, r.S10.delivery, true),
    posts("S10", `${r.S10.steady.items} items at ${steady}, 2 workers`, r.S10.steady, true),
    row("", "worker RSS after S8–S10", "", "", "", "", `${r.worker_rss_mib.join(" / ")} MiB; load average ${r.load1.min}–${r.load1.max} during S8–S10`)
  ]
}
