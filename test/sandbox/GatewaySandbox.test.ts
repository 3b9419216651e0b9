/**
 * The sandbox as the gateway mounts it (sandbox mode, PUBLIC_URL): `GET /sandbox` lists every
 * source identifier exactly as the feed routes accept it (#12 item 8), publishing takes the listed
 * identifier, webhook URLs are under PUBLIC_URL, and the authorize page sends a code only to the
 * gateway's own callback (#12 item 9).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "node:http"
import { ALICE_ID, BOT2_ID, BOT2_TOKEN, S1_ID, SANDBOX_CLIENT_ID, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN } from "../../src/sandbox/Seed.ts"
import { GAMES } from "../../src/sandbox/sources/Seed.ts"
import { S1_TEXT2 } from "../api/ContractFixtures.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"

const MODULES = ["photo", "forum", "rss", "streaming", "microblog", "video"] as const

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })("the sandbox in the gateway", (it) => {
  it.effect("GET /sandbox lists identifiers the feed routes take as-is (feeds as absolute URLs under PUBLIC_URL)", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const index = yield* json(yield* raw({}, "/sandbox"))
      const sources = index.sources as Record<string, Array<string>>
      assert.deepStrictEqual(sources["rss"], [`${app.url}/sandbox/rss/news.xml`, `${app.url}/sandbox/rss/atom.xml`])
      const token = yield* tokenOf(ALICE_ID)
      const webhookUrl = `${app.url}/sandbox/discord/api/v10/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`
      for (const m of MODULES) {
        assert.isNotEmpty(sources[m], m)
        for (const identifier of sources[m]!) {
          const created = yield* raw({
            method: "POST",
            token,
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ feed_identifier: identifier, webhook_url: webhookUrl })
          }, `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/${m}/feeds`)
          const body = yield* json(created)
          assert.strictEqual(created.status, 200, `${m} ${identifier}: ${JSON.stringify(body)}`)
        }
      }
      // The listed games are names `filter_game` resolves: all of them in one feed.
      const games = index.sources.games as Array<string>
      assert.isNotEmpty(games)
      const filtered = yield* raw({
        method: "POST",
        token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ feed_identifier: sources["streaming"]![0], webhook_channel: S1_TEXT2, webhook_options: { filter_game: games } })
      }, `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/streaming/feeds`)
      const filteredBody = yield* json(filtered)
      assert.strictEqual(filtered.status, 200, JSON.stringify(filteredBody))
      // Stored and answered as the games' ids (decisions.md "Feeds": names resolved on input).
      assert.deepStrictEqual(filteredBody.webhook_options.filter_game, games.map((name) => GAMES.find((g) => g.name === name)!.id))
    }))

  it.effect("the listing is under PUBLIC_URL whatever Host the request names (behind a proxy)", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const body = yield* Effect.promise(() =>
        new Promise<string>((resolve, reject) => {
          const req = request(`${app.url}/sandbox`, { headers: { host: "proxy.internal:9999", "user-agent": "test" } }, (res) => {
            let text = ""
            res.setEncoding("utf8").on("data", (c: string) => text += c).on("end", () => resolve(text))
          })
          req.on("error", reject)
          req.end()
        })
      )
      assert.deepStrictEqual(JSON.parse(body).sources.rss.slice(0, 2), [`${app.url}/sandbox/rss/news.xml`, `${app.url}/sandbox/rss/atom.xml`])
    }))

  it.effect("publishing takes the listed identifier, URL-encoded, and answers it", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const feedUrl = `${app.url}/sandbox/rss/news.xml`
      const publish = (module: string, identifier: string, body: unknown) =>
        raw({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }, `/sandbox/sources/${module}/${encodeURIComponent(identifier)}/events`)
      for (const identifier of [feedUrl, "news"]) {
        const answer = yield* publish("rss", identifier, { type: "post", title: `via ${identifier}` })
        const event = yield* json(answer)
        assert.strictEqual(answer.status, 201, JSON.stringify(event))
        assert.strictEqual(event.identifier, feedUrl)
        assert.strictEqual(event.source_id, feedUrl)
      }
      const streaming = yield* json(yield* publish("streaming", "sandboxstreamer", { type: "live", game: "Art" }))
      assert.deepInclude(streaming, { identifier: "sandboxstreamer", source_id: "41000001" })
      const feed = yield* raw({}, "/sandbox/rss/news.xml")
      assert.include(yield* Effect.promise(() => feed.text()), "via news")
    }))

  it.effect("webhook URLs the sandbox hands out are under PUBLIC_URL", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const hook = yield* json(yield* raw({ headers: { authorization: `Bot ${BOT2_TOKEN}` } }, `/sandbox/discord/api/v10/webhooks/${WEBHOOK_S1_ID}`))
      assert.strictEqual(hook.url, `${app.url}/sandbox/discord/api/v10/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`)
    }))

  it.effect("the authorize page sends a code only to the gateway's own callback", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const authorize = (redirectUri: string) =>
        raw({}, `/sandbox/discord/oauth2/authorize?client_id=${SANDBOX_CLIENT_ID}&response_type=code&scope=identify&login_hint=${ALICE_ID}&redirect_uri=${encodeURIComponent(redirectUri)}`)
      for (const foreign of ["https://attacker.example/cb", "http://127.0.0.1:1/auth/idp/callback", `${app.url}/sandbox/callback`, `${app.url}/auth/idp/callback/x`]) {
        const refused = yield* authorize(foreign)
        assert.strictEqual(refused.status, 400, foreign)
        assert.isNull(refused.headers.get("location"))
      }
      const own = yield* authorize(`${app.url}/auth/idp/callback`)
      assert.strictEqual(own.status, 302)
      const location = new URL(own.headers.get("location")!)
      assert.strictEqual(`${location.origin}${location.pathname}`, `${app.url}/auth/idp/callback`)
      assert.isNotNull(location.searchParams.get("code"))
      // The whole sign-in through that callback works.
      assert.isNotEmpty(yield* tokenOf(ALICE_ID))
    }))
})
