/**
 * A feed's messages in the control panel as the chat platform would show them (issue #34 item 5,
 * delivery.md §10), in headless Chromium against the gateway in sandbox mode. Feeds made through
 * the API, each previewed in the panel and checked against the preview route's own answer:
 * - an embed feed: the card with its colour bar (the computed style), the title linked to the item,
 *   the image loaded, the footer; the feed's role mention as `@Moderators`, said to ping;
 * - a split feed: its parts as consecutive messages, together the text the route gives;
 * - a forum webhook's feed: the post's title and its tags by name;
 * - hostile source text (`<script>`, `<img onerror>`, `@everyone`, a role the server lacks): shown
 *   as text, nothing runs, nothing is injected, no ping;
 * - the test message shown as it was posted; the feed editor's role picker saves ids; a field's
 *   error goes as soon as the field is edited.
 * axe-core on the new screens; screenshots (into docs/screenshots/ with UPDATE_SCREENSHOTS=1).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID, BOT2_ID, CHANNEL_INDEX, channelId, roleId, S1_ID } from "../../src/sandbox/Seed.ts"
import { CLIENT_REDIRECT, TestApp, tokenOf } from "../utils/TestApp.ts"
import { axe, buildPanel, CHROMIUM, defaults, gatewayAs, heading, launchChromium, shot, SHOTS, signInAsAlice } from "./PanelFixtures.ts"

buildPanel()

const MODULES = `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules`
const GENERAL = channelId(1, CHANNEL_INDEX.text)
const MODERATORS = roleId(1, 1)
const MEMBERS = roleId(1, 2)
const HOSTILE = `<script>window.pwned="script"</script><img src=x onerror="window.pwned='img'"> @everyone <@&${roleId(1, 99)}> **really**`
const LONG = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of the long post, with enough words to fill the message up quickly.`).join("\n")

layer(
  TestApp.layer({
    capabilities: { db: "pglite" },
    // Polled once when a feed is created (its baseline), then only when asked: previews stay put.
    config: { allowedRedirectUris: [CLIENT_REDIRECT, ...defaults.allowedRedirectUris], delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 3600 } }
  }),
  { excludeTestServices: true, timeout: 120_000 }
)("control panel: messages as the platform shows them", (it) => {
  it.effect.skipIf(CHROMIUM === undefined)("in Chromium: embed card, role chips, split parts, forum post, hostile text, test message, role picker", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const gateway = gatewayAs(app.url, yield* tokenOf(ALICE_ID))
      mkdirSync(SHOTS, { recursive: true })
      const violations: Array<string> = []
      const browser = yield* launchChromium
      const ok = async (method: string, path: string, body?: unknown, status = 200) => {
        const r = await gateway(method, path, body)
        assert.strictEqual(r.status, status, `${method} ${path}: ${JSON.stringify(r.body)}`)
        return r.body
      }
      const feed = async (module: string, feed_identifier: string, target: Record<string, string>, webhook_options: Record<string, unknown>) =>
        (await ok("POST", `${MODULES}/${module}/feeds`, { feed_identifier, ...target, webhook_options }))["id"] as string
      const previewOf = async (module: string, id: string) => (await ok("GET", `${MODULES}/${module}/feeds/${id}/preview`))["items"] as Array<any>

      const setup = yield* Effect.promise(async () => {
        const csp = (await fetch(`${app.url}/app`)).headers.get("content-security-policy") ?? ""
        await ok("POST", "/sandbox/sources/rss/panel-embed/events", { type: "post", title: "Release 1.9", url: "https://example.com/release-1-9" }, 201)
        const embed = await feed("rss", `${app.url}/sandbox/rss/panel-embed.xml`, { webhook_channel: GENERAL }, {
          embed: true,
          embed_color: "#e91e63",
          mention_roles: [MODERATORS],
          custom_header: "New on %feed_name%"
        })
        // Its first poll done (the baseline, which posts nothing), the next item would be posted.
        const deadline = Date.now() + 30_000
        while ((await ok("GET", `${MODULES}/rss/feeds/${embed}/status`))["last_poll_at"] === null && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 250))
        }
        await ok("POST", "/sandbox/sources/rss/panel-embed/events", {
          type: "post",
          title: "Release 2.0 is out",
          url: "https://example.com/release-2",
          author: "Ada",
          text: "<p>The <b>biggest</b> release yet. Read <a href=\"https://example.com/notes\">the notes</a>.</p>",
          media: [`${app.url}/assets/modules/rss.svg`]
        }, 201)
        await ok("POST", "/sandbox/sources/rss/panel-split/events", { type: "post", title: "A long post", url: "https://example.com/long", text: LONG }, 201)
        const split = await feed("rss", `${app.url}/sandbox/rss/panel-split.xml`, { webhook_channel: GENERAL }, { split: true, custom_header: "%content_clean%" })
        const sandbox = await ok("GET", "/sandbox")
        const forum = (sandbox["servers"] as Array<any>).find((s) => s.id === S1_ID).forums[0]
        await ok("POST", "/sandbox/sources/rss/panel-forum/events", { type: "post", title: "Security fix for 2.0", url: "https://example.com/fix" }, 201)
        const post = await feed("rss", `${app.url}/sandbox/rss/panel-forum.xml`, { webhook_url: forum.webhook_url }, { forum_tags: ["News", "Security"] })
        await ok("POST", "/sandbox/sources/forum/SandboxGaming/events", { type: "post", title: HOSTILE, author: "mallory" }, 201)
        const hostile = await feed("forum", "SandboxGaming", { webhook_channel: GENERAL }, { custom_header: "%title%", embed: true })
        const tagIds = (forum.tags as Array<{ id: string; name: string }>).filter((t) => t.name === "News" || t.name === "Security").map((t) => t.id)
        return {
          csp,
          tagIds,
          ids: { embed, split, post, hostile },
          routes: { embed: await previewOf("rss", embed), split: await previewOf("rss", split), post: await previewOf("rss", post), hostile: await previewOf("forum", hostile) }
        }
      })

      const result = yield* Effect.promise(async () => {
        const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, bypassCSP: true })
        const page = await context.newPage()
        page.setDefaultTimeout(15_000)
        page.on("dialog", (d) => void d.accept())
        const errors: Array<string> = []
        page.on("pageerror", (e) => errors.push(e.message))
        const base = `${app.url}/app/bots/${BOT2_ID}/servers/${S1_ID}/feeds`
        const preview = async (module: string, id: string) => {
          await page.goto(`${base}/${module}/${id}/preview`)
          await heading(page, "Preview: what the feed would post now")
          await page.locator(".preview-item .chat").first().waitFor()
          return page.locator(".preview-item").first()
        }
        await page.goto(`${app.url}/app`)
        await signInAsAlice(page)
        await heading(page, "Bots")

        // The embed feed: card, colour bar, title link, image, footer; the role by name.
        const item = await preview("rss", setup.ids.embed)
        const image = item.locator("img.embed-image")
        await image.waitFor()
        await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>("img.embed-image")].every((i) => i.complete))
        const embed = {
          bar: await item.locator(".embed").evaluate((el) => getComputedStyle(el).borderLeftColor),
          barWidth: await item.locator(".embed").evaluate((el) => getComputedStyle(el).borderLeftWidth),
          title: await item.locator("a.embed-title").textContent(),
          href: await item.locator("a.embed-title").getAttribute("href"),
          imageWidth: await image.evaluate((i: HTMLImageElement) => i.naturalWidth),
          footer: await item.locator(".embed-footer").textContent(),
          description: await item.locator(".embed-description").innerHTML(),
          author: await item.locator(".embed-author").textContent(),
          chips: await item.locator(".msg-content .role-mention").evaluateAll((els) => els.map((e) => `${e.textContent}|${e.className}`)),
          name: await item.locator(".msg-author").textContent(),
          pings: await item.locator(".msg-pings").textContent()
        }
        await item.locator(".as-sent summary").click()
        const asSent = JSON.parse((await item.locator(".as-sent pre").textContent()) ?? "null")
        violations.push(...await axe(page, "preview with an embed"))
        await page.evaluate(() => window.scrollTo(0, 0))
        await item.locator(".as-sent summary").click()
        await shot(page, "feed-message")

        // The split feed: its parts one after the other.
        const splitItem = await preview("rss", setup.ids.split)
        const parts = await splitItem.locator(".chat-message").evaluateAll((els) =>
          els.map((e) => ({ label: e.getAttribute("aria-label"), text: (e.querySelector(".msg-content") as HTMLElement).innerText })))

        // The forum webhook's feed: a post with its title and tags, as the preview route names them.
        const postItem = await preview("rss", setup.ids.post)
        const forum = { title: await postItem.locator(".forum-title").textContent(), tags: await postItem.locator(".forum-tags li").allTextContents() }
        violations.push(...await axe(page, "preview of a forum post"))

        // Hostile text from the source: shown as written.
        const hostileItem = await preview("forum", setup.ids.hostile)
        await page.waitForTimeout(300)
        const hostile = {
          pwned: await page.evaluate(() => (window as unknown as { pwned?: string }).pwned ?? null),
          injected: await page.evaluate(() => document.querySelectorAll("main script, img[src='x'], [onerror]").length),
          content: await hostileItem.locator(".msg-content").textContent(),
          embedTitle: await hostileItem.locator(".embed-title").textContent(),
          noPing: await hostileItem.locator(".msg-content .no-ping").allTextContents(),
          chips: await hostileItem.locator(".msg-content .role-mention").evaluateAll((els) => els.map((e) => `${e.textContent}|${e.className}`)),
          bold: await hostileItem.locator(".msg-content strong").allTextContents(),
          pings: await hostileItem.locator(".msg-pings").textContent()
        }

        // The test message of the embed feed: shown as posted.
        await page.goto(`${base}/rss/${setup.ids.embed}`)
        await heading(page, /^RSS feed/)
        await page.getByRole("button", { name: "Send a test message" }).click()
        const tested = page.locator(".test-message")
        await tested.locator(".embed").waitFor()
        const test = {
          said: await tested.locator(".hint").first().textContent(),
          title: await tested.locator("a.embed-title").textContent(),
          chip: await tested.locator(".role-mention").textContent()
        }
        violations.push(...await axe(page, "test message"))
        await tested.scrollIntoViewIfNeeded()
        await shot(page, "feed-test-message")

        // The role picker: ticked by name, stored as ids; a refused colour's error goes when it is edited.
        const picker = page.getByRole("group", { name: "Roles to mention" })
        const ticked = await picker.locator("input:checked").evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))
        const offered = await picker.locator("label").allTextContents()
        await picker.getByLabel("@Members").check()
        const colour = page.getByLabel("Embed colour (#rrggbb)")
        await colour.fill("red")
        await page.getByRole("button", { name: "Save the options" }).click()
        const colourError = page.locator("#f-webhook-options-embed-color-error")
        await colourError.waitFor()
        const refused = { text: await colourError.textContent(), invalid: await colour.getAttribute("aria-invalid") }
        await colour.fill("#00ff00")
        const afterEdit = { error: await colourError.count(), invalid: await colour.getAttribute("aria-invalid"), alerts: await page.getByRole("alert").count() }
        violations.push(...await axe(page, "feed editor with the role picker"))
        await page.getByRole("button", { name: "Save the options" }).click()
        await page.getByText(/^Saved the options of/).waitFor()
        await picker.evaluate((el) => el.scrollIntoView({ block: "center" }))
        await shot(page, "feed-roles")
        await context.close()
        return { embed, asSent, parts, forum, hostile, test, ticked, offered, refused, afterEdit, errors }
      })

      const { routes } = setup
      assert.deepStrictEqual(violations, [], "no serious or critical accessibility violation")
      assert.deepStrictEqual(result.errors, [], "no error in the page")
      assert.match(setup.csp, /img-src 'self' data: https:/, "images of the sources' hosts may load")

      const sent = routes.embed[0].message
      assert.strictEqual(routes.embed[0].verdict, "post", JSON.stringify(routes.embed[0].reasons))
      assert.strictEqual(result.embed.bar, "rgb(233, 30, 99)", "the colour bar is the embed's colour")
      assert.strictEqual(result.embed.barWidth, "4px")
      assert.strictEqual(result.embed.title, "Release 2.0 is out")
      assert.strictEqual(result.embed.href, "https://example.com/release-2")
      assert.strictEqual(result.embed.imageWidth, 64, "the image loaded")
      assert.include(result.embed.footer, sent.embeds[0].footer.text)
      assert.include(result.embed.footer, " • ")
      assert.include(result.embed.description, "<strong>biggest</strong>")
      assert.include(result.embed.description, "href=\"https://example.com/notes\"")
      assert.strictEqual(result.embed.author, "Ada")
      assert.deepStrictEqual(result.embed.chips, ["@Moderators|role-mention pings"])
      assert.strictEqual(result.embed.name, sent.username)
      assert.strictEqual(result.embed.pings, "Pings @Moderators; other mentions in the text notify nobody.")
      assert.deepStrictEqual(result.asSent, sent, "“As sent” is the route's message, key for key")

      const splitSent = routes.split[0].message
      assert.isAtLeast(splitSent.continued.length, 1, "the route split it")
      assert.deepStrictEqual(result.parts.map((p) => p.label), [splitSent, ...splitSent.continued].map((_: unknown, i: number, all: Array<unknown>) => `Message ${i + 1} of ${all.length}`))
      assert.deepStrictEqual(result.parts.map((p) => p.text), [splitSent.content, ...splitSent.continued], "each part's text, line for line")

      const postSent = routes.post[0].message
      assert.deepStrictEqual({ name: postSent.thread_name, tags: postSent.applied_tags }, { name: "Security fix for 2.0", tags: setup.tagIds }, "the route names the forum post and its tags")
      assert.deepStrictEqual(result.forum, { title: "Security fix for 2.0", tags: ["News", "Security"] })

      assert.strictEqual(routes.hostile[0].message.content, HOSTILE, "the route passes the title as written")
      assert.isNull(result.hostile.pwned, "nothing ran")
      assert.strictEqual(result.hostile.injected, 0, "no element injected")
      assert.strictEqual(result.hostile.content, HOSTILE.replace(`<@&${roleId(1, 99)}>`, "@unknown-role").replace("**really**", "really"))
      assert.strictEqual(result.hostile.embedTitle, HOSTILE)
      assert.deepStrictEqual(result.hostile.noPing, ["@everyone"])
      assert.deepStrictEqual(result.hostile.chips, ["@unknown-role|role-mention unknown"], "a role from the source: named, not pinged")
      assert.deepStrictEqual(result.hostile.bold, ["really"])
      assert.strictEqual(result.hostile.pings, "Pings no one: mentions in the text are shown, but notify nobody.")

      assert.match(result.test.said ?? "", /^Posted as message \d+: the source's newest item/)
      assert.strictEqual(result.test.title, "Release 2.0 is out")
      assert.strictEqual(result.test.chip, "@Moderators")

      assert.deepStrictEqual(result.ticked, [MODERATORS], "the stored id, ticked by its name")
      assert.includeMembers(result.offered.map((l) => l.trim()), ["@Moderators", "@Members"])
      assert.notInclude(result.offered.map((l) => l.trim()), "@everyone", "@everyone is not offered (the gateway refuses it)")
      assert.include(result.refused.text, "#rrggbb")
      assert.strictEqual(result.refused.invalid, "true")
      assert.deepStrictEqual(result.afterEdit, { error: 0, invalid: null, alerts: 0 }, "the colour's error went when it was edited")
      const stored = yield* Effect.promise(() => ok("GET", `${MODULES}/rss/feeds`))
      const options = (stored["feeds"] as Array<any>).find((f) => f.id === setup.ids.embed).webhook_options
      assert.deepStrictEqual({ mention_roles: options.mention_roles, embed_color: options.embed_color }, { mention_roles: [MODERATORS, MEMBERS], embed_color: "#00ff00" })
    }).pipe(Effect.scoped),
    { timeout: 120_000 })
})

if (CHROMIUM === undefined) console.warn("control panel messages in Chromium: skipped, no Chromium binary (/usr/bin/chromium); apt-get install -y chromium")
