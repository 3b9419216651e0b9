/**
 * The sandbox platform's API for bots that take interactions (forms-runtime.md §7): the application
 * and its commands, channel messages (create, list, edit, delete, attachments), direct messages, the
 * inbox with edits, Discord's refusals from the seed's permissions, and the new faults. Every answer
 * is held to openapi.json's schema for its route.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { publicKeyHex } from "../../src/sandbox/interactions/BotKeys.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOB_ID, BOT1_ID, BOT1_TOKEN, BOT2_ID, BOT2_TOKEN, channelId, roleId, SEED, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN } from "../../src/sandbox/Seed.ts"
import { assertShape } from "./DiscordShapesCheck.ts"
import { call, field } from "./SandboxCallFixtures.ts"

const bot1 = { authorization: `Bot ${BOT1_TOKEN}` }
const bot2 = { authorization: `Bot ${BOT2_TOKEN}` }
const API = "/sandbox/discord/api/v10"
const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = bot1) =>
  call(`${API}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
const control = (method: string, path: string, body?: unknown) =>
  call(path, { method, headers: { "content-type": "application/json" }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

const S1_TEXT = SEED.ids.textChannels.s1
const S1_FEEDS = channelId(1, 3)
const MODERATORS = roleId(1, 1)
const MEMBERS = roleId(1, 2)
const row = (...components: ReadonlyArray<unknown>) => ({ type: 1, components })
const button = (custom_id: string, label: string) => ({ type: 2, style: 1, custom_id, label })

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox interactions API", (it) => {
  it.effect("GET /sandbox: each bot's public key and interactions URL, and the control routes", () =>
    Effect.gen(function*() {
      const server = yield* SandboxServer
      const answer = yield* call("/sandbox")
      const bots = list(field(answer.body, "bots"))
      assert.deepStrictEqual(bots.map((b) => field(b, "interactions_url")), [
        `${server.url}/interactions/${BOT1_ID}`,
        `${server.url}/interactions/${BOT2_ID}`
      ])
      for (const b of bots) assert.match(String(field(b, "public_key")), /^[0-9a-f]{64}$/)
      assert.notStrictEqual(field(bots[0], "public_key"), field(bots[1], "public_key"))
      const routes = list(field(answer.body, "routes"))
      const faults = routes.find((r) => field(r, "method") === "POST" && field(r, "path") === "/sandbox/faults")
      assert.isObject(field(faults, "example"))
      for (const path of ["/sandbox/discord/interactions", "/sandbox/discord/messages", "/sandbox/discord/dms", "/sandbox/stats"]) {
        assert.isTrue(routes.some((r) => field(r, "path") === path && typeof field(r, "purpose") === "string"), path)
      }
    }))

  it.effect("GET /applications/@me: the whole application, verify_key = the listed public key", () =>
    Effect.gen(function*() {
      const server = yield* SandboxServer
      const answer = yield* send("GET", "/applications/@me")
      assert.strictEqual(answer.status, 200)
      assertShape("PrivateApplicationResponse", answer.body)
      assert.strictEqual(field(answer.body, "id"), BOT1_ID)
      assert.strictEqual(field(answer.body, "verify_key"), publicKeyHex(BOT1_ID))
      assert.strictEqual(field(answer.body, "interactions_endpoint_url"), `${server.url}/interactions/${BOT1_ID}`)
      assert.strictEqual((yield* call(`${API}/applications/@me`)).status, 401)
    }))

  it.effect("PUT /applications/{id}/commands overwrites them all; GET lists them; a bad name or another bot's application is refused", () =>
    Effect.gen(function*() {
      const submit = { name: "submit", description: "Fill a form", type: 1, contexts: [0] }
      const first = yield* send("PUT", `/applications/${BOT1_ID}/commands`, [submit, { name: "other", description: "x" }])
      assert.strictEqual(first.status, 200)
      for (const c of list(first.body)) assertShape("ApplicationCommandResponse", c)
      const again = yield* send("PUT", `/applications/${BOT1_ID}/commands`, [submit])
      assert.deepStrictEqual(list(again.body).map((c) => field(c, "name")), ["submit"])
      assert.strictEqual(field(list(again.body)[0], "id"), field(list(first.body)[0], "id"), "a command keeps its id")
      const got = yield* send("GET", `/applications/${BOT1_ID}/commands`)
      assert.deepStrictEqual(got.body, again.body)
      const bad = yield* send("PUT", `/applications/${BOT1_ID}/commands`, [{ name: "x".repeat(33), description: "" }])
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(field(bad.body, "code"), 50035)
      assert.isObject(field(field(field(bad.body, "errors"), "0"), "name"))
      assert.strictEqual((yield* send("PUT", `/applications/${BOT1_ID}/commands`, [], bot2)).status, 403)
      assert.strictEqual(field((yield* send("GET", `/applications/${BOT2_ID}/commands`)).body, "code"), 50001)
    }))

  it.effect("POST /channels/{id}/messages answers a whole message; roles ping only as allowed_mentions lets them", () =>
    Effect.gen(function*() {
      const body = {
        content: `<@&${MODERATORS}> <@&${MEMBERS}> <@${BOB_ID}> a new submission`,
        allowed_mentions: { parse: [], roles: [MODERATORS] },
        embeds: [{ title: "Form", color: 0xff0000, fields: [{ name: "Q", value: "A" }], footer: { text: "Submission 1" } }],
        components: [row(button("pass", "Pass"), button("drop", "Drop"))]
      }
      const answer = yield* send("POST", `/channels/${S1_TEXT}/messages`, body)
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      assertShape("MessageResponse", answer.body)
      assert.strictEqual(field(field(answer.body, "author"), "id"), BOT1_ID)
      assert.deepStrictEqual(field(answer.body, "mention_roles"), [MODERATORS])
      assert.deepStrictEqual(field(answer.body, "mentions"), [])
      assert.strictEqual(field(answer.body, "edited_timestamp"), null)
      const buttons = list(field(list(field(answer.body, "components"))[0], "components"))
      assert.deepStrictEqual(buttons.map((b) => field(b, "id")), [2, 3])
      const listed = yield* send("GET", `/channels/${S1_TEXT}/messages?limit=5`)
      assert.strictEqual(listed.status, 200)
      for (const m of list(listed.body)) assertShape("MessageResponse", m)
      assert.strictEqual(field(list(listed.body)[0], "id"), field(answer.body, "id"))
    }))

  it.effect("PATCH keeps the earlier version in the inbox's edits; DELETE removes the message", () =>
    Effect.gen(function*() {
      const posted = yield* send("POST", `/channels/${S1_FEEDS}/messages`, { content: "v1", components: [row(button("a", "A"))] })
      const id = String(field(posted.body, "id"))
      const edited = yield* send("PATCH", `/channels/${S1_FEEDS}/messages/${id}`, { content: "v2", components: [] })
      assert.strictEqual(edited.status, 200)
      assertShape("MessageResponse", edited.body)
      assert.isString(field(edited.body, "edited_timestamp"))
      assert.strictEqual(field(edited.body, "content"), "v2")
      const inbox = yield* call(`/sandbox/discord/messages?channel_id=${S1_FEEDS}`)
      const entry = list(field(inbox.body, "messages")).find((m) => field(m, "id") === id)
      assert.deepStrictEqual(field(entry, "body"), { content: "v2", components: [] })
      assert.deepStrictEqual(list(field(entry, "edits")).map((e) => field(e, "body")), [{ content: "v1", components: [row(button("a", "A"))] }])
      assert.strictEqual(field((yield* send("PATCH", `/channels/${S1_FEEDS}/messages/${id}`, { content: "x" }, bot2)).body, "code"), 50005)
      assert.strictEqual((yield* send("DELETE", `/channels/${S1_FEEDS}/messages/${id}`)).status, 204)
      assert.strictEqual(field((yield* send("GET", `/channels/${S1_FEEDS}/messages/${id}`)).body, "code"), 10008)
    }))

  it.effect("a multipart message keeps its files as attachments, listed by name", () =>
    Effect.gen(function*() {
      const form = new FormData()
      form.set("payload_json", JSON.stringify({ content: "with a file", attachments: [{ id: 0, filename: "submission.txt" }] }))
      form.set("files[0]", new Blob(["the whole submission"], { type: "text/plain" }), "submission.txt")
      const answer = yield* call(`${API}/channels/${S1_TEXT}/messages`, { method: "POST", headers: bot1, body: form })
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      assertShape("MessageResponse", answer.body)
      const attachment = list(field(answer.body, "attachments"))[0]
      assert.strictEqual(field(attachment, "filename"), "submission.txt")
      assert.strictEqual(field(attachment, "size"), 20)
      const inbox = yield* call(`/sandbox/discord/messages?channel_id=${S1_TEXT}`)
      const entry = list(field(inbox.body, "messages")).find((m) => field(m, "id") === field(answer.body, "id"))
      assert.deepStrictEqual(field(field(entry, "body"), "attachments"), ["submission.txt"])
    }))

  it.effect("an attached file is served at its attachment's url, its id the platform's own; gone with its message", () =>
    Effect.gen(function*() {
      const server = yield* SandboxServer
      const upload = (text: string) => {
        const form = new FormData()
        form.set("payload_json", JSON.stringify({ content: "a file", attachments: [{ id: 0, filename: "same.txt", description: "the answers" }] }))
        form.set("files[0]", new Blob([text], { type: "text/plain" }), "same.txt")
        return call(`${API}/channels/${S1_TEXT}/messages`, { method: "POST", headers: bot1, body: form })
      }
      const [one, two] = [yield* upload("first é file"), yield* upload("second")]
      const [a, b] = [one, two].map((m) => list(field(m.body, "attachments"))[0])
      // Discord numbers the uploaded files itself: the payload's 0 only named files[0].
      assert.match(String(field(a, "id")), /^[1-9][0-9]{16,19}$/)
      assert.notStrictEqual(field(a, "id"), field(b, "id"))
      assert.strictEqual(field(a, "url"), `${server.url}/sandbox/discord/attachments/${S1_TEXT}/${String(field(a, "id"))}/same.txt`)
      const got = yield* call(String(field(a, "url")).slice(server.url.length))
      assert.strictEqual(got.status, 200)
      assert.strictEqual(got.headers.get("content-type"), "text/plain; charset=utf-8")
      assert.strictEqual(got.body, "first é file")
      assert.strictEqual(field(a, "size"), new TextEncoder().encode("first é file").byteLength)
      assert.strictEqual((yield* call(String(field(b, "url")).slice(server.url.length))).body, "second")
      // Another channel's path, another name, or the message deleted: no such file.
      const path = (channel: string, name: string) => `/sandbox/discord/attachments/${channel}/${String(field(a, "id"))}/${name}`
      assert.strictEqual((yield* call(path(S1_FEEDS, "same.txt"))).status, 404)
      assert.strictEqual((yield* call(path(S1_TEXT, "other.txt"))).status, 404)
      assert.strictEqual((yield* send("DELETE", `/channels/${S1_TEXT}/messages/${String(field(one.body, "id"))}`)).status, 204)
      assert.strictEqual((yield* call(path(S1_TEXT, "same.txt"))).status, 404)
    }))

  it.effect("the seed's permissions: no access 403 50001, unknown channel 404 10003, invalid bodies 400 50035", () =>
    Effect.gen(function*() {
      const s4 = yield* send("POST", `/channels/${SEED.ids.textChannels.s4}/messages`, { content: "x" })
      assert.deepStrictEqual([s4.status, field(s4.body, "code"), typeof field(s4.body, "message")], [403, 50001, "string"])
      const unknown = yield* send("POST", "/channels/310000000000000999/messages", { content: "x" })
      assert.deepStrictEqual([unknown.status, field(unknown.body, "code")], [404, 10003])
      const tooLong = yield* send("POST", `/channels/${S1_TEXT}/messages`, { components: [row(button("x".repeat(101), "A"))] })
      assert.deepStrictEqual([tooLong.status, field(tooLong.body, "code")], [400, 50035])
      const empty = yield* send("POST", `/channels/${S1_TEXT}/messages`, {})
      assert.deepStrictEqual([empty.status, field(empty.body, "code")], [400, 50006])
      assert.strictEqual((yield* call(`${API}/channels/${S1_TEXT}/messages`, { method: "POST" })).status, 401)
    }))

  it.effect("DMs: the channel has flags and whole recipients; a user who shares no server gets 50007; the DM inbox lists them", () =>
    Effect.gen(function*() {
      const channel = yield* send("POST", "/users/@me/channels", { recipient_id: BOB_ID })
      assert.strictEqual(channel.status, 200)
      assertShape("PrivateChannelResponse", channel.body)
      assert.strictEqual(field(list(field(channel.body, "recipients"))[0], "username"), "bob")
      const id = String(field(channel.body, "id"))
      const posted = yield* send("POST", `/channels/${id}/messages`, { content: "accepted" })
      assert.strictEqual(posted.status, 200)
      assertShape("MessageResponse", posted.body)
      const dms = yield* call(`/sandbox/discord/dms?user_id=${BOB_ID}`)
      assert.deepStrictEqual(list(field(dms.body, "messages")).map((m) => field(field(m, "body"), "content")), ["accepted"])
      // Another bot cannot post into FormsBot's DM channel; an unknown recipient is refused.
      assert.strictEqual(field((yield* send("POST", `/channels/${id}/messages`, { content: "x" }, bot2)).body, "code"), 10003)
      assert.strictEqual(field((yield* send("POST", "/users/@me/channels", { recipient_id: "1" })).body, "code"), 50033)
    }))

  it.effect("faults: closed DMs answer 50007 until cleared; a channel's 403 and 404 by path", () =>
    Effect.gen(function*() {
      const channel = yield* send("POST", "/users/@me/channels", { recipient_id: BOB_ID })
      const dm = `/channels/${field(channel.body, "id")}/messages`
      assert.strictEqual((yield* control("POST", "/sandbox/faults", { route: "*", kind: "dm_closed" })).status, 400)
      assert.strictEqual((yield* control("POST", "/sandbox/faults", { route: "*", kind: "dm_closed", user_id: BOB_ID })).status, 200)
      for (const _ of [1, 2]) {
        const closed = yield* send("POST", dm, { content: "x" })
        assert.deepStrictEqual([closed.status, field(closed.body, "code")], [403, 50007])
      }
      assert.strictEqual((yield* control("DELETE", "/sandbox/faults")).status, 204)
      assert.strictEqual((yield* send("POST", dm, { content: "x" })).status, 200)
      const path = `${API}/channels/${S1_FEEDS}`
      yield* control("POST", "/sandbox/faults", { route: "POST /channels/{id}/messages", kind: "404", path })
      yield* control("POST", "/sandbox/faults", { route: "POST /channels/{id}/messages", kind: "403", path })
      const first = yield* send("POST", `/channels/${S1_FEEDS}/messages`, { content: "x" })
      assert.deepStrictEqual([first.status, field(first.body, "code")], [404, 10003])
      const other = yield* send("POST", `/channels/${S1_TEXT}/messages`, { content: "x" })
      assert.strictEqual(other.status, 200, "another channel is not faulted")
      const second = yield* send("POST", `/channels/${S1_FEEDS}/messages`, { content: "x" })
      assert.deepStrictEqual([second.status, field(second.body, "code")], [403, 50001])
      assert.strictEqual((yield* send("POST", `/channels/${S1_FEEDS}/messages`, { content: "x" })).status, 200)
    }))

  it.effect("a slow fault answers 3.5 s late, once", () =>
    Effect.gen(function*() {
      yield* control("POST", "/sandbox/faults", { route: "GET /applications/@me", kind: "slow" })
      const started = Date.now()
      assert.strictEqual((yield* send("GET", "/applications/@me")).status, 200)
      assert.isAtLeast(Date.now() - started, 3400)
      // Once: the next call is not delayed (3 s leaves a slow machine room, and is still under the 3.5 s delay).
      const again = Date.now()
      assert.strictEqual((yield* send("GET", "/applications/@me")).status, 200)
      assert.isBelow(Date.now() - again, 3000)
    }), { timeout: 15_000 })

  it.effect("a webhook message's author carries primary_guild, its embeds Discord's echo", () =>
    Effect.gen(function*() {
      const answer = yield* send("POST", `/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}?wait=true`, { content: "hi", embeds: [{ title: "t" }] }, {})
      assert.strictEqual(answer.status, 200)
      assertShape("MessageResponse", answer.body)
      assert.strictEqual(field(field(answer.body, "author"), "primary_guild"), null)
      const history = yield* send("GET", `/channels/${S1_TEXT}/messages?limit=100`)
      assert.isTrue(list(history.body).some((m) => field(m, "id") === field(answer.body, "id")), "in the channel's history")
      for (const m of list(history.body)) assertShape("MessageResponse", m)
    }))
})
