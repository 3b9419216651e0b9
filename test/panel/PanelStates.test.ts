/**
 * The control panel (issue #17) where things go wrong or run long, in headless Chromium against the
 * gateway in sandbox mode with its worker (polling every second):
 * - a failing feed (its sandbox source answers 500) and a disabled one (the sandbox platform refuses
 *   its webhook with 403 Missing Access when it posts an item) are listed with their state and the
 *   reason in words, as the feed's status route gives it; the feed's own page says the same;
 * - a streaming feed created with the other create path: the streamer looked up by login, the webhook
 *   by a channel picked from the server's list, a game looked up into the games filter;
 * - the audit log past its first page: 23 forms created make two pages of 20; page 2 holds the three
 *   oldest, in order, and "Previous page" goes back to the twenty newest.
 * axe-core on the screens that are new here; the list with both states photographed (feed-states.png, into
 * docs/screenshots/ with UPDATE_SCREENSHOTS=1).
 * One browser for the file.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { GAMES, STREAMING_USERS } from "../../src/sandbox/sources/Seed.ts"
import { ALICE_ID, BOT1_ID, BOT2_ID, S1_ID, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN } from "../../src/sandbox/Seed.ts"
import { CLIENT_REDIRECT, TestApp, tokenOf } from "../utils/TestApp.ts"
import { axe, buildPanel, CHROMIUM, defaults, gatewayAs, heading, launchChromium, shot, SHOTS, signInAsAlice } from "./PanelFixtures.ts"

buildPanel()

const MODULES = `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules`
const FORMS = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules/forms`
const FAILING = "panel-failing"
const DISABLED = "panel-disabled"
const FORM_COUNT = 23
const STREAMER = STREAMING_USERS[0]!
const GAME = GAMES[0]!

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

layer(
  TestApp.layer({
    capabilities: { db: "pglite" },
    config: { allowedRedirectUris: [CLIENT_REDIRECT, ...defaults.allowedRedirectUris], delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1 } }
  }),
  { excludeTestServices: true, timeout: 150_000 }
)("control panel: feed states and paging", (it) => {
  it.effect.skipIf(CHROMIUM === undefined)("in Chromium: failing and disabled feeds with why; a feed by channel picker and game lookup; the audit log's second page and back", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const token = yield* tokenOf(ALICE_ID)
      mkdirSync(SHOTS, { recursive: true })
      const violations: Array<string> = []
      const browser = yield* launchChromium
      /** A request to the gateway outside the panel: the sandbox's controls, or the API as Alice. */
      const gateway = gatewayAs(app.url, token)
      const expect = (r: { status: number; body: unknown }, status: number, what: string) =>
        assert.strictEqual(r.status, status, `${what}: ${JSON.stringify(r.body)}`)
      let published = 0
      const publish = async (source: string) =>
        expect(await gateway("POST", `/sandbox/sources/rss/${source}/events`, { type: "post", title: `Item ${++published}`, url: `https://example.com/${source}/${published}` }), 201, "publish")
      const statusOf = async (id: string) => (await gateway("GET", `${MODULES}/rss/feeds/${id}/status`)).body
      /** Polls the feed's status route until `done` holds (the worker runs every second). */
      const until = async (id: string, done: (s: Record<string, any>) => boolean, tick?: () => Promise<void>) => {
        const deadline = Date.now() + 60_000
        let s = await statusOf(id)
        while (!done(s)) {
          if (Date.now() > deadline) throw new Error(`feed ${id} never reached the expected status: ${JSON.stringify(s)}`)
          await tick?.()
          // Once a second: these calls count against Alice's /api limit (120 a minute) with the panel's.
          await sleep(1_000)
          s = await statusOf(id)
        }
        return s
      }

      const setUp = yield* Effect.promise(async () => {
        // Two RSS feeds through the seeded webhook.
        await publish(FAILING)
        await publish(DISABLED)
        const create = async (source: string) => {
          const r = await gateway("POST", `${MODULES}/rss/feeds`, {
            feed_identifier: `${app.url}/sandbox/rss/${source}.xml`,
            webhook_url: `https://discord.com/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`
          })
          expect(r, 200, `create the ${source} feed`)
          return String(r.body["id"])
        }
        const failingId = await create(FAILING)
        const disabledId = await create(DISABLED)

        // Failing: its source answers 500 from now on.
        expect(await gateway("POST", "/sandbox/faults", { route: "GET /sandbox/rss/{feed}", kind: "500", count: 10_000, path: `/sandbox/rss/${FAILING}.xml` }), 200, "fault the source")
        // Disabled: the platform refuses the next message through the webhook (403 Missing Access).
        expect(await gateway("POST", "/sandbox/faults", { route: "POST /webhooks/{id}/{token}", kind: "403", count: 1, path: `/sandbox/discord/api/v10/webhooks/${WEBHOOK_S1_ID}` }), 200, "fault the webhook")
        // Its first poll is the baseline (nothing posted); then each new item is posted, the first one refused.
        await until(disabledId, (s) => s["last_poll_at"] !== null)
        const disabled = await until(disabledId, (s) => s["state"] === "disabled", () => publish(DISABLED))
        const failing = await until(failingId, (s) => s["state"] === "failing")

        // 23 forms, each audited as created, oldest first.
        for (let i = 1; i <= FORM_COUNT; i++) {
          expect(await gateway("POST", FORMS, { title: `Paging ${String(i).padStart(2, "0")}` }), 200, `create form ${i}`)
        }
        return { failingId, disabledId, failing, disabled }
      })

      const shown = yield* Effect.promise(async () => {
        const context = await browser.newContext({ viewport: { width: 1000, height: 760 }, bypassCSP: true })
        const page = await context.newPage()
        page.setDefaultTimeout(20_000)
        await page.goto(`${app.url}/app/bots/${BOT2_ID}/servers/${S1_ID}/feeds/rss`)
        await signInAsAlice(page)
        await heading(page, "RSS feeds on Sandbox One")
        const row = (source: string) => page.getByRole("row").filter({ hasText: `${source}.xml` })
        await row(FAILING).waitFor()
        const cells = async (source: string) => ({
          badge: await row(source).locator(".badge").textContent(),
          why: await row(source).locator(".why").textContent()
        })
        const list = { failing: await cells(FAILING), disabled: await cells(DISABLED) }
        violations.push(...await axe(page, "feeds, failing and disabled"))
        await shot(page, "feed-states")

        // The disabled feed's own page: the same state and reason.
        await page.getByRole("link", { name: `Edit ${app.url}/sandbox/rss/${DISABLED}.xml` }).click()
        await page.locator("#sec-status").waitFor()
        const summary = {
          badge: await page.locator(".summary .badge").textContent(),
          why: await page.locator(".summary .why").textContent()
        }

        // A streaming feed: the streamer by login, a channel picked (not the first one), a game looked up.
        await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Sandbox One" }).click()
        await heading(page, "Modules on Sandbox One")
        await page.locator(`a.card[href$="/feeds/streaming"]`).click()
        await heading(page, "Streaming feeds on Sandbox One")
        await page.getByRole("link", { name: "New feed" }).click()
        await heading(page, "New Streaming feed")
        await page.getByLabel("Streamer login").fill(STREAMER.login)
        await page.getByRole("button", { name: "Look up", exact: true }).click()
        await page.getByText(`Found ${STREAMER.displayName}`).waitFor()
        await page.getByLabel("Channel", { exact: true }).selectOption({ label: "#announcements" })
        await page.getByLabel("Find a game").fill(GAME.name.toLowerCase())
        await page.getByRole("button", { name: "Look up the game" }).click()
        await page.getByText(`Added ${GAME.name} (game ${GAME.id}).`).waitFor()
        const games = await page.getByLabel("Games, one per line").inputValue()
        violations.push(...await axe(page, "new streaming feed"))
        await page.getByRole("button", { name: "Create the feed" }).click()
        await page.getByText(/^Created the feed/).waitFor()
        const streamingPosts = await page.locator(".summary .facts dd").nth(1).textContent()

        // The audit log of the forms' server: page 1 (the 20 newest), page 2, and back.
        await page.goto(`${app.url}/app/bots/${BOT1_ID}/servers/${S1_ID}/audit?module=forms`)
        await heading(page, "Audit log of Sandbox One")
        const what = () => page.locator("tbody tr td:nth-child(5)").allTextContents()
        await page.getByText("Page 1 of 2.").waitFor()
        const first = await what()
        await page.getByRole("link", { name: "Next page" }).click()
        await page.getByText("Page 2 of 2.").waitFor()
        const second = { url: page.url(), rows: await what(), next: await page.getByRole("link", { name: "Next page" }).count() }
        violations.push(...await axe(page, "audit log, page 2"))
        await page.getByRole("link", { name: "Previous page" }).click()
        await page.getByText("Page 1 of 2.").waitFor()
        const back = { url: page.url(), rows: await what(), previous: await page.getByRole("link", { name: "Previous page" }).count() }
        await context.close()
        return { list, summary, games, streamingPosts, first, second, back }
      })

      assert.deepStrictEqual(violations, [], "no serious or critical accessibility violation")
      // The states and reasons, in words, as the status route gives them.
      assert.strictEqual(setUp.failing["state"], "failing")
      assert.match(setUp.failing["reason"], /^The source could not be read: /)
      assert.match(setUp.disabled["reason"], /^The chat webhook may not post in its channel \(403 Missing Access, code 50001\)\./)
      assert.deepStrictEqual(shown.list.failing, { badge: "Failing", why: setUp.failing["reason"] })
      assert.deepStrictEqual(shown.list.disabled, { badge: "Disabled", why: setUp.disabled["reason"] })
      assert.deepStrictEqual(shown.summary, { badge: "Disabled", why: setUp.disabled["reason"] })

      // The streaming feed as stored: the looked-up id, the picked channel's webhook, the looked-up game.
      assert.strictEqual(shown.games, GAME.name)
      assert.match(shown.streamingPosts ?? "", /^#announcements \(webhook “.+”\)$/)
      const streaming = (yield* Effect.promise(() => gateway("GET", `${MODULES}/streaming/feeds`))).body["feeds"] as Array<Record<string, any>>
      assert.lengthOf(streaming, 1)
      assert.strictEqual(streaming[0]!["feed_identifier"], STREAMER.id)
      const channels = (yield* Effect.promise(() => gateway("GET", `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}`))).body["channels"] as Array<{ id: string; name: string }>
      assert.strictEqual(streaming[0]!["webhook_info"]["channel_id"], channels.find((c) => c.name === "announcements")?.id)
      assert.deepStrictEqual(streaming[0]!["webhook_options"]["filter_game"], [GAME.id], "the game, stored by its id")

      // Paging: newest first, 20 a page; the forms were made oldest first.
      const titles = (rows: ReadonlyArray<string>) => rows.map((r) => /^Created form "(.+)" \(#\d+\)$/.exec(r)?.[1] ?? r)
      const name = (i: number) => `Paging ${String(i).padStart(2, "0")}`
      const newest = Array.from({ length: 20 }, (_, k) => name(FORM_COUNT - k))
      assert.deepStrictEqual(titles(shown.first), newest, "page 1: the twenty newest")
      assert.deepStrictEqual(titles(shown.second.rows), [name(3), name(2), name(1)], "page 2: the three oldest")
      assert.strictEqual(new URL(shown.second.url).searchParams.get("page"), "2")
      assert.strictEqual(shown.second.next, 0, "no page after the last")
      assert.deepStrictEqual(titles(shown.back.rows), newest, "back on page 1")
      assert.isNull(new URL(shown.back.url).searchParams.get("page"))
      assert.strictEqual(new URL(shown.back.url).searchParams.get("module"), "forms", "the filter kept across pages")
      assert.strictEqual(shown.back.previous, 0, "no page before the first")
    }).pipe(Effect.scoped),
    { timeout: 150_000 })
})

if (CHROMIUM === undefined) console.warn("control panel feed states in Chromium: skipped, no Chromium binary (/usr/bin/chromium); apt-get install -y chromium")
