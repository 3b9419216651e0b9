/**
 * The control panel's feeds and audit log (issue #17) as a user meets them, in headless Chromium
 * against the gateway in sandbox mode with its worker (polling every second): a microblog feed
 * created by looking its account up, its options changed (a refused save shown at its field); an
 * RSS feed created with a webhook URL, a test message, a poll now twice (the second refused with the
 * wait), an item published to the sandbox source seen in the feed's delivery log; the preview with
 * reasons; the audit log filtered by module and by time. axe-core on every new screen, screenshots
 * (into docs/screenshots/ with UPDATE_SCREENSHOTS=1). One browser for the file.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { MICROBLOG_USERS } from "../../src/sandbox/sources/Seed.ts"
import { ALICE_ID, BOT2_ID, S1_ID, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN } from "../../src/sandbox/Seed.ts"
import { CLIENT_REDIRECT, TestApp, tokenOf } from "../utils/TestApp.ts"
import { axe, buildPanel, CHROMIUM, defaults, gatewayAs, heading, launchChromium, shot, SHOTS, signInAsAlice } from "./PanelFixtures.ts"

buildPanel()

const MODULES = `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules`
const BIRD = MICROBLOG_USERS[0]!
const SOURCE = "panel-e2e"

layer(
  TestApp.layer({
    capabilities: { db: "pglite" },
    config: { allowedRedirectUris: [CLIENT_REDIRECT, ...defaults.allowedRedirectUris], delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1 } }
  }),
  { excludeTestServices: true, timeout: 90_000 }
)("control panel: feeds and audit log", (it) => {
  it.effect.skipIf(CHROMIUM === undefined)("in Chromium: feeds by lookup and by webhook URL, options, a delivery in the log, preview, audit log", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const token = yield* tokenOf(ALICE_ID)
      mkdirSync(SHOTS, { recursive: true })
      const violations: Array<string> = []
      const browser = yield* launchChromium
      /** A request to the gateway outside the panel: the sandbox's source, or the API as Alice. */
      const gateway = gatewayAs(app.url, token)
      const publish = async (title: string) => {
        const r = await gateway("POST", `/sandbox/sources/rss/${SOURCE}/events`, { type: "post", title, url: `https://example.com/${encodeURIComponent(title)}` })
        assert.strictEqual(r.status, 201, JSON.stringify(r.body))
      }

      const result = yield* Effect.promise(async () => {
        await publish("Served before the feed")
        const context = await browser.newContext({ viewport: { width: 1000, height: 760 }, bypassCSP: true })
        const page = await context.newPage()
        page.setDefaultTimeout(15_000)
        page.on("dialog", (d) => void d.accept())
        const openModule = async (name: string) => {
          await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Sandbox One" }).click()
          await heading(page, "Modules on Sandbox One")
          await page.locator(`a.card[href$="/feeds/${name}"]`).click()
        }

        await page.goto(`${app.url}/app`)
        await signInAsAlice(page)
        await heading(page, "Bots")
        await page.getByRole("link", { name: /FeedsBot/ }).click()
        await page.getByRole("link", { name: /Sandbox One/ }).click()
        await heading(page, "Modules on Sandbox One")

        // Microblog, by lookup: the account's id found from its name.
        await page.locator(`a.card[href$="/feeds/microblog"]`).click()
        await heading(page, "Microblog feeds on Sandbox One")
        await page.getByText("This server has no Microblog feed yet.").waitFor()
        await page.getByRole("link", { name: "New feed" }).click()
        await heading(page, "New Microblog feed")
        const optionLabels = await page.locator("#sec-options ~ * label, #sec-options ~ * legend").allTextContents()
        await page.getByLabel("Microblog user name").fill(BIRD.username)
        await page.getByRole("button", { name: "Look up", exact: true }).click()
        await page.getByText(`Found ${BIRD.name}`).waitFor()
        const identifier = await page.getByLabel("Account id").inputValue()
        await page.getByLabel("Channel", { exact: true }).selectOption({ label: "#general" })
        await page.getByLabel("Post as (name)").fill("Bird news")
        violations.push(...await axe(page, "new feed"))
        await page.getByRole("button", { name: "Create the feed" }).click()
        await page.getByText(/^Created the feed/).waitFor()
        const microblogPath = new URL(page.url()).pathname

        // Its options: a repeated word refused at its field, then saved.
        await page.getByLabel("Filter words, one per line").fill("gateway\nnews\nGateway")
        await page.getByLabel("Word filter mode").selectOption("AND")
        await page.getByRole("button", { name: "Save the options" }).click()
        const wordsError = page.locator("#f-webhook-options-filter-words-error")
        await wordsError.waitFor()
        const refused = {
          text: await wordsError.textContent(),
          invalid: await page.getByLabel("Filter words, one per line").getAttribute("aria-invalid"),
          alert: await page.getByRole("alert").first().textContent()
        }
        await page.getByLabel("Filter words, one per line").fill("gateway\nnews")
        await page.getByLabel("Keep the webhook's own avatar").check()
        await page.getByRole("button", { name: "Save the options" }).click()
        await page.getByText(/^Saved the options of/).waitFor()
        violations.push(...await axe(page, "feed editor"))
        await page.evaluate(() => window.scrollTo(0, 0))
        await shot(page, "feed-editor")

        // RSS, by webhook URL: the URL's secret is not shown back.
        await openModule("rss")
        await heading(page, "RSS feeds on Sandbox One")
        await page.getByRole("link", { name: "New feed" }).click()
        const rssOptions = await page.locator("#sec-options ~ * label, #sec-options ~ * legend").allTextContents()
        await page.getByLabel("Feed URL").fill(`${app.url}/sandbox/rss/${SOURCE}.xml`)
        await page.getByLabel("An existing webhook's URL").check()
        await page.getByLabel("Webhook URL").fill(`https://discord.com/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`)
        await page.getByRole("button", { name: "Create the feed" }).click()
        await page.getByText(/^Created the feed/).waitFor()
        const rssPath = new URL(page.url()).pathname
        const rssId = rssPath.split("/").pop()!
        const shown = await page.locator("main").textContent()

        // A test message; a poll now, and again at once: refused with the wait.
        await page.getByRole("button", { name: "Send a test message" }).click()
        await page.getByText("Sent a test message with the source's newest item.").waitFor()
        await page.getByRole("button", { name: "Poll now" }).click()
        await page.getByText(/^The source is being polled now/).waitFor()
        await page.getByRole("button", { name: "Poll now" }).click()
        const tooMany = await page.getByRole("alert").filter({ hasText: "Too many requests" }).textContent()

        // The first poll done (the baseline), an item published to the source is delivered: in the log.
        const deadline = Date.now() + 20_000
        while ((await gateway("GET", `${MODULES}/rss/feeds/${rssId}/status`)).body["last_poll_at"] === null && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 250))
        }
        await new Promise((r) => setTimeout(r, 1100))
        await publish("Hello from the panel test")
        await page.getByRole("link", { name: "Delivery log" }).click()
        await heading(page, "Delivery log")
        const delivered = page.getByRole("row").filter({ hasText: "Hello from the panel test" })
        while (await delivered.count() === 0 && Date.now() < deadline + 20_000) {
          await new Promise((r) => setTimeout(r, 500))
          await page.getByRole("button", { name: "Reload" }).click()
          await page.getByRole("table").or(page.getByText("Nothing delivered yet.")).waitFor()
        }
        const deliveredRow = await delivered.textContent()
        violations.push(...await axe(page, "delivery log"))
        await shot(page, "delivery-log")

        // The preview: each item with its verdict and why.
        await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Feed", exact: true }).click()
        await page.getByRole("link", { name: "Preview" }).click()
        await heading(page, "Preview: what the feed would post now")
        await page.locator(".preview-item").first().waitFor()
        const previewed = await page.locator(".preview-item h2").allTextContents()
        const verdicts = await page.locator(".preview-item .badge").allTextContents()
        const reasons = await page.locator(".preview-item ul li").count()
        violations.push(...await axe(page, "preview"))
        // feed-preview.png is taken by PanelOnScreen.test.ts, where the preview has items posted and skipped.

        // The list with the status.
        await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "RSS feeds" }).click()
        await heading(page, "RSS feeds on Sandbox One")
        const listed = await page.getByRole("row").filter({ hasText: SOURCE }).textContent()
        violations.push(...await axe(page, "feeds"))
        await shot(page, "feeds")

        // The audit log: by module, then a time range with nothing in it.
        await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Sandbox One" }).click()
        await page.getByRole("link", { name: "Audit log" }).click()
        await heading(page, "Audit log of Sandbox One")
        await page.getByLabel("Module").selectOption("microblog")
        await page.getByRole("button", { name: "Apply the filters" }).click()
        await page.waitForURL(/\/audit\?module=microblog$/)
        await page.getByRole("table").waitFor()
        const modulesShown = await page.locator("tbody tr td:nth-child(3)").allTextContents()
        const actions = await page.locator("tbody tr td:nth-child(4)").allTextContents()
        violations.push(...await axe(page, "audit log"))
        await shot(page, "audit-log")
        await page.getByLabel("From").fill("2099-01-01T00:00")
        await page.getByRole("button", { name: "Apply the filters" }).click()
        await page.getByText("No entry matches these filters.").waitFor()
        const future = new URL(page.url()).searchParams.get("start")
        await context.close()
        return { optionLabels, rssOptions, identifier, microblogPath, refused, rssPath, shown, tooMany, deliveredRow, previewed, verdicts, reasons, listed, modulesShown, actions, future }
      })

      assert.deepStrictEqual(violations, [], "no serious or critical accessibility violation")
      assert.strictEqual(result.identifier, BIRD.id, "the lookup filled in the account's id")
      assert.match(result.microblogPath, new RegExp(`^/app/bots/${BOT2_ID}/servers/${S1_ID}/feeds/microblog/\\d+$`))
      assert.include(result.optionLabels.join("|"), "Filter words, one per line")
      assert.notInclude(result.rssOptions.join("|"), "Events to post", "only the options the module has")
      assert.notInclude(result.rssOptions.join("|"), "Flairs", "only the options the module has")
      assert.include(result.refused.text, "repeated")
      assert.strictEqual(result.refused.invalid, "true")
      assert.include(result.refused.alert, "The feed was not saved")
      assert.notInclude(result.shown, WEBHOOK_S1_TOKEN, "the webhook's secret is not shown")
      assert.match(result.tooMany ?? "", /^Too many requests: This feed's source was refreshed less than 60 seconds ago; try again in \d+ seconds?\.$/, "the wait said once")
      assert.include(result.deliveredRow, "Sent")
      assert.include(result.previewed, "Hello from the panel test")
      assert.isAtLeast(result.verdicts.length, 2)
      assert.isAtLeast(result.reasons, result.verdicts.length, "every item says why")
      assert.include(result.listed, "Active")
      assert.isNotEmpty(result.modulesShown)
      assert.deepStrictEqual([...new Set(result.modulesShown)], ["microblog"])
      assert.includeMembers(result.actions, ["Created", "Updated"])
      assert.match(result.future ?? "", /^2099-01-01T/)

      // What the gateway stored: the microblog feed's options as edited.
      const stored = yield* Effect.promise(() => gateway("GET", `${MODULES}/microblog/feeds`))
      const options = (stored.body["feeds"] as Array<{ webhook_options: Record<string, unknown> }>)[0]!.webhook_options
      assert.deepInclude(options, { filter_words: ["gateway", "news"], filter_mode: "AND", "webhook-name": "Bird news", "no-avatar-overwrite": true })
    }).pipe(Effect.scoped),
    { timeout: 90_000 })
})

if (CHROMIUM === undefined) console.warn("control panel feeds in Chromium: skipped, no Chromium binary (/usr/bin/chromium); apt-get install -y chromium")
