/**
 * Start-up errors as an operator meets them (issue 13 item 6): every configuration problem at
 * once, one line each naming its variable; an unreachable database or a port in use → one line
 * naming DATABASE_URL (without its password) or PORT/HOST; LOG_LEVEL in any case.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createServer } from "node:net"
import type { Server } from "node:net"
import { freePort } from "../utils/TestApp.ts"
import { buildBundle, cleanUp, runBundle, waitReady, within } from "./SpawnFixtures.ts"

const linesOf = (stderr: string) => stderr.split("\n").filter((l) => l.length > 0)

/** Runs the bundle until it exits (it must, within 25 s); its exit code and stderr lines. */
const failedStart = async (env: Record<string, string>) => {
  const server = runBundle(env)
  const exit = await within(25_000, server.exited)
  const { stdout, stderr } = server.output()
  assert.notStrictEqual(exit, "timeout", `start-up did not stop\nstderr:\n${stderr}`)
  assert.notInclude(stderr, "    at ", "no stack trace")
  assert.strictEqual(stdout, "", "nothing else is printed")
  return { code: exit === "timeout" ? null : exit.code, lines: linesOf(stderr), stderr }
}

beforeAll(() => buildBundle(), 90_000)
afterAll(cleanUp)

describe("start-up errors (node dist/main.mjs)", () => {
  it("two bad variables → two lines, each naming its variable", async () => {
    const { code, lines, stderr } = await failedStart({ PORT: "abc", RATE_LIMIT_API_PER_MINUTE: "0" })
    assert.strictEqual(code, 2)
    assert.strictEqual(lines.length, 2, stderr)
    assert.isTrue(lines.some((l) => l.includes("PORT")), stderr)
    assert.isTrue(lines.some((l) => l.includes("RATE_LIMIT_API_PER_MINUTE")), stderr)
  }, 30_000)

  it("an unreachable DATABASE_URL → one line naming DATABASE_URL, without the password", async () => {
    const port = await freePort()
    const { code, lines, stderr } = await failedStart({ PORT: String(port), LOG_LEVEL: "Error", DATABASE_URL: "postgres://u:secret@127.0.0.1:1/x" })
    assert.strictEqual(code, 1)
    assert.strictEqual(lines.length, 1, stderr)
    assert.include(lines[0]!, "DATABASE_URL")
    assert.notInclude(stderr, "secret")
  }, 30_000)

  it("a DATABASE_URL that is not a postgres URL → one configuration line, the value not shown", async () => {
    const port = await freePort()
    const { code, lines, stderr } = await failedStart({ PORT: String(port), DATABASE_URL: "mysql://u:secret@db/x" })
    assert.strictEqual(code, 2)
    assert.strictEqual(lines.length, 1, stderr)
    assert.include(lines[0]!, "DATABASE_URL")
    assert.notInclude(stderr, "secret")
  }, 30_000)

  it("a port in use → one line naming PORT/HOST, at once", async () => {
    const port = await freePort()
    const taken: Server = createServer()
    await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve))
    try {
      const t0 = Date.now()
      const { code, lines, stderr } = await failedStart({ PORT: String(port) })
      assert.strictEqual(code, 1)
      assert.strictEqual(lines.length, 1, stderr)
      assert.match(lines[0]!, /PORT/)
      assert.include(lines[0]!, String(port))
      assert.isBelow(Date.now() - t0, 15_000)
    } finally {
      taken.close()
    }
  }, 30_000)

  it("LOG_LEVEL=info (lower case) is accepted", async () => {
    const port = await freePort()
    const server = runBundle({ PORT: String(port), LOG_LEVEL: "info" })
    await waitReady(`http://127.0.0.1:${port}`, server, 60_000)
    server.child.kill("SIGTERM")
    const exit = await within(10_000, server.exited)
    assert.deepStrictEqual(exit, { code: 0, signal: null }, server.output().stderr)
    assert.notInclude(server.output().stderr, "LOG_LEVEL")
  }, 90_000)
})
