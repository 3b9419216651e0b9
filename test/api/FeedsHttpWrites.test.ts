/**
 * The six feed-connector modules over HTTP against the sandbox chat platform and source twins, on a
 * real database: create (by name, by id, by webhook_url, by webhook_channel), list, update, delete,
 * the wire shape and the audit entries; webhook reuse vs creation, the webhook rules (403, 400) and
 * webhook secrecy (no token in any body this file was answered). Options and lookups:
 * FeedsHttpOptions.test.ts; a source that times out or is down: FeedsHttpOutages.test.ts.
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import {
  ALICE_ID,
  BOT1_ID,
  BOT1_TOKEN,
  BOT2_ID,
  BOT2_TOKEN,
  CAROL_ID,
  channelId,
  S1_ID,
  S2_ID,
  S3_ID,
  WEBHOOK_S1_ID,
  WEBHOOK_S1_TOKEN,
  WEBHOOK_S3_ID,
  WEBHOOK_S3_TOKEN
} from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { TestApp } from "../utils/TestApp.ts"
import { assertBad, feedsOverHttp, modulePath, requester, sandbox, webhookCreations } from "./FeedsHttpFixtures.ts"
import type { FeedModule } from "./FeedsHttpFixtures.ts"

/** Every raw body the gateway answered in this file: no webhook token may ever appear in one. */
const bodies: Array<string> = []
const call = requester(bodies)

const DEFAULTS: Record<FeedModule, Record<string, unknown>> = (() => {
  const common = { custom_header: null, "webhook-name": null, "no-username-overwrite": false, "no-avatar-overwrite": false,
    mention_roles: null, embed: false, embed_color: null, thread_id: null, forum_thread_name: null, forum_tags: null, crosspost: false, split: false }
  const words = { filter_mode: "OR", nsfw: null, filter_words: null, filter_excl: false }
  return {
    photo: { ...words, filter_event: null, ...common },
    forum: { ...words, filter_flair: null, ...common },
    rss: { ...words, ...common },
    streaming: { filter_event: null, filter_game: null, ...common },
    microblog: { ...words, ...common },
    video: { ...words, filter_event: null, ...common }
  }
})()

interface Case {
  /** Created by name (or title, forum name, feed URL). */
  readonly byName: string
  /** The stored identifier of `byName`. */
  readonly id: string
  readonly display?: { readonly user_name: string; readonly display_name: string; readonly user_url: string }
  /** A second source created by its id, where the module allows it, with its display info. */
  readonly byId?: { readonly input: string; readonly user_name: string; readonly display_name: string }
  /** Options to create with and what they read back as. */
  readonly options: Record<string, unknown>
  readonly unknownName: string
}

const cases = (url: string): Record<FeedModule, Case> => ({
  photo: {
    byName: "sandboxphotos",
    id: "17841400000000101",
    display: { user_name: "sandboxphotos", display_name: "Sandbox Photos", user_url: "https://www.instagram.com/sandboxphotos/" },
    byId: { input: "17841400000000102", user_name: "sandbox.travel", display_name: "sandbox.travel" },
    options: { filter_mode: "AND", nsfw: "skip", filter_words: ["cat", "dog"], filter_event: ["post"] },
    unknownName: "nosuchphotouser"
  },
  forum: {
    byName: "SandboxGaming",
    id: "SandboxGaming",
    options: { filter_flair: ["News"], filter_excl: true },
    unknownName: "SandboxPrivate"
  },
  rss: {
    byName: `${url}${RSS_PATHS.rss}`,
    id: `${url}${RSS_PATHS.rss}`,
    options: { custom_header: "%title% %url%", "webhook-name": "News" },
    unknownName: `${url}/sandbox/rss/missing.xml`
  },
  streaming: {
    byName: "sandboxstreamer",
    id: "41000001",
    display: { user_name: "sandboxstreamer", display_name: "SandboxStreamer", user_url: "https://www.twitch.tv/sandboxstreamer" },
    byId: { input: "41000002", user_name: "pixelpainter", display_name: "PixelPainter" },
    options: { filter_event: ["live"], "no-avatar-overwrite": true },
    unknownName: "nosuchstreamer"
  },
  microblog: {
    byName: "sandboxbird",
    id: "1500000000000000001",
    display: { user_name: "sandboxbird", display_name: "Sandbox Bird", user_url: "https://x.com/sandboxbird" },
    byId: { input: "1500000000000000002", user_name: "gatewaynews", display_name: "Gateway News" },
    options: { filter_words: ["launch"], filter_excl: true, "no-username-overwrite": true },
    unknownName: "nosuchbird"
  },
  video: {
    byName: "Sandbox Channel",
    id: "UCsandbox000000000000001",
    display: { user_name: "@sandboxchannel", display_name: "Sandbox Channel", user_url: "https://www.youtube.com/@sandboxchannel" },
    // No custom URL: user_name is the channel id.
    byId: { input: "UCsandbox000000000000002", user_name: "UCsandbox000000000000002", display_name: "Sandbox Cooking" },
    options: { filter_event: ["added", "updated"], nsfw: "censor" },
    unknownName: "UCnosuchchannel0000000000"
  }
})

const MODULES: ReadonlyArray<FeedModule> = ["photo", "forum", "rss", "streaming", "microblog", "video"]

feedsOverHttp("writes and webhooks", (it) => {
  for (const m of MODULES) {
    it.effect(`${m}: create by name and by webhook_url, by id and by webhook_channel; list; update; delete`, () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const c = cases(app.url)[m]
        const hookUrl = `${app.url}/sandbox/discord/api/v10/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`

        // By name, onto the pre-existing webhook by URL, with options.
        const a = yield* call("POST", `${modulePath(m)}/feeds`, { feed_identifier: c.byName, webhook_url: hookUrl, webhook_options: c.options })
        assert.strictEqual(a.status, 200, JSON.stringify(a.body))
        assert.match(a.body.id, /^[1-9][0-9]*$/)
        assert.strictEqual(a.body.feed_identifier, c.id)
        assert.deepStrictEqual(a.body.webhook_options, { ...DEFAULTS[m], ...c.options })
        assert.deepStrictEqual(a.body.webhook_info, { name: "FeedsBot S1", avatar: null, channel_id: channelId(1, 2) })
        const expectedKeys = c.display === undefined
          ? ["feed_identifier", "id", "webhook_info", "webhook_options"]
          : ["display_info", "feed_identifier", "id", "webhook_info", "webhook_options"]
        assert.deepStrictEqual(Object.keys(a.body).sort(), expectedKeys)
        if (c.display !== undefined) {
          assert.deepStrictEqual(a.body.display_info, m === "streaming" ? { ...c.display, game_names: null } : c.display)
        }

        // By id (where allowed), into a channel by webhook_channel: the bot's own webhook there is reused.
        const second = c.byId?.input ?? c.byName
        const before = yield* webhookCreations
        const b = yield* call("POST", `${modulePath(m)}/feeds`, { feed_identifier: second, webhook_channel: channelId(1, 2) })
        if (c.byId === undefined) {
          // The same identifier on the same webhook twice → 400.
          assertBad(b, "feed_identifier", `${m} duplicate`)
        } else {
          assert.strictEqual(b.status, 200, JSON.stringify(b.body))
          assert.strictEqual(b.body.feed_identifier, c.byId.input)
          assert.strictEqual(b.body.display_info.user_name, c.byId.user_name)
          assert.strictEqual(b.body.display_info.display_name, c.byId.display_name)
          assert.deepStrictEqual(b.body.webhook_options, DEFAULTS[m])
          assert.deepStrictEqual(b.body.webhook_info, { name: "FeedsBot S1", avatar: null, channel_id: channelId(1, 2) })
          assert.strictEqual(yield* webhookCreations, before, "the existing webhook is reused")
        }

        const list = yield* call("GET", `${modulePath(m)}/feeds`)
        assert.strictEqual(list.status, 200, JSON.stringify(list.body))
        const ids = list.body.feeds.map((f: { id: string }) => f.id)
        assert.include(ids, a.body.id)
        assert.deepStrictEqual(list.body.feeds.find((f: { id: string }) => f.id === a.body.id), a.body)
        // Another server's (or bot's) listing never shows it.
        const other = yield* call("GET", `${modulePath(m, S1_ID, BOT1_ID)}/feeds`)
        assert.strictEqual(other.status, 200)
        assert.notInclude(other.body.feeds.map((f: { id: string }) => f.id), a.body.id)

        // Update: the object is replaced, omitted options go back to their defaults.
        const u = yield* call("PATCH", `${modulePath(m)}/feeds/${a.body.id}`, { webhook_options: { custom_header: "new" } })
        assert.strictEqual(u.status, 200, JSON.stringify(u.body))
        assert.deepStrictEqual(u.body.webhook_options, { ...DEFAULTS[m], custom_header: "new" })
        assert.strictEqual(u.body.feed_identifier, c.id)
        assert.deepStrictEqual(u.body.webhook_info, a.body.webhook_info)
        const empty = yield* call("PATCH", `${modulePath(m)}/feeds/${a.body.id}`, { webhook_options: {} })
        assert.deepStrictEqual(empty.body.webhook_options, DEFAULTS[m])

        // Delete, then 404 on update and delete; another bot cannot reach it.
        assert.strictEqual((yield* call("DELETE", `${modulePath(m, S1_ID, BOT1_ID)}/feeds/${a.body.id}`)).status, 404)
        const d = yield* call("DELETE", `${modulePath(m)}/feeds/${a.body.id}`)
        assert.strictEqual(d.status, 200, JSON.stringify(d.body))
        assert.deepStrictEqual(d.body, { success: true })
        assert.strictEqual((yield* call("DELETE", `${modulePath(m)}/feeds/${a.body.id}`)).status, 404)
        assert.strictEqual((yield* call("PATCH", `${modulePath(m)}/feeds/${a.body.id}`, { webhook_options: {} })).status, 404)
        const after = yield* call("GET", `${modulePath(m)}/feeds`)
        assert.notInclude(after.body.feeds.map((f: { id: string }) => f.id), a.body.id)

        // Audit: PUSH, PATCH, PATCH, DELETE with the numeric id.
        const logs = yield* call("GET", `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/logs?module=${m}&page_size=100`)
        assert.strictEqual(logs.status, 200, JSON.stringify(logs.body))
        const mine = logs.body.logs.filter((l: { item_identifier: number }) => l.item_identifier === Number(a.body.id))
        assert.deepStrictEqual(mine.map((l: { event_type: string }) => l.event_type), ["DELETE", "PATCH", "PATCH", "PUSH"])
        for (const l of mine) {
          assert.strictEqual(l.module_name, m)
          assert.strictEqual(l.user_id, ALICE_ID)
        }

        // An unknown source → 400 naming feed_identifier.
        const unknown = yield* call("POST", `${modulePath(m)}/feeds`, { feed_identifier: c.unknownName, webhook_channel: channelId(1, 2) })
        assertBad(unknown, "feed_identifier", `${m} unknown source`)
      }))
  }

  describe("webhooks", () => {
    it.effect("webhook_channel creates a webhook only when the bot has none usable there", () =>
      Effect.gen(function*() {
        // Bot 1 has no webhook in S1's second text channel: one is created, then reused.
        yield* sandbox("DELETE", "/sandbox/stats")
        const first = yield* call("POST", `${modulePath("microblog", S1_ID, BOT1_ID)}/feeds`, {
          feed_identifier: "sandboxbird",
          webhook_channel: channelId(1, 3),
          webhook_options: { "webhook-name": "Birdwatch" }
        })
        assert.strictEqual(first.status, 200, JSON.stringify(first.body))
        assert.deepStrictEqual(first.body.webhook_info, { name: "Birdwatch", avatar: null, channel_id: channelId(1, 3) })
        assert.strictEqual(yield* webhookCreations, 1)
        const second = yield* call("POST", `${modulePath("microblog", S1_ID, BOT1_ID)}/feeds`, {
          feed_identifier: "gatewaynews",
          webhook_channel: channelId(1, 3)
        })
        assert.strictEqual(second.status, 200, JSON.stringify(second.body))
        assert.strictEqual(second.body.webhook_info.name, "Birdwatch")
        assert.strictEqual(yield* webhookCreations, 1, "the created webhook is reused")
        // Bot 1 in S1's first text channel: the webhook there belongs to bot 2, so bot 1 creates its own.
        const third = yield* call("POST", `${modulePath("microblog", S1_ID, BOT1_ID)}/feeds`, {
          feed_identifier: "sandboxbird",
          webhook_channel: channelId(1, 2)
        })
        assert.strictEqual(third.status, 200, JSON.stringify(third.body))
        assert.strictEqual(third.body.webhook_info.name, "Feeds")
        assert.strictEqual(yield* webhookCreations, 2)
      }))

    it.effect("the bot lacks MANAGE_WEBHOOKS (bot 1 in S2) → 403", () =>
      Effect.gen(function*() {
        const r = yield* call("POST", `${modulePath("rss", S2_ID, BOT1_ID)}/feeds`, {
          feed_identifier: `${(yield* TestApp).url}${RSS_PATHS.atom}`,
          webhook_channel: channelId(2, 2)
        }, CAROL_ID)
        assert.strictEqual(r.status, 403, JSON.stringify(r.body))
        assert.strictEqual(r.body.errors[0].code, "Forbidden")
        assert.include(r.body.errors[0].message, "MANAGE_WEBHOOKS")
      }))

    it.effect("a webhook of another server, a non-platform URL, a wrong channel or a channel of another server → 400", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const base = `${app.url}/sandbox/discord/api/v10/webhooks`
        const post = (body: Record<string, unknown>) =>
          call("POST", `${modulePath("streaming")}/feeds`, { feed_identifier: "speedrunsam", ...body })
        assertBad(yield* post({ webhook_url: `${base}/${WEBHOOK_S3_ID}/${WEBHOOK_S3_TOKEN}` }), "webhook_url", "S3 webhook")
        assertBad(yield* post({ webhook_url: `https://example.com/api/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}` }), "webhook_url", "foreign host")
        assertBad(yield* post({ webhook_url: "not a url" }), "webhook_url", "not a URL")
        assertBad(yield* post({ webhook_url: `${base}/${WEBHOOK_S1_ID}/wrong-token` }), "webhook_url", "wrong token")
        assertBad(yield* post({ webhook_url: `${base}/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`, webhook_channel: channelId(1, 3) }), "webhook_channel", "channel mismatch")
        assertBad(yield* post({ webhook_channel: channelId(3, 2) }), "webhook_channel", "channel of S3")
        assertBad(yield* post({ webhook_channel: channelId(1, 5) }), "webhook_channel", "voice channel")
        assertBad(yield* post({}), "webhook_channel", "neither")
        // The S3 webhook is fine in S3 (BOB is its administrator).
        const s3 = yield* call("POST", `${modulePath("streaming", S3_ID)}/feeds`, {
          feed_identifier: "speedrunsam",
          webhook_url: `${base}/${WEBHOOK_S3_ID}/${WEBHOOK_S3_TOKEN}`
        }, CAROL_ID)
        assert.strictEqual(s3.status, 200, JSON.stringify(s3.body))
        assert.strictEqual(s3.body.webhook_info.channel_id, channelId(3, 2))
      }))

    it.effect("no webhook token in any response body", () =>
      Effect.gen(function*() {
        // Every token the sandbox knows, read with the bots' own credentials.
        const secrets = new Set([WEBHOOK_S1_TOKEN, WEBHOOK_S3_TOKEN])
        for (const [server, botToken] of [[1, BOT1_TOKEN], [1, BOT2_TOKEN], [3, BOT2_TOKEN]] as const) {
          for (const index of [2, 3]) {
            const hooks = yield* sandbox("GET", `/sandbox/discord/api/v10/channels/${channelId(server, index)}/webhooks`, undefined, {
              authorization: `Bot ${botToken}`
            })
            for (const h of Array.isArray(hooks) ? hooks : []) if (typeof h.token === "string") secrets.add(h.token)
          }
        }
        assert.isAbove(secrets.size, 2, "created webhooks were found")
        // A final sweep of every listing, so that every stored feed is in `bodies`.
        for (const m of MODULES) {
          yield* call("GET", `${modulePath(m)}/feeds`)
          yield* call("GET", `${modulePath(m, S1_ID, BOT1_ID)}/feeds`)
        }
        assert.isAbove(bodies.length, 50)
        for (const body of bodies) {
          for (const secret of secrets) assert.notInclude(body, secret)
          assert.notMatch(body, /"token"/)
        }
      }))
  })
})
