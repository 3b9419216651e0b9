/**
 * The member player (forms-runtime.md §7) against a small bot endpoint (InteractionReceiver.ts) that
 * verifies every signature with node:crypto: PING, a slash command answered with a modal, the modal
 * submitted as Label components, a deferred answer finished through the interaction's webhook, clicks
 * on ephemeral messages and on a button of an earlier version, the callback route, and the problems
 * the platform would find: an oversized modal, a wrong callback type, a late answer, a stale request.
 */
import { afterAll, assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { interactionsOf } from "../../src/sandbox/interactions/State.ts"
import { DiscordState, defaultSandboxConfig, SandboxConfig, SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOB_ID, BOT1_ID, BOT1_TOKEN, S1_ID, SEED } from "../../src/sandbox/Seed.ts"
import { assertShape } from "./DiscordShapesCheck.ts"
import type { Received } from "./InteractionReceiver.ts"
import { keyFromHex, startReceiver, verifies } from "./InteractionReceiver.ts"
import { armer, at, call, field, json, list } from "./SandboxCallFixtures.ts"

const receiver = await startReceiver()
afterAll(() => receiver.close())

const Sandbox = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, { ...defaultSandboxConfig, interactionsOrigin: receiver.url }))
)

const API = "/sandbox/discord/api/v10"
const S1_TEXT = SEED.ids.textChannels.s1

const arm = armer(receiver)

const bob = { bot_id: BOT1_ID, user_id: BOB_ID, guild_id: S1_ID, channel_id: S1_TEXT }
const play = (body: Record<string, unknown>) => json("POST", "/sandbox/discord/interactions", { ...bob, ...body })
const problems = (answer: { readonly body: unknown }) => list(field(answer.body, "problems")).map(String)
const last = (): Received => receiver.received.at(-1)!

const label = (text: string, component: unknown) => ({ type: 18, label: text, component })
const textInput = (custom_id: string, extra: Record<string, unknown> = {}) => ({ type: 4, custom_id, style: 1, ...extra })
const select = (custom_id: string, values: ReadonlyArray<string>) => ({
  type: 3,
  custom_id,
  options: values.map((v) => ({ label: v.toUpperCase(), value: v }))
})
const modal = (components: ReadonlyArray<unknown>, title = "Application (1/2)") => ({
  type: 9,
  data: { custom_id: "form:p1", title, components }
})
const goodModal = modal([
  label("Your name", textInput("name", { min_length: 2, max_length: 20 })),
  label("Team", select("team", ["red", "blue"])),
  { type: 10, content: "A long question that needs its own text." }
])

layer(Sandbox, { excludeTestServices: true })("sandbox member player", (it) => {
  it.effect("PING: signed as the platform signs, answered PONG; a forged body does not verify", () =>
    Effect.gen(function*() {
      yield* arm(() => ({ body: { type: 1 } }))
      const answer = yield* play({ action: "ping" })
      assert.strictEqual(answer.status, 200)
      assert.deepStrictEqual(field(answer.body, "response"), { type: 1 })
      assert.deepStrictEqual(problems(answer), [])
      const got = last()
      assert.deepStrictEqual([got.interaction["type"], got.interaction["version"], got.interaction["application_id"]], [1, 1, BOT1_ID])
      assert.approximately(Number(got.headers["x-signature-timestamp"]), Date.now() / 1000, 5)
      const key = keyFromHex(receiver.keys.get(BOT1_ID)!)
      const { "x-signature-ed25519": signature, "x-signature-timestamp": timestamp } = got.headers
      assert.isTrue(verifies(key, timestamp!, got.raw, signature!))
      assert.isFalse(verifies(key, timestamp!, got.raw.replace("\"type\":1", "\"type\":2"), signature!))
      const forged = yield* Effect.promise(() =>
        fetch(`${receiver.url}/interactions/${BOT1_ID}`, { method: "POST", headers: got.headers, body: got.raw.replace("1", "2") })
      )
      assert.strictEqual(forged.status, 401)
    }))

  it.effect("a stale timestamp is signed as asked; the bot's 401 is a problem", () =>
    Effect.gen(function*() {
      yield* arm(() => ({ body: { type: 1 } }))
      const before = receiver.received.length
      const answer = yield* play({ action: "ping", timestamp_offset_s: -600 })
      assert.strictEqual(receiver.received.length, before, "the receiver refused it")
      assert.deepStrictEqual(field(answer.body, "status"), 401)
      assert.match(problems(answer).join(), /HTTP 401/)
    }))

  it.effect("a slash command answered with a modal; the submit carries Label components; deferred answer and follow-up", () =>
    Effect.gen(function*() {
      const server = yield* SandboxServer
      const put = yield* json("PUT", `${API}/applications/${BOT1_ID}/commands`, [{ name: "submit", description: "Fill a form", contexts: [0] }], {
        authorization: `Bot ${BOT1_TOKEN}`
      })
      assert.strictEqual(put.status, 200)
      yield* arm(() => ({ body: goodModal }))
      const opened = yield* play({ action: "command", name: "submit" })
      assert.deepStrictEqual(problems(opened), [])
      const command = last().interaction
      assert.deepStrictEqual([command["type"], at(command, "data", "name"), command["guild_id"], at(command, "member", "user", "id")], [2, "submit", S1_ID, BOB_ID])
      assert.deepStrictEqual(at(command, "member", "roles"), SEED.guilds[0]!.members.find((m) => m.userId === BOB_ID)!.roles)
      assert.isString(command["app_permissions"])
      assert.isString(command["token"])

      const refused = yield* play({ action: "submit", fields: { name: "B", team: ["red"] } })
      assert.strictEqual(refused.status, 400, "a name shorter than min_length cannot be submitted")
      yield* arm(async (got) => {
        setTimeout(() => {
          void fetch(`${server.url}${API}/webhooks/${BOT1_ID}/${String(got.interaction["token"])}/messages/@original`, {
            method: "PATCH",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ content: "Page 1 of 2 saved", components: [{ type: 1, components: [{ type: 2, style: 1, custom_id: "form:continue", label: "Continue" }] }] })
          })
        }, 100)
        return { body: { type: 5, data: { flags: 64 } } }
      })
      const submitted = yield* play({ action: "submit", fields: { name: "Bob", team: ["blue"] } })
      assert.deepStrictEqual(problems(submitted), [])
      assert.deepStrictEqual(at(last().interaction, "data"), {
        custom_id: "form:p1",
        components: [
          { type: 18, id: 1, component: { type: 4, id: 2, custom_id: "name", value: "Bob" } },
          { type: 18, id: 3, component: { type: 3, id: 4, custom_id: "team", values: ["blue"] } },
          { type: 10, id: 5 }
        ]
      })
      assert.deepStrictEqual(list(field(submitted.body, "followups")).map((f) => field(f, "content")), ["Page 1 of 2 saved"])
      const saved = String(field(submitted.body, "message_id"))

      // The ephemeral message's Continue button, clicked without naming the message; answered UPDATE_MESSAGE.
      yield* arm(() => ({ body: { type: 7, data: { content: "Continuing", components: [] } } }))
      const click = yield* play({ action: "click", custom_id: "form:continue" })
      assert.deepStrictEqual(problems(click), [])
      assert.deepStrictEqual([at(last().interaction, "type"), at(last().interaction, "data", "custom_id"), at(last().interaction, "data", "component_type")], [3, "form:continue", 2])
      assert.strictEqual(at(last().interaction, "message", "id"), saved)
      assertShape("MessageResponse", at(last().interaction, "message"))
      const inbox = yield* call(`/sandbox/discord/messages?channel_id=${S1_TEXT}`)
      const entry = list(field(inbox.body, "messages")).find((m) => field(m, "id") === saved)
      assert.strictEqual(at(entry, "body", "content"), "Continuing")
      assert.deepStrictEqual(list(field(entry, "edits")).map((e) => at(e, "body", "content")), ["", "Page 1 of 2 saved"])
      assert.strictEqual(field(entry, "ephemeral_for"), BOB_ID)

      // The button is gone from the latest version; a person still showing the older one may click it.
      yield* arm(() => ({ body: goodModal }))
      const old = yield* play({ action: "click", custom_id: "form:continue", message_id: saved })
      assert.deepStrictEqual(problems(old), [])
      const unknown = yield* play({ action: "click", custom_id: "nothing", message_id: saved })
      assert.strictEqual(unknown.status, 400)
    }))

  it.effect("the platform's problems: an oversized modal, a wrong callback type, a modal after a modal", () =>
    Effect.gen(function*() {
      const six = Array.from({ length: 6 }, (_, i) => label(`Q${i}`, textInput(`q${i}`)))
      yield* arm(() => ({ body: modal(six, "T".repeat(46)) }))
      const big = yield* play({ action: "command", name: "submit" })
      const found = problems(big).join("\n")
      assert.match(found, /between 1 and 5 components, got 6/)
      assert.match(found, /\$\.data\.title: longer than 45/)
      yield* arm(() => ({ body: modal([label("L".repeat(46), textInput("x".repeat(101), { max_length: 4001 }))]) }))
      const limits = problems(yield* play({ action: "command", name: "submit" })).join("\n")
      for (const p of [/label: longer than 45/, /custom_id: longer than 100/, /max_length: above maximum/]) assert.match(limits, p)
      yield* arm(() => ({ body: { type: 7, data: { content: "x" } } }))
      assert.match(problems(yield* play({ action: "command", name: "submit" })).join(), /callback type 7 \(UPDATE_MESSAGE\) is not valid for APPLICATION_COMMAND/)
      yield* arm(() => ({ body: { type: 1 } }))
      assert.match(problems(yield* play({ action: "command", name: "submit" })).join(), /PONG/)
      yield* arm(() => ({ body: goodModal }))
      assert.deepStrictEqual(problems(yield* play({ action: "command", name: "submit" })), [])
      yield* arm(() => ({ body: goodModal }))
      const again = yield* play({ action: "submit", fields: { name: "Bob", team: ["red"] } })
      assert.match(problems(again).join(), /callback type 9 \(MODAL\) is not valid for MODAL_SUBMIT/)
    }))

  it.effect("the callback route answers with 202; follow-ups after a deferred update; the token answers once", () =>
    Effect.gen(function*() {
      const server = yield* SandboxServer
      let callback: { status: number; body: unknown } | undefined
      let second = 0
      yield* arm(async (got) => {
        const url = `${server.url}${API}/interactions/${String(got.interaction["id"])}/${String(got.interaction["token"])}/callback?with_response=true`
        const post = (body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
        const r = await post({ type: 4, data: { content: "Pick a form", flags: 64, components: [{ type: 1, components: [select("pick", ["f1", "f2"])] }] } })
        callback = { status: r.status, body: await r.json() }
        second = (await post({ type: 4, data: { content: "again" } })).status
        return { status: 202 }
      })
      const answer = yield* play({ action: "command", name: "submit" })
      assert.deepStrictEqual(problems(answer), [])
      assert.strictEqual(at(answer.body, "response", "type"), 4)
      assert.strictEqual(callback?.status, 200)
      assertShape("InteractionCallbackResponse", callback?.body)
      assert.strictEqual(second, 400)
      const picked = String(field(answer.body, "message_id"))
      yield* arm(async (got) => {
        setTimeout(() => {
          void fetch(`${server.url}${API}/webhooks/${BOT1_ID}/${String(got.interaction["token"])}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ content: "Started", flags: 64 })
          }).then(async (r) => assertShape("MessageResponse", await r.json()))
        }, 50)
        return { body: { type: 6 } }
      })
      const chosen = yield* play({ action: "select", custom_id: "pick", values: ["f2"], message_id: picked })
      assert.deepStrictEqual(problems(chosen), [])
      assert.deepStrictEqual(at(last().interaction, "data", "values"), ["f2"])
      assert.deepStrictEqual(list(field(chosen.body, "followups")).map((f) => field(f, "content")), ["Started"])
      assert.notStrictEqual(field(chosen.body, "message_id"), picked)
      const hook = `${API}/webhooks/${BOT1_ID}/${String(last().interaction["token"])}/messages`
      const edited = yield* json("PATCH", `${hook}/${String(field(chosen.body, "message_id"))}`, { content: "Started (edited)" })
      assert.strictEqual(edited.status, 200)
      assertShape("MessageResponse", edited.body)
      assert.strictEqual(field((yield* json("GET", `${hook}/${picked}`)).body, "code"), 10008, "another interaction's message")
      assert.strictEqual((yield* play({ action: "select", custom_id: "pick", values: ["f9"], message_id: picked })).status, 400)
    }))

  it.effect("the interaction's webhook closes after 15 minutes; the callback route after 3 s", () =>
    Effect.gen(function*() {
      const server = yield* SandboxServer
      const store = yield* DiscordState
      yield* arm(() => ({ body: { type: 5 } }))
      const deferred = yield* play({ action: "command", name: "submit" })
      assert.deepStrictEqual(problems(deferred), [])
      const token = String(last().interaction["token"])
      const record = interactionsOf(store).byToken.get(token)!
      const original = `${API}/webhooks/${BOT1_ID}/${token}/messages/@original`
      const edit = (content: string) => json("PATCH", original, { content })
      const edited = yield* edit("within 15 minutes")
      assert.strictEqual(edited.status, 200)
      assertShape("MessageResponse", edited.body)
      assert.strictEqual(field(edited.body, "flags"), 0, "no longer loading")
      const got = yield* json("GET", original)
      assertShape("MessageResponse", got.body)
      assert.strictEqual(field(got.body, "content"), "within 15 minutes")
      Object.assign(record, { createdAt: record.createdAt - 15 * 60 * 1000 - 1000 })
      const late = yield* edit("too late")
      assert.deepStrictEqual([late.status, field(late.body, "code")], [404, 10015])
      assert.strictEqual(field((yield* json("POST", `${API}/webhooks/${BOT1_ID}/${token}`, { content: "x" })).body, "code"), 10015)
      // A callback more than 3 s after the interaction: the token was invalidated.
      let status = 0
      yield* arm(async (got) => {
        const rec = interactionsOf(store).byToken.get(String(got.interaction["token"]))!
        Object.assign(rec, { createdAt: rec.createdAt - 3500 })
        const url = `${server.url}${API}/interactions/${String(got.interaction["id"])}/${String(got.interaction["token"])}/callback`
        status = (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type: 5 }) })).status
        return { status: 202 }
      })
      const answer = yield* play({ action: "command", name: "submit" })
      assert.strictEqual(status, 404)
      assert.match(problems(answer).join(), /202 without calling the callback route/)
    }))

  it.effect("GET /applications/@me names the bot's interactions endpoint", () =>
    Effect.gen(function*() {
      const app = yield* json("GET", `${API}/applications/@me`, undefined, { authorization: `Bot ${BOT1_TOKEN}` })
      assert.strictEqual(field(app.body, "interactions_endpoint_url"), `${receiver.url}/interactions/${BOT1_ID}`)
    }))

  it.effect("an answer after 3 s is a problem, and so is one a slow fault delays", () =>
    Effect.gen(function*() {
      yield* arm(() => ({ body: { type: 1 }, delayMs: 3200 }))
      const late = yield* play({ action: "ping" })
      assert.match(problems(late).join(), /answered after 3 s/)
      yield* arm(() => ({ body: { type: 1 } }))
      assert.strictEqual((yield* json("POST", "/sandbox/faults", { route: "POST /sandbox/discord/interactions", kind: "slow" })).status, 200)
      assert.match(problems(yield* play({ action: "ping" })).join(), /answered after 3 s/)
      assert.deepStrictEqual(problems(yield* play({ action: "ping" })), [], "the fault was used once")
    }), { timeout: 20_000 })

  it.effect("requests a person could not make are 400s", () =>
    Effect.gen(function*() {
      yield* arm(() => ({ body: { type: 1 } }))
      assert.strictEqual((yield* play({ action: "command", name: "unknown" })).status, 400)
      assert.strictEqual((yield* play({ action: "command", name: "submit", guild_id: SEED.ids.servers.s4 })).status, 400)
      assert.strictEqual((yield* play({ action: "submit", user_id: SEED.ids.users.alice, fields: {} })).status, 400)
      assert.strictEqual((yield* play({ action: "dance" })).status, 400)
    }))
})
