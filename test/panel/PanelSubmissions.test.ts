/**
 * The control panel's publications and submissions (issue #32 item 6) as a user meets them, in
 * headless Chromium against the gateway in sandbox mode with its worker: a form published to a
 * channel picked from the server's channels (the start message in the sandbox), its publications;
 * its submissions (two members', stored as the forms runtime stores them) listed and filtered by
 * status; one opened with its answers (a private one marked) and effects; passed with a priority,
 * the review message edited in the channel; the other dropped with a reason. axe-core on every screen, screenshots of the list and
 * the detail (into docs/screenshots/ with UPDATE_SCREENSHOTS=1).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { mkdirSync } from "node:fs"
import { ALICE_ID, BOB_ID, BOT1_ID, CAROL_ID, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { CLIENT_REDIRECT, TestApp, tokenOf } from "../utils/TestApp.ts"
import { channelMessages, createForm, eventually, FEEDS, FORMS, GENERAL, seedSubmission } from "../api/SubmissionsHttpFixtures.ts"
import { axe, buildPanel, CHROMIUM, defaults, gatewayAs, heading, launchChromium, shot, SHOTS, signInAsAlice } from "./PanelFixtures.ts"

buildPanel()

const TITLE = "Moderator application"

layer(
  TestApp.layer({ capabilities: { db: "pglite" }, config: { allowedRedirectUris: [CLIENT_REDIRECT, ...defaults.allowedRedirectUris] } }),
  { excludeTestServices: true, timeout: 120_000 }
)("control panel: publications and submissions", (it) => {
  it.effect.skipIf(CHROMIUM === undefined)("in Chromium: publish to a channel, list and filter submissions, open one, pass it with a priority, drop another with a reason", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const token = yield* tokenOf(ALICE_ID)
      mkdirSync(SHOTS, { recursive: true })
      const formId = yield* createForm(token, { title: TITLE, color_hex: "#2e7d32" })
      const carolId = yield* seedSubmission(formId, { id: CAROL_ID, name: "Carol" }, ["Carol Danvers", "I moderate two other communities and know the rules well.", "carol@example.org"])
      const bobId = yield* seedSubmission(formId, { id: BOB_ID, name: "Bob" }, ["Bob Builder", "I am online every evening (UTC) and like helping newcomers.", "bob@example.org"])
      // A card made for it on the task board (forms-runtime.md §5): the page links it.
      yield* (yield* SqlClient.SqlClient)`UPDATE form_submissions SET card_url = 'https://trello.com/c/sandbox-card' WHERE id = ${bobId}`
      // The review messages are in the channel before the panel shows the submissions.
      const gateway = gatewayAs(app.url, token)
      yield* eventually(
        Effect.promise(() => gateway("GET", `${FORMS}/${formId}/submissions/${bobId}`)),
        (r) => (r.body.effects as Array<any>).some((e) => e.kind === "review_message" && e.state === "done")
      )
      const violations: Array<string> = []
      const browser = yield* launchChromium

      const seen = yield* Effect.promise(async () => {
        const context = await browser.newContext({ viewport: { width: 1000, height: 760 }, bypassCSP: true })
        const page = await context.newPage()
        page.setDefaultTimeout(15_000)
        page.on("dialog", (d) => void d.accept())
        await page.goto(`${app.url}/app`)
        await signInAsAlice(page)
        await heading(page, "Bots")
        await page.locator(`a[href="/app/bots/${BOT1_ID}"]`).click()
        await page.locator(`a[href="/app/bots/${BOT1_ID}/servers/${S1_ID}"]`).click()
        await heading(page, "Modules on Sandbox One")
        await page.locator(`a.card[href$="/forms"]`).click()
        await heading(page, /^Forms on/)

        // Publish: a channel from the server's channels (text and news only).
        await page.getByRole("link", { name: `Publish ${TITLE}` }).click()
        await heading(page, `Publish “${TITLE}”`)
        await page.getByText("This form is not published anywhere yet.").waitFor()
        const choices = await page.locator("#publish-channel option").allTextContents()
        await page.getByLabel("Channel").selectOption({ label: "#feeds" })
        violations.push(...await axe(page, "publish"))
        await page.getByRole("button", { name: "Publish", exact: true }).click()
        await page.getByText("Published in #feeds.").waitFor()
        const publicationRow = await page.getByRole("row").filter({ hasText: "#feeds" }).textContent()
        await shot(page, "form-publish")

        // The submissions: newest first, then filtered.
        await page.getByRole("link", { name: "Submissions", exact: true }).click()
        await heading(page, `Submissions of “${TITLE}”`)
        await page.getByRole("table").waitFor()
        const members = await page.locator("tbody tr td:nth-child(2)").allTextContents()
        violations.push(...await axe(page, "submissions"))
        await shot(page, "submissions")
        await page.getByLabel("Status").selectOption("accepted")
        await page.getByText("No submission matches this filter.").waitFor()
        await page.getByLabel("Status").selectOption("pending")
        await page.getByRole("table").waitFor()

        // One submission: answers (the private one marked), effects; pass it with priority high.
        await page.getByRole("link", { name: `#${bobId}` }).click()
        await heading(page, `Submission #${bobId}`)
        await page.getByText("I am online every evening (UTC) and like helping newcomers.").waitFor()
        const answers = await page.locator(".answers dt").allTextContents()
        const effects = await page.locator(".effects li").allTextContents()
        const cardLink = await page.getByRole("link", { name: "https://trello.com/c/sandbox-card" }).getAttribute("href")
        violations.push(...await axe(page, "submission"))
        await page.screenshot({ path: `${SHOTS}/submission.png`, fullPage: true })
        await page.getByLabel("Priority").selectOption("high")
        await page.getByRole("button", { name: "Pass" }).click()
        await page.getByText("Passed: the member gets a direct message.").waitFor()
        await page.getByText("Accepted — priority high").waitFor()
        const reviewGone = await page.getByRole("button", { name: "Pass" }).count()
        violations.push(...await axe(page, "submission reviewed"))
        await shot(page, "submission-reviewed")

        // Carol's: dropped with a reason, which the page then shows; the list follows.
        await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Submissions" }).click()
        await heading(page, `Submissions of “${TITLE}”`)
        await page.getByRole("link", { name: `#${carolId}` }).click()
        await heading(page, `Submission #${carolId}`)
        await page.getByLabel(/^Reason/).fill("We need moderators for the evening shift.")
        await page.getByRole("button", { name: "Drop" }).click()
        await page.getByText("Dropped: the member gets a direct message.").waitFor()
        await page.getByText("We need moderators for the evening shift.").waitFor()
        const droppedStatus = await page.locator(".facts dd").nth(3).textContent()
        await context.close()
        return { choices, publicationRow, members, answers, effects, cardLink, reviewGone, droppedStatus }
      })

      assert.deepStrictEqual(seen.choices, ["Choose a channel", "#general", "#feeds", "#announcements (news)"])
      assert.include(seen.publicationRow, "#feeds")
      const started = (yield* channelMessages(FEEDS)).filter((m) => m.body.embeds?.[0]?.title === TITLE && !m.deleted)
      assert.strictEqual(started.length, 1, "the start message is in #feeds")
      assert.deepStrictEqual(seen.members, ["Bob", "Carol"])
      assert.deepStrictEqual(seen.answers, ["Your name?", "Motivation", "Your e-mail address?private"])
      assert.isTrue(seen.effects.some((e) => e.startsWith("Review message: Done (in #general, message")), JSON.stringify(seen.effects))
      assert.strictEqual(seen.reviewGone, 0, "no review buttons once decided")
      assert.strictEqual(seen.cardLink, "https://trello.com/c/sandbox-card")
      const detail = yield* Effect.promise(() => gateway("GET", `${FORMS}/${formId}/submissions/${bobId}`))
      assert.deepInclude(detail.body, { status: "accepted", priority: "high" })
      const carol = yield* Effect.promise(() => gateway("GET", `${FORMS}/${formId}/submissions/${carolId}`))
      assert.deepInclude(carol.body, { status: "denied", reason: "We need moderators for the evening shift." })
      assert.strictEqual(seen.droppedStatus, "Denied")
      const reviewMessage = detail.body.effects.find((e: any) => e.kind === "review_message")
      const edited = yield* eventually(
        Effect.map(channelMessages(GENERAL), (ms) => ms.find((m) => m.id === reviewMessage.message_id)),
        (m) => typeof m?.body.content === "string" && m.body.content.startsWith("Passed by")
      )
      assert.match(edited.body.content, /^Passed by .+ — priority high$/)
      assert.deepStrictEqual(violations, [])
    }))
})
