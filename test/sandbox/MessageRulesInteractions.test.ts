/**
 * The message rules (MessageRules.ts) where a bot answers interactions: the answer checked by the
 * member player (its `problems`) and by the callback route (Discord's 400 body), follow-ups, and
 * @original edits (2,000 characters, never empty); an UPDATE_MESSAGE of a V2 message keeps its
 * layout. Then the member player's submit: what the member sees is what is sent, a text input's
 * preset `value` and a select's default options included.
 */
import { afterAll, assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { defaultSandboxConfig, SandboxConfig, SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOB_ID, BOT1_ID, BOT1_TOKEN, S1_ID, SEED } from "../../src/sandbox/Seed.ts"
import { startReceiver } from "./InteractionReceiver.ts"
import { armer, at, field, json, list } from "./SandboxCallFixtures.ts"

const receiver = await startReceiver()
afterAll(() => receiver.close())

const Sandbox = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, { ...defaultSandboxConfig, interactionsOrigin: receiver.url }))
)

const API = "/sandbox/discord/api/v10"

const arm = armer(receiver)
const play = (body: Record<string, unknown>) =>
  json("POST", "/sandbox/discord/interactions", { bot_id: BOT1_ID, user_id: BOB_ID, guild_id: S1_ID, channel_id: SEED.ids.textChannels.s1, ...body })
const problems = (answer: { readonly body: unknown }) => list(field(answer.body, "problems")).map(String)
const command = () => play({ action: "command", name: "apply" })
const registered = Effect.gen(function*() {
  const put = yield* json("PUT", `${API}/applications/${BOT1_ID}/commands`, [{ name: "apply", description: "Apply", contexts: [0] }], {
    authorization: `Bot ${BOT1_TOKEN}`
  })
  assert.strictEqual(put.status, 200)
})

const text = (n: number) => "x".repeat(n)
const row = (...components: ReadonlyArray<unknown>) => ({ type: 1, components })
const button = (custom_id: string) => ({ type: 2, style: 1, label: "Go", custom_id })
const token = () => String(receiver.received.at(-1)!.interaction["token"])
const errorAt = (body: unknown, ...path: ReadonlyArray<string | number>) =>
  list(at(field(body, "errors"), ...path.map(String), "_errors")).map((e) => field(e, "code"))

layer(Sandbox, { excludeTestServices: true })("sandbox: message rules in interactions", (it) => {
  it.effect("an answer (4) is held to the rules: the player lists the problems; a valid one has none", () =>
    Effect.gen(function*() {
      yield* registered
      yield* arm(() => ({ body: { type: 4, data: { content: "ok", flags: 64 | 4096, embeds: [{ description: text(4096) }, { description: text(1904) }], components: [row(button("a"), button("b"))] } } }))
      assert.deepStrictEqual(problems(yield* command()), [])
      yield* arm(() => ({ body: { type: 4, data: { content: "too big", embeds: [{ description: text(4096) }, { description: text(1905) }] } } }))
      assert.include(problems(yield* command()), "$.data.embeds: Embed size exceeds maximum size of 6000 (MAX_EMBED_SIZE_EXCEEDED)")
      yield* arm(() => ({ body: { type: 4, data: { content: "x", flags: 2, allowed_mentions: { parse: ["users"], users: [BOB_ID] }, components: [row(button("a")), row(button("a"))] } } }))
      const found = problems(yield* command()).join("\n")
      assert.match(found, /\$\.data\.flags: only .*EPHEMERAL \(64\).* got 2/)
      assert.match(found, /\$\.data\.allowed_mentions: .*mutually exclusive/)
      assert.match(found, /\$\.data\.components\[1\]\.components\[0\]\.custom_id: Component custom id cannot be duplicated/)
      yield* arm(() => ({ body: { type: 4, data: { components: Array.from({ length: 6 }, (_, i) => row(button(`r${i}`))) } } }))
      assert.match(problems(yield* command()).join(), /\$\.data\.components: Must be 5 or fewer/)
    }))

  it.effect("the callback route refuses with Discord's 400 body; follow-ups take EPHEMERAL but not IS_VOICE_MESSAGE", () =>
    Effect.gen(function*() {
      const server = yield* SandboxServer
      yield* registered
      const answers: Array<{ status: number; body: unknown }> = []
      yield* arm(async (got) => {
        const url = `${server.url}${API}/interactions/${String(got.interaction["id"])}/${String(got.interaction["token"])}/callback`
        const post = async (body: unknown) => {
          const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
          answers.push({ status: r.status, body: r.status === 204 ? undefined : await r.json() })
        }
        await post({ type: 4, data: { content: "x", components: [row({ type: 2, style: 5, label: "Open", url: "https://example.com", custom_id: "no" })] } })
        await post({ type: 5, data: { flags: 64 } })
        return { status: 202 }
      })
      assert.deepStrictEqual(problems(yield* command()), [])
      assert.deepStrictEqual([answers[0]!.status, field(answers[0]!.body, "code"), field(answers[0]!.body, "message")], [400, 50035, "Invalid Form Body"])
      assert.deepStrictEqual(errorAt(answers[0]!.body, "data", "components", 0, "components", 0, "custom_id"), ["BUTTON_COMPONENT_INVALID_FIELD"])
      assert.strictEqual(answers[1]!.status, 204, "the refused answer did not acknowledge the interaction")
      const hook = `${API}/webhooks/${BOT1_ID}/${token()}`
      // The first follow-up edits the loading message; the next ones are new messages.
      assert.strictEqual((yield* json("POST", hook, { content: "loaded" })).status, 200)
      assert.strictEqual((yield* json("POST", hook, { content: "secret", flags: 64 })).status, 200)
      const voice = yield* json("POST", hook, { content: "voice?", flags: 8192 })
      assert.deepStrictEqual([voice.status, field(voice.body, "code")], [400, 50035])
      assert.isNotEmpty(errorAt(voice.body, "flags"))
      const big = yield* json("POST", hook, { embeds: [{ fields: Array.from({ length: 25 }, () => ({ name: text(40), value: text(200) })) }, { title: "t" }] })
      assert.deepStrictEqual(errorAt(big.body, "embeds"), ["MAX_EMBED_SIZE_EXCEEDED"])
    }))

  it.effect("@original edits: 2,000 characters, the rules, and 50006 for an edit that leaves nothing", () =>
    Effect.gen(function*() {
      yield* registered
      yield* arm(() => ({ body: { type: 4, data: { content: "Saved", components: [row(button("next"))] } } }))
      assert.deepStrictEqual(problems(yield* command()), [])
      const original = `${API}/webhooks/${BOT1_ID}/${token()}/messages/@original`
      assert.strictEqual((yield* json("PATCH", original, { content: text(2000) })).status, 200)
      const long = yield* json("PATCH", original, { content: text(2001) })
      assert.deepStrictEqual([long.status, field(long.body, "code")], [400, 50035])
      assert.strictEqual((yield* json("PATCH", original, { content: null })).status, 200, "the components remain")
      const empty = yield* json("PATCH", original, { components: [] })
      assert.deepStrictEqual([empty.status, field(empty.body, "code"), field(empty.body, "message")], [400, 50006, "Cannot send an empty message"])
      const big = yield* json("PATCH", original, { embeds: [{ description: text(4096) }, { description: text(1905) }] })
      assert.deepStrictEqual(errorAt(big.body, "embeds"), ["MAX_EMBED_SIZE_EXCEEDED"])
      const wide = yield* json("PATCH", original, { components: [row({ type: 3, custom_id: "s", options: [{ label: "A", value: "a" }] }, button("b"))] })
      assert.deepStrictEqual(errorAt(wide.body, "components", 0, "components", 1), ["COMPONENT_LAYOUT_WIDTH_EXCEEDED"])
    }))

  it.effect("UPDATE_MESSAGE (7) of a V2 message keeps the V2 layout; content is refused there", () =>
    Effect.gen(function*() {
      yield* registered
      const v2 = [{ type: 10, content: "Pick one" }, row(button("pick"))]
      yield* arm(() => ({ body: { type: 4, data: { flags: 32768 | 64, components: v2 } } }))
      const sent = yield* command()
      assert.deepStrictEqual(problems(sent), [])
      const messageId = String(field(sent.body, "message_id"))
      yield* arm(() => ({ body: { type: 7, data: { components: [{ type: 10, content: "Picked" }, row(button("pick"))] } } }))
      assert.deepStrictEqual(problems(yield* play({ action: "click", custom_id: "pick", message_id: messageId })), [])
      yield* arm(() => ({ body: { type: 7, data: { content: "plain text now" } } }))
      assert.match(problems(yield* play({ action: "click", custom_id: "pick", message_id: messageId })).join(), /\$\.data\.content: .*IS_COMPONENTS_V2/)
    }))

  it.effect("submit: a preset value and default options left out of fields are sent as the member sees them; only inputs with neither are empty", () =>
    Effect.gen(function*() {
      yield* registered
      const modal = {
        type: 9,
        data: {
          custom_id: "form:prefilled",
          title: "Application",
          components: [
            { type: 18, label: "Name", component: { type: 4, custom_id: "name", style: 1, value: "Bob the Builder" } },
            { type: 18, label: "About", component: { type: 4, custom_id: "about", style: 2, required: false } },
            {
              type: 18,
              label: "Teams",
              component: {
                type: 3,
                custom_id: "teams",
                min_values: 1,
                max_values: 2,
                options: [{ label: "Red", value: "red", default: true }, { label: "Blue", value: "blue" }, { label: "Green", value: "green", default: true }]
              }
            },
            { type: 18, label: "Extra", component: { type: 3, custom_id: "extra", required: false, min_values: 0, options: [{ label: "A", value: "a" }] } }
          ]
        }
      }
      const values = (interaction: Readonly<Record<string, unknown>>) =>
        Object.fromEntries(list(at(interaction, "data", "components")).map((c) => {
          const input = field(c, "component")
          return [String(field(input, "custom_id")), field(input, "value") ?? field(input, "values")]
        }))
      yield* arm(() => ({ body: modal }))
      assert.deepStrictEqual(problems(yield* command()), [])
      yield* arm(() => ({ body: { type: 4, data: { content: "Thanks", flags: 64 } } }))
      const untouched = yield* play({ action: "submit", fields: {} })
      assert.deepStrictEqual(problems(untouched), [])
      assert.deepStrictEqual(values(receiver.received.at(-1)!.interaction), { name: "Bob the Builder", about: "", teams: ["red", "green"], extra: [] })

      yield* arm(() => ({ body: modal }))
      assert.deepStrictEqual(problems(yield* command()), [])
      yield* arm(() => ({ body: { type: 4, data: { content: "Thanks", flags: 64 } } }))
      const changed = yield* play({ action: "submit", fields: { name: "Robert", teams: ["blue"], about: "Hi" } })
      assert.deepStrictEqual(problems(changed), [])
      assert.deepStrictEqual(values(receiver.received.at(-1)!.interaction), { name: "Robert", about: "Hi", teams: ["blue"], extra: [] })

      // A required input with no preset value, left out, is still refused as the client refuses it.
      const required = { ...modal, data: { ...modal.data, components: [{ type: 18, label: "Email", component: { type: 4, custom_id: "email", style: 1 } }] } }
      yield* arm(() => ({ body: required }))
      assert.deepStrictEqual(problems(yield* command()), [])
      const missing = yield* play({ action: "submit", fields: {} })
      assert.strictEqual(missing.status, 400)
      assert.match(String(field(missing.body, "message")), /email: required/)
    }))
})
