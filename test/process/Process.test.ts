/**
 * The gateway as an operator runs it: `npm start` (build, then `node dist/main.mjs`) in a child
 * process on a free port with a temporary DATA_DIR and no DATABASE_URL (embedded PGlite). Checks
 * readiness, the OpenAPI document against the contract's route list, the docs page, a clean exit
 * on SIGTERM, and that a bad configuration value stops start-up with one line naming it.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { childProcesses } from "../utils/ChildProcesses.ts"
import type { Run } from "../utils/ChildProcesses.ts"
import { freePort } from "../utils/TestApp.ts"
import { buildBundle, ROOT, waitReady as waitUntilReady, within } from "./SpawnFixtures.ts"

const M = "/api/v1/bots/{appClientId}/servers/{serverId}/modules"

/** Every route of gateway-api.md and forms-runtime.md (plus the callback of decisions.md and the ops routes), as OpenAPI writes it. */
const CONTRACT_ROUTES: ReadonlyArray<readonly [string, string]> = [
  ["get", "/auth/idp/login"],
  ["get", "/auth/idp/callback"],
  ["post", "/auth/idp/token"],
  ["post", "/auth/idp/token/check"],
  ["post", "/auth/idp/token/refresh"],
  ["post", "/auth/idp/token/revoke"],
  ["get", "/api/v1/user"],
  ["get", "/api/v1/bots"],
  ["get", "/api/v1/bots/{appClientId}/servers"],
  ["get", "/api/v1/bots/{appClientId}/servers/{serverId}"],
  ["get", "/api/v1/bots/{appClientId}/servers/{serverId}/modules"],
  ["get", "/api/v1/bots/{appClientId}/servers/{serverId}/logs"],
  ["get", `${M}/forms/taskboardOptions`],
  ["get", `${M}/forms/taskboardBoards`],
  ["get", `${M}/forms`],
  ["get", `${M}/forms/new`],
  ["get", `${M}/forms/{formId}`],
  ["post", `${M}/forms`],
  ["patch", `${M}/forms/{formId}`],
  ["delete", `${M}/forms/{formId}`],
  ...["photo", "forum", "rss", "streaming", "microblog", "video"].flatMap((m) => [
    ["get", `${M}/${m}/feeds`] as const,
    ["post", `${M}/${m}/feeds`] as const,
    ["patch", `${M}/${m}/feeds/{feedId}`] as const,
    ["delete", `${M}/${m}/feeds/{feedId}`] as const,
    // delivery.md §5
    ["get", `${M}/${m}/feeds/{feedId}/status`] as const,
    // delivery.md §8
    ["get", `${M}/${m}/feeds/{feedId}/preview`] as const,
    ["post", `${M}/${m}/feeds/{feedId}/test`] as const,
    ["post", `${M}/${m}/feeds/{feedId}/refresh`] as const,
    ["get", `${M}/${m}/feeds/{feedId}/deliveries`] as const
  ]),
  ["get", `${M}/photo/getUserId/{userName}`],
  ["get", `${M}/streaming/getUserId/{userName}`],
  ["get", `${M}/microblog/getUserId/{userName}`],
  ["get", `${M}/video/getUserId/{userName}`],
  ["get", `${M}/streaming/getGameId/{gameName}`],
  // forms-runtime.md §2 and §6
  ["post", `${M}/forms/{formId}/publish`],
  ["get", `${M}/forms/{formId}/publications`],
  ["delete", `${M}/forms/{formId}/publications/{messageId}`],
  ["get", `${M}/forms/{formId}/submissions`],
  ["get", `${M}/forms/{formId}/submissions/{submissionId}`],
  ["post", `${M}/forms/{formId}/submissions/{submissionId}/review`],
  ["get", "/healthz"],
  ["get", "/readyz"]
]

const processes = childProcesses()

/** A clean environment: sandbox mode, embedded database, nothing inherited that would change that. */
const env = (extra: Record<string, string>) => {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST"]) {
    delete base[name]
  }
  const dataDir = processes.tempDir("gateway-process-")
  return { ...base, DATA_DIR: dataDir, LOG_LEVEL: "Warn", ...extra }
}

// Its own process group, so a test that fails half-way can still end the server it started.
const run = (command: string, args: ReadonlyArray<string>, extraEnv: Record<string, string>): Run =>
  processes.spawn(command, args, { cwd: ROOT, env: env(extraEnv) })

/** Polls /readyz until 200, the process exits, or the deadline passes. */
const waitReady = (url: string, server: Run, timeoutMs: number) => waitUntilReady(url, server, timeoutMs, { "user-agent": "process-test" })

/**
 * SIGTERM to an idle server: its grace (set long here) is not waited for. The exit must come well
 * before it (seconds on a loaded machine), and not through main.ts's last resort (grace + 5 s,
 * which prints this line on stderr).
 */
const IDLE_GRACE_MS = 30_000
const IDLE_EXIT_MS = 20_000
const LAST_RESORT = "shutdown: still running"

const nonNpmLines = (stderr: string) =>
  stderr.split("\n").filter((l) => l.trim().length > 0 && !l.startsWith("npm ") && !l.startsWith("> "))

beforeAll(() => {
  // The direct `node dist/main.mjs` cases below need the bundle even when run alone.
  buildBundle()
}, 60_000)

// The whole group: a server orphaned behind an exited npm is still in it.
afterAll(processes.cleanUp)

describe("the server as a process (npm start)", () => {
  it("starts on PGlite, serves the contract's OpenAPI and docs, exits 0 on SIGTERM at once (not after the grace)", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const server = run("npm", ["start"], { PORT: String(port), SHUTDOWN_GRACE_MS: String(IDLE_GRACE_MS) })
    await waitReady(url, server, 60_000)

    const openapi = await fetch(`${url}/openapi.json`, { headers: { "user-agent": "process-test" } })
    assert.strictEqual(openapi.status, 200)
    const doc = await openapi.json() as { readonly openapi: string; readonly paths: Record<string, Record<string, unknown>> }
    assert.match(doc.openapi, /^3\./)
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).filter((k) => ["get", "post", "patch", "put", "delete"].includes(k)).map((method) => `${method.toUpperCase()} ${path}`)
    )
    const contract = CONTRACT_ROUTES.map(([method, path]) => `${method.toUpperCase()} ${path}`)
    for (const route of contract) assert.include(documented, route, `missing from /openapi.json: ${route}`)
    assert.sameMembers(documented, contract, "the document has exactly the contract's routes")

    const docs = await fetch(`${url}/docs`, { headers: { "user-agent": "process-test" } })
    assert.strictEqual(docs.status, 200)
    assert.match(docs.headers.get("content-type") ?? "", /^text\/html/)
    assert.match(await docs.text(), /<html/i)

    // What a supervisor does: SIGTERM to the process it started (npm), not to its whole group.
    const t0 = Date.now()
    server.child.kill("SIGTERM")
    const exit = await within(IDLE_EXIT_MS, server.exited)
    const elapsed = Date.now() - t0
    const { stdout, stderr } = server.output()
    assert.notStrictEqual(exit, "timeout", `still running ${IDLE_EXIT_MS} ms after SIGTERM (the grace is ${IDLE_GRACE_MS} ms)\nstdout:\n${stdout}\nstderr:\n${stderr}`)
    assert.deepStrictEqual(exit, { code: 0, signal: null }, `stderr:\n${stderr}`)
    assert.isBelow(elapsed, IDLE_EXIT_MS)
    assert.notInclude(stderr, LAST_RESORT, "the server ended through main.ts's last resort, not its finalizers")
    // The server itself is gone too (not orphaned behind npm): the port no longer answers.
    const after = await fetch(`${url}/healthz`).then(() => "answered", () => "refused")
    assert.strictEqual(after, "refused")
  }, 120_000)

  it("a bad configuration value stops `npm start` with a non-zero exit naming the variable", async () => {
    const server = run("npm", ["start"], { PORT: "abc" })
    const exit = await within(30_000, server.exited)
    assert.notStrictEqual(exit, "timeout")
    const { stderr } = server.output()
    assert.notStrictEqual(exit === "timeout" ? 0 : exit.code, 0, stderr)
    assert.deepStrictEqual(nonNpmLines(stderr).filter((l) => l.includes("PORT")).length, 1, stderr)
  }, 60_000)

  for (const [name, value] of [["PORT", "abc"], ["RATE_LIMIT_API_PER_MINUTE", "0"], ["LOG_LEVEL", "loud"]] as const) {
    it(`${name}=${value}: non-zero exit, exactly one stderr line naming ${name}`, async () => {
      const port = name === "PORT" ? value : String(await freePort())
      const server = run("node", ["dist/main.mjs"], { PORT: port, [name]: value })
      const exit = await within(20_000, server.exited)
      const { stdout, stderr } = server.output()
      assert.notStrictEqual(exit, "timeout", "start-up did not stop")
      assert.isTrue(exit !== "timeout" && exit.code !== null && exit.code !== 0, JSON.stringify(exit))
      const lines = stderr.split("\n").filter((l) => l.length > 0)
      assert.strictEqual(lines.length, 1, `stderr:\n${stderr}`)
      assert.include(lines[0]!, name)
      assert.notInclude(stderr, "    at ", "no stack trace")
      assert.strictEqual(stdout, "", "nothing else is printed")
    }, 30_000)
  }
})
