/**
 * The six feed-connector modules over HTTP against the sandbox chat platform and source twins, on a
 * real database: create (by name, by id, by webhook_url, by webhook_channel), list, update, delete,
 * the wire shape, webhook reuse vs creation, webhook secrecy, the 400/403 rules and the lookups.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
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
import { DependencyHealth, makeDependencyHealth } from "../../src/services/DependencyHealth.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { dbKinds } from "../utils/Db.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"

type FeedModule = "photo" | "forum" | "rss" | "streaming" | "microblog" | "video"

/** Every raw body the gateway answered in this file: no webhook token may ever appear in one. */
const bodies: Array<string> = []

const call = (method: string, path: string, body?: unknown, userId: string = ALICE_ID) =>
  Effect.gen(function*() {
    const init: RequestInit & { token?: string } = { method, token: yield* tokenOf(userId) }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { "content-type": "application/json" }
    }
    const res = yield* raw(init, path)
    const text = yield* Effect.promise(() => res.text())
    bodies.push(text)
    return { status: res.status, body: JSON.parse(text), text }
  })

const modulePath = (m: string, server = S1_ID, bot = BOT2_ID) => `/api/v1/bots/${bot}/servers/${server}/modules/${m}`

/** A request straight to the sandbox (not the gateway). */
const sandbox = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    return yield* Effect.promise(async () => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { "content-type": "application/json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return text === "" ? undefined : JSON.parse(text)
    })
  })
const webhookCreations = Effect.map(sandbox("GET", "/sandbox/stats"), (s) => s.calls["POST /channels/{id}/webhooks"] ?? 0)

const assertBad = (r: { status: number; body: any }, path: string, label: string) => {
  assert.strictEqual(r.status, 400, `${label}: ${JSON.stringify(r.body)}`)
  assert.strictEqual(r.body.errors[0].code, "Bad Request")
  const paths = r.body.errors.map((e: { additionalProperties?: { path?: string } }) => e.additionalProperties?.path)
  assert.include(paths, path, `${label}: ${JSON.stringify(r.body)}`)
}

const DEFAULTS: Record<FeedModule, Record<string, unknown>> = (() => {
  const common = { custom_header: null, "webhook-name": null, "no-username-overwrite": false, "no-avatar-overwrite": false }
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

for (const db of dbKinds) {
  layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 60_000 })(`feeds over HTTP (${db})`, (it) => {
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

    describe("options and immutability", () => {
      it.effect("streaming filter_game: names resolve to ids, game_names shown; an unknown game → 400 naming it", () =>
        Effect.gen(function*() {
          const r = yield* call("POST", `${modulePath("streaming")}/feeds`, {
            feed_identifier: "speedrunsam",
            webhook_channel: channelId(1, 2),
            webhook_options: { filter_game: ["Minecraft", "33214"] }
          })
          assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          assert.deepStrictEqual(r.body.webhook_options.filter_game, ["27471", "33214"])
          assert.deepStrictEqual(r.body.display_info.game_names, ["Minecraft", "Fortnite"])
          const bad = yield* call("POST", `${modulePath("streaming")}/feeds`, {
            feed_identifier: "pixelpainter",
            webhook_channel: channelId(1, 2),
            webhook_options: { filter_game: ["Minecraft", "No Such Game"] }
          })
          assertBad(bad, "webhook_options.filter_game[1]", "unknown game")
          const patched = yield* call("PATCH", `${modulePath("streaming")}/feeds/${r.body.id}`, { webhook_options: {} })
          assert.strictEqual(patched.body.webhook_options.filter_game, null)
          assert.strictEqual(patched.body.display_info.game_names, null)
        }))

      it.effect("every problem in one answer: unknown user, unknown game and a voice webhook_channel", () =>
        Effect.gen(function*() {
          const before = yield* webhookCreations
          const r = yield* call("POST", `${modulePath("streaming")}/feeds`, {
            feed_identifier: "nosuchstreamer",
            webhook_channel: channelId(1, 5),
            webhook_options: { filter_game: ["No Such Game"] }
          })
          assertBad(r, "feed_identifier", "unknown user")
          assertBad(r, "webhook_options.filter_game[0]", "unknown game")
          assertBad(r, "webhook_channel", "voice channel")
          assert.strictEqual(r.body.errors.length, 3, JSON.stringify(r.body))
          // A bad webhook_url is reported with the source's problems too, and nothing was created.
          const url = yield* call("POST", `${modulePath("streaming")}/feeds`, {
            feed_identifier: "nosuchstreamer",
            webhook_url: "not a url"
          })
          assertBad(url, "feed_identifier", "unknown user (url)")
          assertBad(url, "webhook_url", "bad webhook_url")
          assert.strictEqual(yield* webhookCreations, before)
        }))

      it.effect("an unknown option, an option of another module, a value outside its rule, an extra key → 400 naming it", () =>
        Effect.gen(function*() {
          const url = `${(yield* TestApp).url}${RSS_PATHS.atom}`
          const post = (options: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
            call("POST", `${modulePath("rss")}/feeds`, { feed_identifier: url, webhook_channel: channelId(1, 2), webhook_options: options, ...extra })
          assertBad(yield* post({ bogus: true }), "webhook_options.bogus", "unknown option")
          assertBad(yield* post({ filter_event: ["post"] }), "webhook_options.filter_event", "other module's option")
          assertBad(yield* post({ filter_flair: ["News"] }), "webhook_options.filter_flair", "forum option on rss")
          assertBad(yield* post({ "webhook-name": "x".repeat(33) }), "webhook_options.webhook-name", "webhook-name too long")
          assertBad(yield* post({ custom_header: "x".repeat(1025) }), "webhook_options.custom_header", "custom_header too long")
          assertBad(yield* post({ filter_mode: "XOR" }), "webhook_options.filter_mode", "filter_mode")
          assertBad(yield* post({ nsfw: "maybe" }), "webhook_options.nsfw", "nsfw")
          assertBad(yield* post({}, { colour: "red" }), "colour", "extra key")
          const several = yield* post({ bogus: 1, filter_mode: "XOR" })
          assert.strictEqual(several.status, 400)
          assert.isAtLeast(several.body.errors.length, 2, JSON.stringify(several.body))
          const photo = yield* call("POST", `${modulePath("photo")}/feeds`, {
            feed_identifier: "sandboxphotos",
            webhook_channel: channelId(1, 2),
            webhook_options: { filter_event: ["live"] }
          })
          assertBad(photo, "webhook_options.filter_event[0]", "photo event")
          // Forum flairs are checked against the forum's own list (case-insensitively, stored in its spelling).
          const flair = (flairs: ReadonlyArray<string>) =>
            call("POST", `${modulePath("forum")}/feeds`, {
              feed_identifier: "SandboxNews",
              webhook_channel: channelId(1, 3),
              webhook_options: { filter_flair: flairs }
            })
          assertBad(yield* flair(["Tech", "Gossip"]), "webhook_options.filter_flair[1]", "unknown flair")
          const okFlair = yield* flair(["tech"])
          assert.strictEqual(okFlair.status, 200, JSON.stringify(okFlair.body))
          assert.deepStrictEqual(okFlair.body.webhook_options.filter_flair, ["Tech"])
        }))

      it.effect("a repeated element of a list option → 400 naming it; no message names an internal schema", () =>
        Effect.gen(function*() {
          const events = yield* call("POST", `${modulePath("video")}/feeds`, {
            feed_identifier: "Sandbox Channel",
            webhook_channel: channelId(1, 2),
            webhook_options: { filter_event: ["added", "added"], filter_words: ["cat", " Cat"] }
          })
          assertBad(events, "webhook_options.filter_event[1]", "repeated event")
          assertBad(events, "webhook_options.filter_words[1]", "repeated word")
          assert.include(events.body.errors.map((e: { message: string }) => e.message).join("\n"), "filter_event")
          const games = yield* call("POST", `${modulePath("streaming")}/feeds`, {
            feed_identifier: "speedrunsam",
            webhook_channel: channelId(1, 2),
            webhook_options: { filter_game: ["Minecraft", "minecraft"] }
          })
          assertBad(games, "webhook_options.filter_game[1]", "repeated game")
          const url = `${(yield* TestApp).url}${RSS_PATHS.atom}`
          const shapes = [
            { feed_identifier: url, webhook_channel: channelId(1, 2), webhook_options: "nope" },
            { feed_identifier: url, webhook_channel: channelId(1, 2), webhook_options: null },
            { feed_identifier: 5, webhook_channel: 7, webhook_options: { filter_mode: 3, nsfw: 1, filter_words: "a" } },
            "a string"
          ]
          for (const body of shapes) {
            const r = yield* call("POST", `${modulePath("rss")}/feeds`, body)
            assert.strictEqual(r.status, 400, JSON.stringify(r.body))
            for (const e of r.body.errors as Array<{ message: string }>) {
              assert.notMatch(e.message, /[a-z]+_webhook_options|_feed_(create|update)|_input\b|Expected [a-z]+ \|/, e.message)
            }
          }
          const object = yield* call("POST", `${modulePath("rss")}/feeds`, shapes[0])
          assertBad(object, "webhook_options", "not an object")
          assert.include(object.body.errors[0].message, "expected an object")
        }))

      it.effect("PATCH with feed_identifier, webhook_channel or webhook_url, or without webhook_options → 400", () =>
        Effect.gen(function*() {
          const url = `${(yield* TestApp).url}${RSS_PATHS.rss}`
          const created = yield* call("POST", `${modulePath("rss")}/feeds`, { feed_identifier: url, webhook_channel: channelId(1, 3) })
          assert.strictEqual(created.status, 200, JSON.stringify(created.body))
          const path = `${modulePath("rss")}/feeds/${created.body.id}`
          assertBad(yield* call("PATCH", path, { webhook_options: {}, feed_identifier: url }), "feed_identifier", "feed_identifier")
          assertBad(yield* call("PATCH", path, { webhook_options: {}, webhook_channel: channelId(1, 2) }), "webhook_channel", "webhook_channel")
          assertBad(yield* call("PATCH", path, { webhook_options: {}, webhook_url: "https://discord.com/api/webhooks/1/x" }), "webhook_url", "webhook_url")
          assertBad(yield* call("PATCH", path, {}), "webhook_options", "no options")
          assertBad(yield* call("PATCH", path, { webhook_options: { filter_game: ["x"] } }), "webhook_options.filter_game", "patch foreign option")
          const bad = yield* call("PATCH", `${modulePath("rss")}/feeds/abc`, { webhook_options: {} })
          assertBad(bad, "feedId", "feed id")
          const still = yield* call("GET", `${modulePath("rss")}/feeds`)
          assert.deepStrictEqual(still.body.feeds.find((f: { id: string }) => f.id === created.body.id), created.body)
        }))
    })

    describe("lookups", () => {
      it.effect("getUserId finds users and channels, 404 otherwise; getGameId finds games, 404 otherwise", () =>
        Effect.gen(function*() {
          const found: ReadonlyArray<readonly [FeedModule, string, Record<string, string>]> = [
            ["photo", "sandboxphotos", { userId: "17841400000000101", userName: "sandboxphotos", displayName: "Sandbox Photos" }],
            ["streaming", "SandboxStreamer", { userId: "41000001", userName: "sandboxstreamer", displayName: "SandboxStreamer" }],
            ["microblog", "gatewaynews", { userId: "1500000000000000002", userName: "gatewaynews", displayName: "Gateway News" }],
            ["video", "UCsandbox000000000000003", { userId: "UCsandbox000000000000003", userName: "@sandboxmusic", displayName: "Sandbox Music" }],
            ["video", "Sandbox Cooking", { userId: "UCsandbox000000000000002", userName: "UCsandbox000000000000002", displayName: "Sandbox Cooking" }]
          ]
          for (const [m, name, expected] of found) {
            const r = yield* call("GET", `${modulePath(m)}/getUserId/${encodeURIComponent(name)}`)
            assert.strictEqual(r.status, 200, `${m} ${name}: ${JSON.stringify(r.body)}`)
            assert.deepStrictEqual(r.body, expected)
          }
          for (const m of ["photo", "streaming", "microblog", "video"] as const) {
            const r = yield* call("GET", `${modulePath(m)}/getUserId/nosuchuserxyz`)
            assert.strictEqual(r.status, 404, `${m}: ${JSON.stringify(r.body)}`)
            assert.strictEqual(r.body.errors[0].code, "Not Found")
          }
          const game = yield* call("GET", `${modulePath("streaming")}/getGameId/${encodeURIComponent("Just Chatting")}`)
          assert.strictEqual(game.status, 200, JSON.stringify(game.body))
          assert.deepStrictEqual(game.body, { gameId: "509658", gameName: "Just Chatting" })
          const noGame = yield* call("GET", `${modulePath("streaming")}/getGameId/${encodeURIComponent("No Such Game")}`)
          assert.strictEqual(noGame.status, 404, JSON.stringify(noGame.body))
          // forum and rss have no lookups.
          assert.strictEqual((yield* call("GET", `${modulePath("forum")}/getUserId/x`)).status, 404)
          assert.strictEqual((yield* call("GET", `${modulePath("photo")}/getGameId/x`)).status, 404)
        }))
    })
  })
}

// The outages these tests provoke are logged (one line down, one back): kept, with a state of their own, and checked.
const timingOut = TestApp.layer({ capabilities: "memory", config: { upstreamTimeoutMs: 400 } }).pipe(
  Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth())),
  Layer.provideMerge(CapturedLogs.layer)
)
layer(timingOut, { excludeTestServices: true, timeout: 60_000 })(
  "feeds: a source that times out",
  (it) => {
    it.effect("getUserId and create → 408 envelope naming the source, when the source hangs", () =>
      Effect.gen(function*() {
        yield* sandbox("POST", "/sandbox/faults", { route: "GET /sandbox/streaming/helix/users", kind: "hang", count: 2 })
        const started = Date.now()
        const lookup = yield* call("GET", `${modulePath("streaming")}/getUserId/sandboxstreamer`)
        assert.strictEqual(lookup.status, 408, JSON.stringify(lookup.body))
        assert.strictEqual(lookup.body.errors[0].code, "Request Timeout")
        assert.include(lookup.body.errors[0].message, "streaming")
        assert.isBelow(Date.now() - started, 5_000)
        const create = yield* call("POST", `${modulePath("streaming")}/feeds`, {
          feed_identifier: "sandboxstreamer",
          webhook_channel: channelId(1, 2)
        })
        assert.strictEqual(create.status, 408, JSON.stringify(create.body))
        // The faults are spent: the source answers again.
        const again = yield* call("GET", `${modulePath("streaming")}/getUserId/sandboxstreamer`)
        assert.strictEqual(again.status, 200, JSON.stringify(again.body))
        // An operator reads two lines for it: down (the first time-out), back (with the count).
        const lines = yield* logged("streaming (Twitch)")
        assert.deepStrictEqual(lines.map((l) => l.text), ["dependency down: streaming (Twitch)", "dependency back: streaming (Twitch)"])
        assert.strictEqual(lines[1]!.annotations["failures"], 2)
        const downFor = lines[1]!.annotations["down_for_ms"] as number
        assert.isAtLeast(downFor, 0)
        assert.isBelow(downFor, 120_000, "an outage of this test, not an epoch")
      }))

    it.effect("every 503 of a source carries Retry-After and retry_after; an RSS 429's own Retry-After is passed on", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const retryOf = (init: RequestInit & { token?: string }, path: string) =>
          Effect.gen(function*() {
            const res = yield* raw(init, path)
            const body = JSON.parse(yield* Effect.promise(() => res.text()))
            return { status: res.status, header: res.headers.get("retry-after"), body }
          })
        const token = yield* tokenOf(ALICE_ID)
        yield* sandbox("POST", "/sandbox/faults", { route: `GET ${RSS_PATHS.rss}`, kind: "429", retry_after: 30 })
        const limited = yield* retryOf(
          { method: "POST", token, headers: { "content-type": "application/json" }, body: JSON.stringify({ feed_identifier: `${app.url}${RSS_PATHS.rss}`, webhook_channel: channelId(1, 2) }) },
          `${modulePath("rss")}/feeds`
        )
        assert.strictEqual(limited.status, 503, JSON.stringify(limited.body))
        assert.strictEqual(limited.header, "30")
        assert.strictEqual(limited.body.errors[0].additionalProperties.retry_after, 30)
        for (const kind of ["500", "429"] as const) {
          yield* sandbox("POST", "/sandbox/faults", { route: "GET /sandbox/streaming/helix/users", kind, retry_after: 0 })
          const down = yield* retryOf({ method: "GET", token }, `${modulePath("streaming")}/getUserId/sandboxstreamer`)
          assert.strictEqual(down.status, 503, JSON.stringify(down.body))
          assert.isAtLeast(Number(down.header), 1, `${kind}: Retry-After`)
          assert.isAtLeast(down.body.errors[0].additionalProperties.retry_after, 1, `${kind}: ${JSON.stringify(down.body)}`)
        }
      }))
  }
)
