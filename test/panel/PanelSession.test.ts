/**
 * The panel's refresh (issue #17: "refreshes before expiry, once, even with several tabs"), in
 * headless Chromium against the gateway in sandbox mode with a 20 s access token: a tab signs in, a
 * second tab is opened from it (it starts with a copy of the first one's sessionStorage: the same
 * sign-in, the same token family), and before the access token expires exactly one request reaches
 * /auth/idp/token/refresh; both tabs then call the API with the new access token and get 200, and no
 * API call of either tab is ever refused with 401. Then tab A closes: tab B takes the sign-in over and
 * refreshes it itself, once, before that pair expires. Counted at the browser (every request of the
 * context, both tabs).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Page, Request, Response } from "playwright-core"
import { CLIENT_REDIRECT, TestApp } from "../utils/TestApp.ts"
import { buildPanel, CHROMIUM, defaults, heading, launchChromium, signInAsAlice } from "./PanelFixtures.ts"

buildPanel()

// The panel refreshes at 80 % of the token's life: at 16 s here. Measured at load 10-14: tab B open
// 3 s after the sign-in, both tabs' API calls done 7 s after the refresh, both well inside those 16 s.
const TTL_SECONDS = 20

layer(
  TestApp.layer({
    capabilities: "memory",
    config: { allowedRedirectUris: [CLIENT_REDIRECT, ...defaults.allowedRedirectUris], accessTokenTtlSeconds: TTL_SECONDS }
  }),
  { excludeTestServices: true, timeout: 180_000 }
)("control panel: the session across tabs", (it) => {
  it.effect.skipIf(CHROMIUM === undefined)("in Chromium: two tabs of one sign-in, one refresh before expiry, both keep working; the other tab takes over", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const browser = yield* launchChromium
      const result = yield* Effect.promise(async () => {
        const context = await browser.newContext({ viewport: { width: 1000, height: 760 } })
        context.setDefaultTimeout(20_000)
        const refreshes: Array<{ readonly at: number; readonly tab: string }> = []
        const exchanged: Array<number> = []
        const refused: Array<string> = []
        const apiCalls: Array<{ readonly tab: string; readonly at: number; readonly status: number; readonly access: string }> = []
        const tabs = new Map<Page, string>()
        const tabOf = (r: Request) => tabs.get(r.frame().page()) ?? "?"
        context.on("request", (r) => {
          const path = new URL(r.url()).pathname
          if (path === "/auth/idp/token/refresh") refreshes.push({ at: Date.now(), tab: tabOf(r) })
          if (path === "/auth/idp/token") exchanged.push(Date.now())
        })
        context.on("response", (r: Response) => {
          const path = new URL(r.url()).pathname
          if (!path.startsWith("/api/")) return
          const authorization = r.request().headers()["authorization"] ?? ""
          apiCalls.push({ tab: tabOf(r.request()), at: Date.now(), status: r.status(), access: authorization.replace(/^Bearer /, "") })
          if (r.status() === 401) refused.push(`${tabOf(r.request())} ${r.request().method()} ${path}`)
        })

        // Tab A signs in.
        const a = await context.newPage()
        tabs.set(a, "A")
        await a.goto(`${app.url}/app`)
        await signInAsAlice(a)
        await heading(a, "Bots")
        const signedInAt = exchanged[0]!

        // Tab B, opened from A (as a link opened in a new window is): the same sign-in, no new one.
        const [b] = await Promise.all([context.waitForEvent("page"), a.evaluate((url) => void window.open(url), `${app.url}/app`)])
        tabs.set(b, "B")
        await heading(b, "Bots")
        const copied = await b.evaluate(() => sessionStorage.getItem("bmg.panel.session") !== null)
        const refreshesAtOpen = refreshes.length

        // Before the access token expires, one tab rotates it: wait for that refresh, then a while
        // longer, as long as a second tab's own timer would need to fire.
        const deadline = signedInAt + TTL_SECONDS * 1000
        while (refreshes.length === 0 && Date.now() < deadline + 10_000) await new Promise((r) => setTimeout(r, 200))
        const firstRefreshAt = refreshes[0]?.at
        await new Promise((r) => setTimeout(r, 3_000))

        // Both tabs call the API again (after the old access token stopped working): with the new one, 200.
        const callsBefore = apiCalls.length
        for (const tab of [a, b]) {
          await tab.getByRole("link", { name: /FeedsBot/ }).click()
          await heading(tab, /^Servers of FeedsBot/)
          await tab.getByRole("link", { name: /Sandbox One/ }).click()
          await heading(tab, "Modules on Sandbox One")
        }
        const after = apiCalls.slice(callsBefore)
        const accessBefore = apiCalls.find((c) => c.tab === "A")?.access
        const refreshesBeforeClose = [...refreshes]

        // Tab A closes: tab B takes over the sign-in and refreshes it itself before the next expiry.
        await a.close()
        const secondDeadline = refreshesBeforeClose[0]!.at + (TTL_SECONDS + 10) * 1000
        while (refreshes.length < 2 && Date.now() < secondDeadline) await new Promise((r) => setTimeout(r, 200))
        const callsAfterClose = apiCalls.length
        await b.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Servers" }).click()
        await heading(b, /^Servers of FeedsBot/)
        const alone = apiCalls.slice(callsAfterClose)
        await context.close()
        return {
          copied,
          refreshesAtOpen,
          refreshesBeforeClose,
          refreshes,
          firstRefreshAt,
          signedInAt,
          after,
          alone,
          refused,
          accessBefore,
          exchanged: exchanged.length
        }
      })

      assert.isTrue(result.copied, "tab B started with tab A's sign-in")
      assert.strictEqual(result.exchanged, 1, "one sign-in, in tab A")
      assert.strictEqual(result.refreshesAtOpen, 0, "opening tab B rotated nothing: it took tab A's pair")
      assert.strictEqual(result.refreshesBeforeClose.length, 1, `exactly one refresh for the two tabs: ${JSON.stringify(result.refreshesBeforeClose)}`)
      assert.isBelow(result.firstRefreshAt! - result.signedInAt, TTL_SECONDS * 1000, "the refresh came before the access token expired")
      assert.deepStrictEqual(result.refused, [], "no API call of either tab was refused with 401")
      for (const tab of ["A", "B"]) {
        const calls = result.after.filter((c) => c.tab === tab)
        assert.isNotEmpty(calls, `tab ${tab} called the API after the refresh`)
        for (const c of calls) {
          assert.strictEqual(c.status, 200, `tab ${tab}: ${JSON.stringify(c)}`)
          assert.notStrictEqual(c.access, result.accessBefore, `tab ${tab} uses the new access token`)
        }
      }
      const used = new Set(result.after.map((c) => c.access))
      assert.strictEqual(used.size, 1, "both tabs use the same (new) access token")
      // Tab A closed: B led from then on, one refresh of its own, before that pair expired.
      assert.deepStrictEqual(result.refreshes.map((r) => r.tab), ["A", "B"], JSON.stringify(result.refreshes))
      assert.isBelow(result.refreshes[1]!.at - result.refreshes[0]!.at, TTL_SECONDS * 1000, "B refreshed before the pair expired")
      assert.isNotEmpty(result.alone)
      for (const c of result.alone) {
        assert.strictEqual(c.status, 200, `tab B alone: ${JSON.stringify(c)}`)
        assert.notInclude([...used], c.access, "tab B uses the pair it rotated")
      }
    }).pipe(Effect.scoped),
    { timeout: 180_000 })
})

if (CHROMIUM === undefined) console.warn("control panel session in Chromium: skipped, no Chromium binary (/usr/bin/chromium); apt-get install -y chromium")
