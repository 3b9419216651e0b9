/**
 * What a newcomer's terminal shows at `npm start`: the bundle started as a process, once with stdout
 * a pipe (JSON lines, for a collector) and once on a pseudo-terminal through util-linux `script`
 * (readable lines). Both name `/docs`, `/sandbox`, the panel `/app` and the browser sign-in; the
 * gateway's own polls of the sandbox's twins are not logged at Info, while an API request is.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { freePort } from "../utils/TestApp.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import { cleanEnv, ROOT, sharedBundle, sleep, waitReady } from "./SpawnFixtures.ts"

const processes = childProcesses()
let OUT = ""
const hasScript = spawnSync("script", ["--version"]).status === 0

beforeAll(async () => {
  OUT = await sharedBundle()
}, 300_000)
afterAll(() => processes.cleanUp(), 30_000)

/** Every line it printed once the text appears (or the deadline passes). */
const waitForText = async (output: () => string, text: string, ms: number) => {
  const deadline = Date.now() + ms
  while (!output().includes(text) && Date.now() < deadline) await sleep(200)
  return output()
}

describe("the start-up log", () => {
  it("not on a terminal: JSON lines naming /docs, /app, /sandbox and the sign-in; sandbox polls below Info", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const env: NodeJS.ProcessEnv = cleanEnv({ PORT: String(port), LOG_LEVEL: "Info" })
    delete env.LOG_FORMAT
    const server = processes.spawn(process.execPath, [join(OUT, "main.mjs")], { cwd: ROOT, env })
    await waitReady(url, server, 90_000, { "user-agent": "startup-log-test" })
    // One request of each kind: a twin the pollers call, and the API.
    assert.strictEqual((await fetch(`${url}/sandbox/rss/news.xml`, { headers: { "user-agent": "startup-log-test" } })).status, 200)
    assert.strictEqual((await fetch(`${url}/healthz`, { headers: { "user-agent": "startup-log-test" } })).status, 200)
    const stdout = await waitForText(() => server.output().stdout, '"path":"/healthz"', 10_000)
    const lines = stdout.split("\n").filter((l) => l.trim() !== "")
    const messages = lines.map((l) => (JSON.parse(l) as { message: unknown }).message)
    assert.include(messages, `sandbox mode: the chat platform, sources and task board are served at ${url}/sandbox`)
    assert.include(messages, `ROLE=all: public URL ${url}; interactive docs at ${url}/docs; control panel at ${url}/app`)
    assert.include(messages, `sign in from a browser: ${url}/auth/idp/login?redirect_uri=${url}/sandbox/callback`)
    assert.isTrue(lines.some((l) => l.includes('"path":"/healthz"')), "the API request is logged at Info")
    assert.isFalse(lines.some((l) => l.includes("/sandbox/rss/news.xml")), "a twin's request is not logged at Info")
  }, 120_000)

  it.runIf(hasScript)("on a terminal: readable lines, not JSON (LOG_FORMAT unset)", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const env: NodeJS.ProcessEnv = cleanEnv({ PORT: String(port), LOG_LEVEL: "Info" })
    delete env.LOG_FORMAT
    // `script` runs the command on a pseudo-terminal and copies what it prints to its own stdout.
    const command = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(OUT, "main.mjs"))}`
    const server = processes.spawn("script", ["-qfec", command, "/dev/null"], { cwd: ROOT, env })
    await waitReady(url, server, 90_000, { "user-agent": "startup-log-test" })
    const stdout = await waitForText(() => server.output().stdout, "control panel at", 10_000)
    const line = stdout.split(/\r?\n/).find((l) => l.includes("control panel at"))
    assert.isDefined(line, stdout)
    assert.notMatch(line!.trim(), /^\{/, "not a JSON object")
    assert.include(line!, `${url}/app`)
    assert.include(line!, "INFO")
  }, 120_000)
})
