/**
 * Crossposting end to end (delivery.md §10 `crosspost`, issue #34): the gateway with its worker on
 * a real database and the real Discord client against the sandbox. Feeds created over HTTP in an
 * announcement channel, items published at their sandbox sources, and what a user would check: the
 * messages in the channel and their CROSSPOSTED flag (the sandbox's inbox), the feed's status
 * (`not_crossposted`) and delivery log, and how many publications the platform was asked for.
 * - Two crossposting feeds and one that does not, in one channel: the first 10 messages of the two
 *   are published, the 11th is posted without, and counted on its feed; the other feed's messages
 *   are never published and take nothing from the budget.
 * - The bot loses MANAGE_MESSAGES: posted, not published, counted; the feed stays active, and
 *   publishes again once the permission is back.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import { ALICE_ID, BOB_ID, BOT2_ID, channelId, PermissionBits, S1_ID, S4_ID } from "../../src/sandbox/Seed.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { eventually } from "../utils/Eventually.ts"

const CROSSPOST_ROUTE = "POST /channels/{id}/messages/{message_id}/crosspost"

interface Message {
  readonly id: string
  readonly channel_id: string
  readonly flags: number
  readonly body: Record<string, unknown>
}

interface Where {
  readonly user: string
  readonly path: string
}
const S1: Where = { user: ALICE_ID, path: `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss` }
const S4: Where = { user: BOB_ID, path: `/api/v1/bots/${BOT2_ID}/servers/${S4_ID}/modules/rss` }

const sandbox = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    })
  })

const publish = (name: string, title: string) =>
  Effect.gen(function*() {
    const r = yield* sandbox("POST", `/sandbox/sources/rss/${encodeURIComponent(name)}/events`, {
      type: "post",
      title,
      url: `https://example.com/crosspost/${title}`
    })
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
  })

const inbox = (channel: string) =>
  Effect.map(sandbox("GET", `/sandbox/discord/messages?channel_id=${channel}`), (r) => (r.body as { messages: Array<Message> }).messages)

/** The message of the item `title` (its content ends with the item's URL), with its flags; undefined until posted. */
const messageOf = (messages: ReadonlyArray<Message>, title: string) =>
  messages.find((m) => String(m.body["content"] ?? "").endsWith(`/crosspost/${title}`))

const crosspostCalls = Effect.map(sandbox("GET", "/sandbox/stats"), (r) => (r.body as { calls: Record<string, number> }).calls[CROSSPOST_ROUTE] ?? 0)

/** A feed of a sandbox rss source of its own (created by an item published first: the baseline's). */
const createFeed = (where: Where, name: string, channel: string, options: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    yield* publish(name, `${name}-served-before`)
    const res = yield* raw({
      method: "POST",
      token: yield* tokenOf(where.user),
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ feed_identifier: `${app.url}/sandbox/rss/${name}.xml`, webhook_channel: channel, webhook_options: options })
    }, `${where.path}/feeds`)
    const feed = yield* json(res)
    assert.strictEqual(res.status, 200, JSON.stringify(feed))
    return { id: (feed as { readonly id: string }).id, where }
  })

type Feed = Effect.Success<ReturnType<typeof createFeed>>

const status = (feed: Feed) =>
  Effect.flatMap(Effect.flatMap(tokenOf(feed.where.user), (token) => raw({ token }, `${feed.where.path}/feeds/${feed.id}/status`)), json)

const deliveries = (feed: Feed) =>
  Effect.flatMap(
    Effect.flatMap(tokenOf(feed.where.user), (token) => raw({ token }, `${feed.where.path}/feeds/${feed.id}/deliveries`)),
    json
  ).pipe(Effect.map((page) => (page as { deliveries: Array<{ title: string; state: string; reason: string | null }> }).deliveries))

const baselined = (feed: Feed) => eventually(status(feed), (s) => s.last_poll_at !== null, `feed ${feed.id}: the first poll`)

/** Waits until every one of `titles` is in `channel`; their flags, in order. */
const flagsOf = (channel: string, titles: ReadonlyArray<string>, label: string) =>
  Effect.map(
    eventually(inbox(channel), (ms) => titles.every((t) => messageOf(ms, t) !== undefined), label),
    (ms) => titles.map((t) => messageOf(ms, t)!.flags)
  )

for (const db of dbKinds) {
  layer(
    TestApp.layer({
      capabilities: { db },
      config: { delivery: { ...deliveryDefaults(true), pollIntervalSeconds: 1, maxItemsPerPoll: 20 } }
    }).pipe(Layer.provideMerge(CapturedLogs.layer)),
    { excludeTestServices: true, timeout: 180_000 }
  )(`crossposting end to end (${db})`, (it) => {
    it.effect("two crosspost feeds share the channel's 10 an hour: the 11th posted without CROSSPOSTED and counted; a feed without crosspost untouched", () =>
      Effect.gen(function*() {
        const news = channelId(1, 4)
        const name = (f: string) => `xp-${db}-${f}`
        const plain = yield* createFeed(S1, name("plain"), news)
        const a = yield* createFeed(S1, name("a"), news, { crosspost: true })
        const b = yield* createFeed(S1, name("b"), news, { crosspost: true })
        for (const f of [plain, a, b]) yield* baselined(f)
        const calls = yield* crosspostCalls

        // a's six and the plain feed's two: a's published, the plain feed's not, and not counted.
        const aTitles = [1, 2, 3, 4, 5, 6].map((n) => `${db}-A${n}`)
        const plainTitles = [`${db}-P1`, `${db}-P2`]
        for (const t of aTitles) yield* publish(name("a"), t)
        for (const t of plainTitles) yield* publish(name("plain"), t)
        yield* eventually(Effect.map(inbox(news), (ms) => aTitles.map((t) => messageOf(ms, t)?.flags)), (fs) => fs.every((f) => f === 1), "a's six published")
        assert.deepStrictEqual(yield* flagsOf(news, plainTitles, "the plain feed's two"), [0, 0])

        // b's four: ten published in the hour.
        const bTitles = [1, 2, 3, 4].map((n) => `${db}-B${n}`)
        for (const t of bTitles) yield* publish(name("b"), t)
        yield* eventually(Effect.map(inbox(news), (ms) => bTitles.map((t) => messageOf(ms, t)?.flags)), (fs) => fs.every((f) => f === 1), "b's four published")

        // The 11th: posted, not published, counted on b.
        yield* publish(name("b"), `${db}-B5`)
        const bStatus = yield* eventually(status(b), (s) => s.not_crossposted === 1, "b's 11th counted")
        assert.deepInclude(bStatus, { state: "active", reason: null, delivered: 5, not_crossposted: 1 })
        assert.deepStrictEqual(yield* flagsOf(news, [`${db}-B5`], "b's 5th"), [0])
        assert.deepInclude(yield* status(a), { state: "active", delivered: 6, not_crossposted: 0 })
        assert.deepInclude(yield* status(plain), { state: "active", delivered: 2, not_crossposted: 0 })
        // The platform was asked ten times: the 11th was held back by the budget, not refused with a 429.
        assert.strictEqual((yield* crosspostCalls) - calls, 10)
        const log = yield* deliveries(b)
        const eleventh = log.find((d) => d.title === `${db}-B5`)!
        assert.strictEqual(eleventh.state, "sent")
        assert.match(eleventh.reason ?? "", new RegExp(`^not crossposted: channel ${news} had published its 10 messages of the hour`))
        assert.isTrue(log.filter((d) => d.title !== `${db}-B5`).every((d) => d.reason === null), "the published ones have no reason")
      }), 120_000)

    it.effect("the bot loses MANAGE_MESSAGES: posted, not published, counted with the reason; the feed stays active and publishes again once it is back", () =>
      Effect.gen(function*() {
        const news = channelId(4, 4)
        const name = `xp-${db}-perm`
        const feed = yield* createFeed(S4, name, news, { crosspost: true })
        yield* baselined(feed)
        yield* publish(name, `${db}-D1`)
        yield* eventually(Effect.map(inbox(news), (ms) => messageOf(ms, `${db}-D1`)?.flags), (f) => f === 1, "D1 published")

        const denied = yield* sandbox("POST", "/sandbox/discord/permissions", {
          guild_id: S4_ID,
          user_id: BOT2_ID,
          deny: PermissionBits.MANAGE_MESSAGES.toString()
        })
        assert.strictEqual(denied.status, 200)
        yield* publish(name, `${db}-D2`)
        const s = yield* eventually(status(feed), (s) => s.not_crossposted === 1, "D2 counted")
        assert.deepInclude(s, { state: "active", reason: null, delivered: 2, not_crossposted: 1 })
        assert.deepStrictEqual(yield* flagsOf(news, [`${db}-D2`], "D2"), [0])
        const d2 = (yield* deliveries(feed)).find((d) => d.title === `${db}-D2`)!
        assert.deepInclude(d2, {
          state: "sent",
          reason:
            "not crossposted: the bot may not publish in the webhook's channel (403 Missing Permissions, code 50013): give it MANAGE_MESSAGES there, or set crosspost to false"
        })

        assert.strictEqual((yield* sandbox("DELETE", "/sandbox/discord/permissions")).status, 204)
        yield* publish(name, `${db}-D3`)
        yield* eventually(Effect.map(inbox(news), (ms) => messageOf(ms, `${db}-D3`)?.flags), (f) => f === 1, "D3 published")
        assert.deepInclude(yield* status(feed), { state: "active", delivered: 3, not_crossposted: 1 })
      }), 120_000)
  })
}
