/**
 * Observing the gateway as an operator does (issue 13 item 7): the bundle started with
 * METRICS_TOKEN and OTEL_EXPORTER_OTLP_ENDPOINT; /metrics scraped and parsed line by line (a request
 * counted under its route template, not its raw path); spans received by an in-test OTLP endpoint.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { freePort } from "../utils/TestApp.ts"
import { buildBundle, cleanUp, runBundle, sleep, waitReady } from "../process/SpawnFixtures.ts"

/** A line of the text exposition format: a comment (# HELP/# TYPE) or `name{labels} value`. */
const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)( -?\d+)?$/
const COMMENT = /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]*( .*)?$/

const traces: Array<unknown> = []
const otlp = createServer((req, res) => {
  let body = ""
  req.setEncoding("utf8").on("data", (c: string) => body += c).on("end", () => {
    if (req.method === "POST" && req.url === "/v1/traces") traces.push(JSON.parse(body))
    res.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})

beforeAll(async () => {
  buildBundle()
  await new Promise<void>((resolve) => otlp.listen(0, "127.0.0.1", resolve))
}, 90_000)
afterAll(async () => {
  await cleanUp()
  otlp.close()
}, 30_000)

describe("metrics and traces (node dist/main.mjs)", () => {
  it("GET /metrics in Prometheus text with route templates; spans over OTLP", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const endpoint = `http://127.0.0.1:${(otlp.address() as AddressInfo).port}`
    const server = runBundle({ PORT: String(port), METRICS_TOKEN: "scrape-me", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
    await waitReady(url, server, 60_000)

    const call = await fetch(`${url}/api/v1/bots/123456789012345678/servers`, { headers: { "user-agent": "observing-test" } })
    assert.strictEqual(call.status, 401)
    assert.strictEqual((await fetch(`${url}/wp-admin/987654321`, { headers: { "user-agent": "observing-test" } })).status, 404)
    assert.strictEqual((await fetch(`${url}/metrics`)).status, 401, "no token, no metrics")

    const scrape = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer scrape-me" } })
    assert.strictEqual(scrape.status, 200)
    assert.match(scrape.headers.get("content-type") ?? "", /^text\/plain/)
    const text = await scrape.text()
    for (const line of text.split("\n").filter((l) => l.length > 0)) {
      assert.isTrue(SAMPLE.test(line) || COMMENT.test(line), `not exposition format: ${line}`)
    }
    const requests = text.split("\n").filter((l) => l.startsWith("http_server_requests_total{"))
    assert.isTrue(
      requests.some((l) => l.includes('route="/api/v1/bots/:id/servers"') && l.includes('status="401"')),
      text
    )
    assert.notInclude(text, "123456789012345678", "never the raw path")
    assert.notInclude(text, "wp-admin", "an unknown path adds no series")
    assert.isTrue(requests.some((l) => l.includes('route="unmatched"') && l.includes('status="404"')), text)
    assert.include(text, "http_server_request_duration_seconds_bucket")

    const deadline = Date.now() + 15_000
    while (traces.length === 0 && Date.now() < deadline) await sleep(250)
    assert.isAbove(traces.length, 0, "no spans reached the OTLP endpoint")
    assert.include(JSON.stringify(traces), "resourceSpans")
    server.child.kill("SIGTERM")
  }, 120_000)
})
