/** What a start says about where to go next (StartupLines.ts), and which log format LOG_FORMAT picks (LogFormat.ts). */
import { assert, describe, it } from "@effect/vitest"
import { resolveLogFormat } from "../../src/layers/config/LogFormat.ts"
import { startupLines } from "../../src/layers/config/StartupLines.ts"

const url = "http://127.0.0.1:8080"
const sandboxDefaults = [`${url}/sandbox/callback`, `${url}/app/callback`]

describe("startupLines", () => {
  it("names the sandbox, the docs, the panel and the browser sign-in in sandbox mode", () => {
    assert.deepStrictEqual(startupLines({ sandbox: true, role: "all", publicUrl: url, allowedRedirectUris: sandboxDefaults }), [
      `sandbox mode: the chat platform, sources and task board are served at ${url}/sandbox`,
      `ROLE=all: public URL ${url}; interactive docs at ${url}/docs; control panel at ${url}/app`,
      `sign in from a browser: ${url}/auth/idp/login?redirect_uri=${url}/sandbox/callback`
    ])
  })

  it("leaves the sign-in line out when the sandbox's landing page is not an allowed redirect", () => {
    const lines = startupLines({ sandbox: true, role: "api", publicUrl: url, allowedRedirectUris: ["http://127.0.0.1/callback"] })
    assert.strictEqual(lines.length, 2)
    assert.include(lines[1]!, "ROLE=api")
    assert.include(lines[1]!, `${url}/app`)
  })

  it("in platform mode names the docs and the panel, no sandbox", () => {
    const lines = startupLines({ sandbox: false, role: "all", publicUrl: "https://gw.example", allowedRedirectUris: [] })
    assert.deepStrictEqual(lines, [
      "platform mode: talking to the configured chat platform",
      "ROLE=all: public URL https://gw.example; interactive docs at https://gw.example/docs; control panel at https://gw.example/app"
    ])
  })

  it("a worker serves only its probes: no docs, panel or sign-in", () => {
    const lines = startupLines({ sandbox: true, role: "worker", publicUrl: url, allowedRedirectUris: sandboxDefaults })
    assert.deepStrictEqual(lines.slice(1), ["ROLE=worker: job workers; serving /healthz and /readyz only"])
  })
})

describe("resolveLogFormat", () => {
  const cases = [
    ["auto", true, "pretty"],
    ["auto", false, "json"],
    ["json", true, "json"],
    ["json", false, "json"],
    ["pretty", true, "pretty"],
    ["pretty", false, "pretty"]
  ] as const
  for (const [setting, tty, expected] of cases) {
    it(`LOG_FORMAT=${setting}, stdout ${tty ? "a terminal" : "not a terminal"} → ${expected}`, () => {
      assert.strictEqual(resolveLogFormat(setting, tty), expected)
    })
  }
})
