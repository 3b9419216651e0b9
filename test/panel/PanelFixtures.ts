/**
 * What the panel's Chromium tests share: the browser binary and its flags, the panel's bundle built
 * as `npm start` builds it, axe-core on a page, screenshots (into docs/screenshots/ with
 * UPDATE_SCREENSHOTS=1, else into a temporary folder), signing in as Alice through the sandbox's sign-in page.
 */
import { ConfigProvider, Effect } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import type { Page } from "playwright-core"
import { loadConfig } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
/** docs/screenshots/ (tracked) only when asked for: every run still takes the screenshots, so that path stays tested. */
export const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? resolve(ROOT, "docs/screenshots") : resolve(tmpdir(), "gateway-panel-screenshots")
export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p))
export const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** The panel's bundle, as `npm start` builds it (skipped when current). */
export const buildPanel = () =>
  execFileSync(process.execPath, [resolve(ROOT, "scripts/build-panel.mjs")], { cwd: ROOT, stdio: "inherit" })

/** The sandbox's default allowlist, as loaded from an empty environment: it names PUBLIC_URL/app/callback. */
export const defaults = Effect.runSync(loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { HOST: "127.0.0.1" } })))))

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

/** axe-core on the page as it is now: the serious and critical violations. */
export const axe = async (page: Page, screen: string): Promise<Array<string>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE })
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: Array<AxeViolation> }> } }).axe
      .run(document, { resultTypes: ["violations"] })
    return result.violations
  })
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${screen}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
}

export const shot = (page: Page, name: string) => page.screenshot({ path: resolve(SHOTS, `${name}.png`) })

/** The level-1 heading of a screen, once shown. */
export const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name }).waitFor()

/** From the sign-in screen, through the sandbox's sign-in page, as Alice. */
export const signInAsAlice = async (page: Page) => {
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("link", { name: new RegExp(`Sign in as Alice .*${ALICE_ID}`) }).click()
}

/** Chromium for one test, closed with the test's scope. */
export const launchChromium = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath: CHROMIUM!, args: ARGS })),
  (b) => Effect.promise(() => b.close())
)

/** Requests to the gateway outside the panel (the sandbox's controls, or the API as the token's user). */
export const gatewayAs = (url: string, token: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json", "user-agent": "panel-test", authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  return { status: res.status, body: (text === "" ? {} : JSON.parse(text)) as Record<string, any> }
}
