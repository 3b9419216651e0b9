/**
 * The control panel (/app) as a user meets it, in real headless Chromium against the gateway in
 * sandbox mode: sign in (PKCE), bots → servers → modules (unavailable ones explained), a form with
 * steps created, edited (a refused save shown at its field) and deleted, an ended session that signs
 * in again and comes back, sign-out that revokes. Every screen is scanned with axe-core (no serious
 * or critical violation) and photographed (into docs/screenshots/ with UPDATE_SCREENSHOTS=1). One browser for the file.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { request } from "node:http"
import { ALICE_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { CLIENT_REDIRECT, raw, TestApp, typedClient, tokenOf } from "../utils/TestApp.ts"
import { BotId, ServerId } from "../../src/http/client.ts"
import { axe, buildPanel, CHROMIUM, defaults, launchChromium, shot, SHOTS } from "./PanelFixtures.ts"

const FORMS_BOT = "200000000000000001"

buildPanel()

/** POST /auth/idp/token/check as a client would: the status. */
const checkStatus = (url: string, token: string) =>
  new Promise<number>((done, fail) => {
    request(`${url}/auth/idp/token/check`, { method: "POST", headers: { authorization: `Bearer ${token}`, "user-agent": "panel-test" } }, (res) => {
      res.resume()
      res.on("end", () => done(res.statusCode!))
    }).on("error", fail).end()
  })

layer(
  TestApp.layer({ capabilities: "memory", config: { allowedRedirectUris: [CLIENT_REDIRECT, ...defaults.allowedRedirectUris] } }),
  { excludeTestServices: true, timeout: 60_000 }
)("control panel", (it) => {
  it.effect("the default sandbox allowlist has PUBLIC_URL/app/callback", () =>
    Effect.sync(() => {
      assert.include(defaults.allowedRedirectUris, `${defaults.publicUrl}/app/callback`)
    }))

  it.effect("/app and any path under it answer the shell; its assets are hashed, compressed and cacheable", () =>
    Effect.gen(function*() {
      const deep = yield* raw({ headers: { "accept-encoding": "br" } }, "/app/bots/1/servers/2/forms")
      assert.strictEqual(deep.status, 200)
      assert.strictEqual(deep.headers.get("cache-control"), "no-cache")
      assert.match(deep.headers.get("content-security-policy") ?? "", /script-src 'self'/)
      const html = yield* Effect.promise(() => deep.text())
      assert.notMatch(html, /https?:\/\/(?!127\.0\.0\.1)/, "no asset from another host")
      const assets = [...html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1]!)
      assert.lengthOf(assets, 2, html)
      for (const path of assets) {
        assert.match(path, /\/app-[A-Za-z0-9_-]{16}\.(js|css)$/)
        const res = yield* raw({ headers: { "accept-encoding": "br" } }, path)
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.headers.get("content-encoding"), "br")
        assert.strictEqual(res.headers.get("cache-control"), "public, max-age=31536000, immutable")
      }
      assert.strictEqual((yield* raw({}, "/app/assets/app-0000000000000000.js")).status, 404)
    }))

  it.effect("/favicon.ico, asked for by every page, is a 32×32 icon", () =>
    Effect.gen(function*() {
      const res = yield* raw({}, "/favicon.ico")
      assert.strictEqual(res.status, 200)
      assert.strictEqual(res.headers.get("content-type"), "image/x-icon")
      const bytes = new Uint8Array(yield* Effect.promise(() => res.arrayBuffer()))
      assert.deepStrictEqual([...bytes.subarray(0, 8)], [0, 0, 1, 0, 1, 0, 32, 32], "ICONDIR: an icon, one image, 32×32")
      assert.strictEqual(bytes.length, 6 + 16 + 40 + 32 * 32 * 4 + 32 * 4)
    }))

  it.effect.skipIf(CHROMIUM === undefined)("in Chromium: sign in, navigate, create, edit and delete a form, session end, sign out", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      mkdirSync(SHOTS, { recursive: true })
      const violations: Array<string> = []
      const browser = yield* launchChromium
      const result = yield* Effect.promise(async () => {
        // bypassCSP: axe-core is injected as an inline script, which the panel's CSP refuses.
        const context = await browser.newContext({ viewport: { width: 1000, height: 760 }, bypassCSP: true })
        const page = await context.newPage()
        page.setDefaultTimeout(15_000)
        const logins: Array<string> = []
        const foreign: Array<string> = []
        let lastAccess = ""
        page.on("request", (r) => {
          const url = new URL(r.url())
          if (url.pathname === "/auth/idp/login") logins.push(r.url())
          if (!r.url().startsWith(`${app.url}/`) && !r.url().startsWith("data:")) foreign.push(r.url())
          const authorization = r.headers()["authorization"]
          if (url.pathname.startsWith("/api/") && authorization?.startsWith("Bearer ")) lastAccess = authorization.slice(7)
        })
        page.on("dialog", (d) => void d.accept())
        const heading = (name: string | RegExp) => page.getByRole("heading", { level: 1, name }).waitFor()
        const signInAsAlice = async () => {
          await page.getByRole("button", { name: "Sign in" }).click()
          await page.getByRole("link", { name: new RegExp(`Sign in as Alice .*${ALICE_ID}`) }).click()
        }

        // Sign in.
        await page.goto(`${app.url}/app`)
        await heading("Gateway control panel")
        violations.push(...await axe(page, "sign-in"))
        await shot(page, "sign-in")
        await signInAsAlice()
        await heading("Bots")
        const login = new URL(logins[0]!)
        const started = {
          redirect: login.searchParams.get("redirect_uri"),
          method: login.searchParams.get("code_challenge_method"),
          state: login.searchParams.get("state")?.length ?? 0
        }
        const stored = await page.evaluate(() => Object.keys(sessionStorage))
        violations.push(...await axe(page, "bots"))
        await shot(page, "bots")

        // Bots → servers → modules: S2, where Alice may not manage webhooks.
        await page.getByRole("link", { name: /FormsBot/ }).click()
        await heading("Servers of FormsBot")
        const servers = await page.locator("main li strong").allTextContents()
        violations.push(...await axe(page, "servers"))
        await shot(page, "servers")
        await page.getByRole("link", { name: /Sandbox Two/ }).click()
        await heading("Modules on Sandbox Two")
        const unavailable = await page.locator("li.unavailable").allTextContents()
        violations.push(...await axe(page, "modules"))
        await shot(page, "modules")

        // S1's forms: an empty list, then a new form with three steps.
        await page.getByRole("link", { name: "Servers", exact: true }).click()
        await page.getByRole("link", { name: /Sandbox One/ }).click()
        await page.getByRole("link", { name: /Forms/ }).first().click()
        await heading("Forms on Sandbox One")
        await page.getByText("This server has no form yet.").waitFor()
        await page.getByRole("link", { name: "New form" }).click()
        await heading("New form")
        await page.getByLabel("Title").fill("Applications")
        await page.getByLabel("Channel", { exact: true }).selectOption({ label: "#general" })
        await page.getByRole("checkbox", { name: "@Moderators" }).first().check()
        for (let i = 0; i < 3; i++) await page.getByRole("button", { name: "Add a step" }).click()
        const step = (n: number) => page.getByRole("group", { name: `Step ${n}`, exact: true })
        await step(1).getByLabel("Question").fill("Why do you want to join?")
        await step(1).getByLabel("Minimum").fill("10")
        await step(1).getByLabel("Maximum").fill("500")
        await step(1).getByLabel("Alias").fill("reason")
        await step(2).getByLabel("Question").fill("To be removed")
        await step(3).getByLabel("Type").selectOption("reaction")
        await step(3).getByLabel("Question").fill("Pick a team")
        await step(3).getByLabel("Answers, one per line").fill("Red\nBlue")
        await page.getByRole("button", { name: "Remove step 2" }).click()
        await page.getByRole("button", { name: "Move step 2 up" }).click()
        violations.push(...await axe(page, "editor"))
        await page.evaluate(() => window.scrollTo(0, 0))
        await shot(page, "form-editor")
        await page.getByRole("button", { name: "Create the form" }).click()
        await page.getByText("Created the form “Applications”.").waitFor()
        const created = new URL(page.url()).pathname

        // Edit: live without a channel is refused by the gateway, at the channel field.
        await page.getByLabel("Live (members can submit it)").check()
        await page.getByLabel("Channel", { exact: true }).selectOption({ label: "No channel" })
        await page.getByRole("button", { name: "Save changes" }).click()
        const fieldError = page.locator("#f-channel-id-error")
        await fieldError.waitFor()
        const refused = {
          text: await fieldError.textContent(),
          invalid: await page.getByLabel("Channel", { exact: true }).getAttribute("aria-invalid"),
          alert: await page.getByRole("alert").first().textContent()
        }
        violations.push(...await axe(page, "editor with an error"))
        await shot(page, "form-error")
        await page.getByLabel("Channel", { exact: true }).selectOption({ label: "#announcements" })
        await page.getByRole("button", { name: "Save changes" }).click()
        await page.getByText("Saved the form “Applications”.").waitFor()
        const stepsShown = await page.locator("fieldset.step textarea[id$='-string']").evaluateAll((ts) => ts.map((t) => (t as HTMLTextAreaElement).value))

        // The session ends elsewhere (its refresh token rotated by another client): sign in again, and back.
        const refresh = JSON.parse((await page.evaluate(() => sessionStorage.getItem("bmg.panel.session")))!).refresh as string
        const rotated = await fetch(`${app.url}/auth/idp/token/refresh`, { method: "POST", headers: { "x-refresh-token": refresh, "user-agent": "panel-test" } })
        const formsPath = created.replace(/\/\d+$/, "")
        await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Forms" }).click()
        await page.getByText("Your session has ended. Sign in again to go back to where you were.").waitFor()
        await signInAsAlice()
        await heading("Forms on Sandbox One")
        const backAt = new URL(page.url()).pathname
        violations.push(...await axe(page, "forms"))
        await shot(page, "forms")
        await page.emulateMedia({ colorScheme: "dark" })
        violations.push(...await axe(page, "forms, dark"))
        await shot(page, "forms-dark")
        await page.emulateMedia({ colorScheme: "light" })

        // Delete.
        await page.getByRole("button", { name: "Delete Applications" }).click()
        await page.getByText("Deleted the form “Applications”.").waitFor()
        await page.getByText("This server has no form yet.").waitFor()

        // Sign out: the tokens are revoked and forgotten.
        const access = lastAccess
        await page.getByRole("button", { name: "Sign out" }).click()
        await page.getByText("You are signed out. Your tokens were revoked.").waitFor()
        const left = await page.evaluate(() => sessionStorage.getItem("bmg.panel.session"))
        await context.close()
        return { started, stored, servers, unavailable, created, refused, stepsShown, rotated: rotated.status, formsPath, backAt, access, left, foreign }
      })

      assert.deepStrictEqual(violations, [], "no serious or critical accessibility violation")
      assert.strictEqual(result.started.redirect, `${app.url}/app/callback`)
      assert.strictEqual(result.started.method, "S256")
      assert.isAtLeast(result.started.state, 16)
      assert.deepStrictEqual(result.stored, ["bmg.panel.session"], "only the refresh token's record is stored")
      assert.includeMembers(result.servers, ["Sandbox One", "Sandbox Two"])
      assert.lengthOf(result.unavailable, 6, "the six feed modules are shown, unavailable")
      for (const text of result.unavailable) assert.include(text, "Unavailable: you need Manage Server and Manage Webhooks")
      assert.match(result.created, new RegExp(`^/app/bots/${FORMS_BOT}/servers/${S1_ID}/forms/\\d+$`))
      assert.include(result.refused.text, "is required when workflow_live is true")
      assert.strictEqual(result.refused.invalid, "true")
      assert.include(result.refused.alert, "The form was not saved")
      assert.deepStrictEqual(result.stepsShown, ["Pick a team", "Why do you want to join?"], "step 2 moved up, the removed step gone")
      assert.strictEqual(result.rotated, 200)
      assert.strictEqual(result.backAt, result.formsPath, "back where the user was after signing in again")
      assert.isNull(result.left, "the refresh token is gone from sessionStorage")
      assert.deepStrictEqual(result.foreign, [], "every request goes to the gateway")
      assert.strictEqual(yield* Effect.promise(() => checkStatus(app.url, result.access)), 401, "the access token is revoked")

      // What the gateway stored: steps in the order shown, every field as edited; then deleted.
      const client = yield* typedClient(yield* tokenOf(ALICE_ID))
      const { forms } = yield* client.forms.list({ params: { appClientId: BotId.make(FORMS_BOT), serverId: ServerId.make(S1_ID) } })
      assert.deepStrictEqual(forms.filter((f) => f.title === "Applications"), [])
    }).pipe(Effect.scoped),
    { timeout: 90_000 })
})

if (CHROMIUM === undefined) console.warn("control panel in Chromium: skipped, no Chromium binary (/usr/bin/chromium); apt-get install -y chromium")
