/**
 * ROLE as an operator runs it (delivery.md §6), the bundled server in a child process on the
 * embedded database: `worker` serves only the probes on PORT (404 on /api, /auth, /docs) and exits
 * 0 on SIGTERM; `api` serves the API and runs no job worker (a new feed's first poll is sent, never
 * processed: its source is not fetched, its status stays never-polled); a bad ROLE stops start-up
 * with one line naming ROLE.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { join } from "node:path"
import { ALICE_ID, BOT2_ID, channelId, S1_ID } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { childProcesses } from "../utils/ChildProcesses.ts"
import type { Run } from "../utils/ChildProcesses.ts"
import { freePort } from "../utils/TestApp.ts"
import { ROOT, sharedBundle, sleep, waitReady as waitUntilReady, within } from "./SpawnFixtures.ts"

let OUT = ""
const UA = { "user-agent": "roles-test" }
const CLIENT_REDIRECT = "http://127.0.0.1/callback"
/** Start-up on the embedded database takes seconds alone, minutes on a loaded 2-core machine. */
const READY_MS = 150_000

const processes = childProcesses()

/** The bundle in a child process: sandbox mode, embedded database, nothing inherited that would change that. */
const start = (extra: Record<string, string>) => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "ALLOWED_REDIRECT_URIS", "ROLE"]) {
    delete env[name]
  }
  for (const name of Object.keys(env)) if (name.startsWith("FEED_")) delete env[name]
  const dataDir = processes.tempDir("gateway-roles-")
  return processes.spawn(process.execPath, [join(OUT, "main.mjs")], { cwd: ROOT, env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: "Warn", ...extra } })
}

const waitReady = (url: string, server: Run, timeoutMs: number) => waitUntilReady(url, server, timeoutMs, UA)

/** SIGTERM: exit 0, and nothing failed on the way down (workers drained before the engine, the engine stopped before the database). */
const stop = async (server: Run) => {
  server.child.kill("SIGTERM")
  const exit = await within(20_000, server.exited)
  const { stdout, stderr } = server.output()
  assert.deepStrictEqual(exit, { code: 0, signal: null }, `stderr:\n${stderr}`)
  const bad = stdout.split("\n").filter((l) => l.includes(`"level":"ERROR"`) || l.includes("did not stop cleanly"))
  assert.deepStrictEqual(bad, [], stdout)
}

/** The sandbox sign-in of a seeded user, as a client does it: login → authorize → callback → token. */
const signIn = async (url: string, userId: string): Promise<string> => {
  const login = await fetch(`${url}/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}&state=s`, {
    headers: UA,
    redirect: "manual"
  })
  assert.strictEqual(login.status, 307, await login.text())
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!
  const authorize = await fetch(`${login.headers.get("location")!}&login_hint=${userId}`, { redirect: "manual" })
  const callback = await fetch(authorize.headers.get("location")!, { redirect: "manual", headers: { cookie, ...UA } })
  const code = new URL(callback.headers.get("location")!).searchParams.get("code")!
  const token = await fetch(`${url}/auth/idp/token`, { method: "POST", headers: { authorization: code, ...UA } })
  return ((await token.json()) as { access_token: string }).access_token
}

const rssCalls = async (url: string) => {
  const stats = await (await fetch(`${url}/sandbox/stats`, { headers: UA })).json() as { calls: Record<string, number> }
  return Object.entries(stats.calls).filter(([route]) => route.includes("/rss/")).reduce((n, [, c]) => n + c, 0)
}

beforeAll(async () => {
  OUT = await sharedBundle()
}, 300_000)

afterAll(processes.cleanUp)

describe("ROLE", () => {
  it("worker: /healthz and /readyz on PORT; /api, /auth, /docs and /openapi.json are 404; SIGTERM exits 0", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const server = start({ PORT: String(port), ROLE: "worker" })
    await waitReady(url, server, READY_MS)

    const healthz = await fetch(`${url}/healthz`, { headers: UA })
    assert.strictEqual(healthz.status, 200)
    assert.deepStrictEqual(await healthz.json(), { status: "ok" })
    const readyz = await fetch(`${url}/readyz`, { headers: UA })
    assert.deepStrictEqual(await readyz.json(), { status: "ready" })

    for (const path of ["/api/v1/bots", "/auth/idp/login", "/docs", "/openapi.json", "/sandbox", `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss/feeds/1/status`]) {
      const res = await fetch(`${url}${path}`, { headers: UA, redirect: "manual" })
      assert.strictEqual(res.status, 404, `${path} answered ${res.status}`)
    }
    const envelope = await (await fetch(`${url}/api/v1/bots`, { headers: UA })).json() as { errors: Array<{ code: string }> }
    assert.strictEqual(envelope.errors[0]!.code, "Not Found")

    await stop(server)
  }, READY_MS + 30_000)

  it("api: serves the API and runs no job worker (a new feed's first poll is sent, never run)", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const server = start({ PORT: String(port), ROLE: "api", FEED_POLL_INTERVAL_SECONDS: "1" })
    await waitReady(url, server, READY_MS)

    const token = await signIn(url, ALICE_ID)
    const feeds = `${url}/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss/feeds`
    const created = await fetch(feeds, {
      method: "POST",
      headers: { ...UA, authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ feed_identifier: `${url}${RSS_PATHS.rss}`, webhook_channel: channelId(1, 2) })
    })
    const feed = await created.json() as { id: string }
    assert.strictEqual(created.status, 200, JSON.stringify(feed))

    // With a worker, the first poll runs at once (and then every second): here, nothing fetches the feed.
    const before = await rssCalls(url)
    await sleep(6_000)
    assert.strictEqual(await rssCalls(url), before, "the feed's source was fetched: something ran the poll job")
    const status = await fetch(`${feeds}/${feed.id}/status`, { headers: { ...UA, authorization: `Bearer ${token}` } })
    const body = await status.json() as Record<string, unknown>
    assert.strictEqual(status.status, 200, JSON.stringify(body))
    assert.strictEqual(body.last_poll_at, null)
    assert.isString(body.next_poll_at, "the first poll was sent (and planned)")
    assert.strictEqual(body.delivered, 0)
    assert.strictEqual(body.state, "active")

    await stop(server)
  }, READY_MS + 60_000)

  it("a bad ROLE stops start-up with a non-zero exit and one line naming ROLE", async () => {
    const server = start({ PORT: String(await freePort()), ROLE: "scheduler" })
    const exit = await within(20_000, server.exited)
    const { stdout, stderr } = server.output()
    assert.notStrictEqual(exit, "timeout", "start-up did not stop")
    assert.isTrue(exit !== "timeout" && exit.code !== null && exit.code !== 0, JSON.stringify(exit))
    const lines = stderr.split("\n").filter((l) => l.length > 0)
    assert.strictEqual(lines.length, 1, `stderr:\n${stderr}`)
    assert.include(lines[0]!, "ROLE")
    assert.notInclude(stderr, "    at ")
    assert.strictEqual(stdout, "")
  }, 120_000)

  it("a bad FEED_* value stops start-up with one line naming it", async () => {
    for (const [name, value] of [["FEED_POLL_INTERVAL_SECONDS", "0"], ["FEED_POLL_INTERVAL_SECONDS_STREAMING", "soon"], ["FEED_MAX_ITEMS_PER_POLL", "-1"]] as const) {
      const server = start({ PORT: String(await freePort()), [name]: value })
      const exit = await within(20_000, server.exited)
      const { stderr } = server.output()
      assert.isTrue(exit !== "timeout" && exit.code !== null && exit.code !== 0, `${name}: ${JSON.stringify(exit)}`)
      const lines = stderr.split("\n").filter((l) => l.length > 0)
      assert.strictEqual(lines.length, 1, `${name}: stderr:\n${stderr}`)
      assert.include(lines[0]!, name)
    }
  }, 120_000)
})
