/**
 * The clean-up the process tests share (ChildProcesses.ts): the whole group is killed (a grandchild
 * too, as the server behind an `npm start`), each process is awaited, then folders are removed and
 * the other clean-ups run, latest first; everything is forgotten once cleaned.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { childProcesses } from "./ChildProcesses.ts"

/** Running: signal 0 reaches it and (on Linux) it is not a zombie waiting for a reaper that may never come in a container. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return !existsSync("/proc/self")
  }
}

/** A node process that starts a grandchild in its group, prints its pid, and waits forever. */
const PARENT = `
const { spawn } = require("node:child_process")
const grandchild = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
process.stdout.write(String(grandchild.pid) + "\\n")
process.stderr.write("ready\\n")
setInterval(() => {}, 1000)
`

describe("childProcesses", () => {
  it("cleanUp kills the whole group, awaits it, then removes folders and runs clean-ups latest first", async () => {
    const processes = childProcesses()
    const dir = processes.tempDir("child-processes-test-")
    const order: Array<string> = []
    processes.onCleanUp(() => void order.push(`first (dir there: ${existsSync(dir)})`))
    processes.onCleanUp(async () => void order.push("second"))
    const run = processes.spawn(process.execPath, ["-e", PARENT], { cwd: process.cwd(), env: process.env })
    // The grandchild's pid and the "ready" line, once both arrived: they come on two pipes, so one can
    // be read before the other (CI once saw stdout's line with stderr still empty).
    const printed = () => run.output().stdout.includes("\n") && run.output().stderr.includes("\n")
    for (let i = 0; i < 500 && !printed() && run.child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 20))
    const grandchild = Number(run.output().stdout.trim())
    assert.isTrue(Number.isInteger(grandchild) && alive(grandchild), run.output().all)
    assert.include(run.output().stderr, "ready")
    assert.include(run.output().all, "ready")
    assert.isTrue(existsSync(dir))

    await processes.cleanUp()
    // Awaited: the leader has exited by SIGKILL when cleanUp returns.
    assert.strictEqual(run.child.signalCode, "SIGKILL")
    assert.deepStrictEqual(await run.exited, { code: null, signal: "SIGKILL" })
    // The grandchild got the same signal; it is not this process's child, so nothing here awaits it: poll.
    for (let i = 0; i < 500 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 20))
    assert.isFalse(alive(grandchild), "the grandchild was killed with its group")
    assert.isFalse(existsSync(dir))
    // The latest registered first; the folder (registered before both) last.
    assert.deepStrictEqual(order, ["second", "first (dir there: true)"])

    // Forgotten: a second clean-up runs nothing again.
    await processes.cleanUp()
    assert.strictEqual(order.length, 2)
  })
})
