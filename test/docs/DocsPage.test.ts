/**
 * The /docs page as a user meets it, in real Chromium: signed in through the sandbox, the access
 * token pasted in Scalar's token box, GET /api/v1/user sent from the page answers 200. The page and
 * its assets ask no other host; the assets answer compressed and cacheable. Skipped (with the
 * reason) only when no Chromium binary is installed; CI installs one (.ci/run).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { gunzipSync } from "node:zlib"
import { chromium } from "playwright-core"
import type { Browser } from "playwright-core"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p))
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

const withBrowser = <A>(use: (browser: Browser) => Promise<A>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => chromium.launch({ executablePath: CHROMIUM!, args: ARGS })),
    (browser) => Effect.promise(() => use(browser)),
    (browser) => Effect.promise(() => browser.close())
  )

const assetUrls = (html: string) => [...html.matchAll(/(?:src="|"url":")(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!)

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })("docs page", (it) => {
  it.effect("the page and its assets are local, compressed by Accept-Encoding, and cacheable", () =>
    Effect.gen(function*() {
      const page = yield* raw({ headers: { "accept-encoding": "gzip" } }, "/docs")
      assert.strictEqual(page.status, 200)
      assert.strictEqual(page.headers.get("cache-control"), "no-cache")
      const html = yield* Effect.promise(() => page.text())
      assert.notMatch(html, /https?:\/\//, "the page names no other host")
      const assets = assetUrls(html)
      assert.lengthOf(assets, 2, html)
      for (const path of assets) {
        assert.match(path, /-[A-Za-z0-9_-]{16}\.(js|json)$/, "a content-hashed URL")
        const app = yield* TestApp
        // fetch() would decompress: read the raw bytes through node's own client instead.
        const gz = yield* Effect.promise(async () => {
          const { request } = await import("node:http")
          return new Promise<{ headers: Record<string, unknown>; body: Buffer; status: number }>((resolve, reject) => {
            request(app.url + path, { headers: { "accept-encoding": "gzip", "user-agent": "docs-test" } }, (res) => {
              const chunks: Array<Buffer> = []
              res.on("data", (c: Buffer) => chunks.push(c))
              res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks), status: res.statusCode! }))
            }).on("error", reject).end()
          })
        })
        assert.strictEqual(gz.status, 200)
        assert.strictEqual(gz.headers["content-encoding"], "gzip")
        assert.strictEqual(gz.headers["cache-control"], "public, max-age=31536000, immutable")
        assert.strictEqual(gz.headers["vary"], "accept-encoding")
        const etag = gz.headers["etag"] as string
        assert.match(etag, /^"[A-Za-z0-9_-]{16}"$/)
        const plain = gunzipSync(gz.body)
        assert.isAbove(plain.length, gz.body.length)
        const br = yield* raw({ headers: { "accept-encoding": "br, gzip" } }, path)
        assert.strictEqual(br.headers.get("content-encoding"), "br")
        assert.strictEqual(Buffer.from(yield* Effect.promise(() => br.arrayBuffer())).length, plain.length, "fetch decodes br")
        const identity = yield* raw({ headers: { "accept-encoding": "identity" } }, path)
        assert.isNull(identity.headers.get("content-encoding"))
        const revalidated = yield* raw({ headers: { "if-none-match": etag } }, path)
        assert.strictEqual(revalidated.status, 304)
      }
    }))

  it.effect.skipIf(CHROMIUM === undefined)(
    "in Chromium: paste the access token in Scalar, send GET /api/v1/user, see 200; no request leaves the gateway",
    () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const token = yield* tokenOf(ALICE_ID)
        const result = yield* withBrowser(async (browser) => {
          const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
          const requested: Array<string> = []
          page.on("request", (r) => requested.push(r.url()))
          await page.goto(`${app.url}/docs`, { waitUntil: "networkidle" })
          // The intro's Authentication box opens on the bearer scheme (`preferredSecurityScheme`): paste the token.
          const tokenBox = page.getByPlaceholder("Token").first()
          await tokenBox.waitFor({ state: "visible", timeout: 20_000 })
          await tokenBox.fill(token)
          // The operation's "Test Request" opens Scalar's client; Send.
          await page.goto(`${app.url}/docs#tag/general/GET/api/v1/user`)
          await page.locator("button", { hasText: "Test Request" }).filter({ hasText: /\(get \/api\/v1\/user\)/ }).click()
          const answer = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/user")
          await page.getByRole("button", { name: /^Send/ }).first().click()
          const response = await answer
          const sent = response.request().headers()
          const body = await response.json() as { readonly id?: string }
          await page.waitForLoadState("networkidle")
          return { status: response.status(), authorization: sent["authorization"], body, requested }
        })
        assert.strictEqual(result.status, 200, JSON.stringify(result.body))
        assert.strictEqual(result.authorization, `Bearer ${token}`)
        assert.strictEqual(result.body.id, ALICE_ID)
        const foreign = result.requested.filter((u) => !u.startsWith(`${app.url}/`) && !u.startsWith("data:") && !u.startsWith("blob:"))
        assert.deepStrictEqual(foreign, [], "every request of the page goes to the gateway")
      }),
    { timeout: 120_000 }
  )
})

if (CHROMIUM === undefined) console.warn("docs page in Chromium: skipped, no Chromium binary (/usr/bin/chromium); apt-get install -y chromium")
