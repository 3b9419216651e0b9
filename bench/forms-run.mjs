// bench/run.mjs's side of S11: runs bench/forms.mjs in a process of its own (its own gateway and
// database) and formats its result for the table.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./forms.mjs", import.meta.url))

/** The result of `node bench/forms.mjs [--quick]`; its progress lines go to our stderr. */
export const runForms = (quick) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...(quick ? ["--quick"] : [])], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.once("exit", (code) => {
      try {
        resolve(JSON.parse(out.trim().split("\n").pop()))
      } catch {
        reject(new Error(`bench/forms.mjs exited ${code} without a result`))
      }
    })
  })

const fmt = (x, w) => String(x ?? "–").padStart(w)

/** The table's lines in run.mjs's layout (p50/p99 in ms). */
export const formsLines = (r) => [
  `${"S11".padEnd(4)} ${`${r.members} members × 3 pages, interactions`.padEnd(38)} ${fmt("", 8)} ${fmt(r.answer_p50_ms, 8)} ${fmt(r.answer_p99_ms, 8)} ${fmt("", 12)} ${fmt(r.failed, 7)}  ${r.answers} answers in ${r.fill_seconds} s (goal p99 ≤ 300 ms; ${r.connections ?? "cold"} connections); S8's polling meanwhile ${r.polls_per_s_meanwhile ?? "?"} polls/s over ${r.s8_sources} sources; load ${r.load1.min}–${r.load1.max}`,
  `${"S11".padEnd(4)} ${"review message after the last page".padEnd(38)} ${fmt("", 8)} ${fmt(r.review_p50_ms, 8)} ${fmt(r.review_p99_ms, 8)} ${fmt("", 12)} ${fmt(r.members - r.review_messages, 7)}  ${r.review_messages} of ${r.members} posted (goal p99 ≤ 2,000 ms)`
]

/** What fails the run: a failed answer, a missing review message. */
export const formsFailures = (r) => [
  ...(r.failed > 0 ? [`S11: ${r.failed} interaction answers failed (${r.failures.join(" | ")})`] : []),
  ...(r.review_messages < r.members ? [`S11: ${r.members - r.review_messages} review messages missing`] : [])
]
