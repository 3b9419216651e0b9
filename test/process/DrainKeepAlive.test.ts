/**
 * The drain as a keep-alive client sees it (issue #30, item 2): the bundled gateway in a child
 * process, a client with several kept-alive sockets sending requests back to back across SIGTERM.
 * No request may be lost without an answer: each one is answered 200, or 503 with Retry-After (in
 * the header and in the envelope), and no socket is reset under a request. Once the drain has
 * begun every answer says `Connection: close`, so the client opens a new connection for its next
 * request, which is refused (ECONNREFUSED: nothing was sent) once the server stopped listening.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Agent, request } from "node:http"
import type { ClientRequest } from "node:http"
import { join } from "node:path"
import { childProcesses } from "../utils/ChildProcesses.ts"
import { freePort } from "../utils/TestApp.ts"
import { ROOT, sharedBundle, sleep, waitReady, within } from "./SpawnFixtures.ts"

const processes = childProcesses()
let OUT = ""

/** The bundled gateway on a free port, sandbox mode on the embedded database, with the given grace. */
const startGateway = async (graceMs: number) => {
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TOKEN_ENCRYPTION_KEY", "PUBLIC_URL", "SANDBOX", "MAINTENANCE", "HOST", "ROLE", "OTEL_EXPORTER_OTLP_ENDPOINT", "METRICS_TOKEN"]) {
    delete env[name]
  }
  const server = processes.spawn(process.execPath, [join(OUT, "main.mjs")], {
    cwd: ROOT,
    env: { ...env, DATA_DIR: processes.tempDir("gateway-drain-"), LOG_LEVEL: "Info", PORT: String(port), SHUTDOWN_GRACE_MS: String(graceMs) }
  })
  const url = `http://127.0.0.1:${port}`
  await waitReady(url, server, 90_000, UA)
  return { server, url, drainStarted: () => server.output().stdout.includes("shutdown: draining") }
}
const UA = { "user-agent": "drain-keepalive-test" }
const SOCKETS = 8
const GRACE_MS = 2_000

beforeAll(async () => {
  OUT = await sharedBundle()
}, 300_000)

afterAll(processes.cleanUp)

interface Answer {
  readonly kind: "answer"
  readonly path: string
  readonly status: number
  readonly connection: string | undefined
  readonly retryAfter: string | undefined
  readonly body: string
  /** The request was written after the test saw the gateway's "shutdown: draining" line. */
  readonly sentAfterDrainStart: boolean
  readonly reusedSocket: boolean
}
interface Failure {
  readonly kind: "error"
  readonly path: string
  readonly code: string
  readonly message: string
  readonly reusedSocket: boolean
}
type Outcome = Answer | Failure

/** The outcome of `req` (already created, ended by the caller): its answer, or how it failed. */
const outcomeOf = (req: ClientRequest, path: string, sentAfterDrainStart: boolean): Promise<Outcome> =>
  new Promise((resolve) => {
    let reusedSocket = false
    const failed = (e: NodeJS.ErrnoException) => resolve({ kind: "error", path, code: e.code ?? "", message: e.message, reusedSocket })
    req.on("response", (res) => {
      let body = ""
      res.setEncoding("utf8").on("data", (c: string) => (body += c))
      res.on("end", () =>
        resolve({
          kind: "answer",
          path,
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          retryAfter: res.headers["retry-after"],
          body,
          sentAfterDrainStart,
          reusedSocket
        })
      )
      res.on("error", failed)
    })
    req.on("socket", () => (reusedSocket = req.reusedSocket))
    req.on("error", failed)
  })

/** One GET on the agent: its answer, or how it failed (with whether it went out on a kept-alive socket). */
const get = (agent: Agent, url: string, path: string, drainStarted: () => boolean): Promise<Outcome> => {
  const sentAfterDrainStart = drainStarted()
  const req = request(`${url}${path}`, { agent, headers: UA })
  const outcome = outcomeOf(req, path, sentAfterDrainStart)
  req.end()
  return outcome
}

/** The drain's refusal: 503, Retry-After in the header and in the envelope. */
const assertRefusal = (a: Answer) => {
  assert.strictEqual(a.status, 503, JSON.stringify(a))
  assert.match(a.retryAfter ?? "", /^[1-9][0-9]*$/, `a 503 without Retry-After: ${JSON.stringify(a)}`)
  const envelope = JSON.parse(a.body) as { errors: Array<{ code: string; additionalProperties?: { retry_after?: unknown } }> }
  assert.strictEqual(envelope.errors[0]?.code, "Service Unavailable", a.body)
  assert.strictEqual(envelope.errors[0]?.additionalProperties?.retry_after, Number(a.retryAfter), a.body)
}

describe("the shutdown drain and kept-alive connections", () => {
  it("every request sent across SIGTERM on kept-alive sockets is answered (200, or 503 with Retry-After), with Connection: close once draining; none is reset", async () => {
    const { server, url, drainStarted } = await startGateway(GRACE_MS)

    const agent = new Agent({ keepAlive: true, maxSockets: SOCKETS })
    const outcomes: Array<Outcome> = []
    let stop = false
    // Each loop sends its next request as soon as the previous one is answered, until the server is gone.
    const loop = async (i: number) => {
      for (let n = 0; !stop; n++) {
        const outcome = await get(agent, url, n % 2 === 0 || i % 2 === 0 ? "/healthz" : "/readyz", drainStarted)
        outcomes.push(outcome)
        // A new connection refused: the server no longer listens; nothing was sent, so nothing is lost.
        if (outcome.kind === "error" && outcome.code === "ECONNREFUSED") return
      }
    }
    const loops = Array.from({ length: SOCKETS }, (_, i) => loop(i))
    await sleep(1_000)
    const before = outcomes.length
    assert.isAbove(before, SOCKETS, "requests were flowing before the signal")
    server.child.kill("SIGTERM")
    // Exit timing is Shutdown.test.ts's to check; this bound only ends a run that hangs (generous: a loaded machine).
    const exit = await within(30_000, server.exited)
    stop = true
    const finished = await within(10_000, Promise.all(loops))
    agent.destroy()
    const { stdout, stderr } = server.output()
    assert.notStrictEqual(exit, "timeout", `still running 30 s after SIGTERM\nstdout:\n${stdout}\nstderr:\n${stderr}`)
    assert.notStrictEqual(finished, "timeout", "a request was never answered nor failed")

    const failures = outcomes.filter((o): o is Failure => o.kind === "error")
    const lost = failures.filter((f) => f.code !== "ECONNREFUSED")
    assert.deepStrictEqual(lost, [], `requests lost without an answer (of ${outcomes.length})`)
    // A refused connection is a new one: a kept-alive socket is never refused, only reset.
    assert.isTrue(failures.every((f) => !f.reusedSocket), JSON.stringify(failures))

    const answers = outcomes.filter((o): o is Answer => o.kind === "answer")
    for (const a of answers) if (a.status !== 200) assertRefusal(a)
    const duringDrain = answers.filter((a) => a.sentAfterDrainStart)
    const keptAlive = duringDrain.filter((a) => a.connection !== "close")
    assert.deepStrictEqual(keptAlive, [], "answers to requests sent during the drain keep the connection open")
    // The drain was exercised: answers closing their connection, and the signal reached the gateway mid-traffic.
    assert.isAbove(answers.filter((a) => a.connection === "close").length, 0, JSON.stringify(answers.slice(-SOCKETS)))
    assert.include(stdout, "shutdown: drained")
  }, 200_000)

  it("a request on a connection idle since before the drain gets 503 with Retry-After and Connection: close; one in flight finishes, closing its connection", async () => {
    const { server, url, drainStarted } = await startGateway(10_000)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const first = await get(agent, url, "/healthz", drainStarted)
    assert.deepInclude(first, { kind: "answer", status: 200, connection: "keep-alive" })

    // In flight across the signal: the headers sent, the body not yet (the drain waits for it).
    const body = JSON.stringify({ grant_type: "refresh_token", refresh_token: "r".repeat(40) })
    const slow = request(`${url}/auth/token`, {
      agent: false,
      method: "POST",
      headers: { ...UA, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
    })
    const slowOutcome = outcomeOf(slow, "/auth/token", false)
    slow.write(body.slice(0, 10))
    await sleep(500)

    server.child.kill("SIGTERM")
    for (const deadline = Date.now() + 10_000; !drainStarted() && Date.now() < deadline;) await sleep(20)
    assert.isTrue(drainStarted(), server.output().stdout)

    // The kept-alive socket, idle when the drain began, carries one more request.
    const second = await get(agent, url, "/healthz", drainStarted)
    assert.strictEqual(second.kind, "answer", JSON.stringify(second))
    const refused = second as Answer
    assert.isTrue(refused.reusedSocket, "sent on the connection kept alive from before the drain")
    assertRefusal(refused)
    assert.strictEqual(refused.connection, "close")

    slow.end(body.slice(10))
    const finished = await slowOutcome
    assert.strictEqual(finished.kind, "answer", JSON.stringify(finished))
    assert.notStrictEqual((finished as Answer).status, 503, "a request in flight when the drain began is served, not refused")
    assert.strictEqual((finished as Answer).connection, "close")

    const exit = await within(30_000, server.exited)
    agent.destroy()
    const { stdout, stderr } = server.output()
    assert.deepStrictEqual(exit, { code: 0, signal: null }, stderr)
    const drained = stdout.split("\n").find((l) => l.includes("shutdown: drained"))
    assert.isDefined(drained, stdout)
    assert.deepInclude(JSON.parse(drained!).annotations, { cut: 0, refused: 1 })
  }, 200_000)
})
