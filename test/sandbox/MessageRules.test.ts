/**
 * Discord's message rules beyond the schema (MessageRules.ts), as a bot meets them on the sandbox's
 * routes: embeds' total size, the classic component layout without IS_COMPONENTS_V2, the flags each
 * route takes, allowed mentions' exclusive `parse`, and edits (2,000 characters, never empty). Each
 * refusal is checked as the bot sees it (status, Discord's error body), beside a message that passes.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { embedsLength, messageProblems } from "../../src/sandbox/MessageRules.ts"
import { defaultSandboxConfig, SandboxConfig, SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOB_ID, BOT1_TOKEN, BOT2_TOKEN, SEED } from "../../src/sandbox/Seed.ts"
import { call, field } from "./SandboxCallFixtures.ts"

// Generous limits: these tests send many messages in a few seconds.
const roomy = { limit: 10_000, windowMs: 1000 }
const Sandbox = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, {
    ...defaultSandboxConfig,
    buckets: { "POST /webhooks/{id}/{token}": roomy },
    defaultBucket: roomy,
    globalLimit: roomy
  }))
)

const API = "/sandbox/discord/api/v10"
const bot1 = { authorization: `Bot ${BOT1_TOKEN}` }
const bot2 = { authorization: `Bot ${BOT2_TOKEN}` }
const CHANNEL = SEED.ids.textChannels.s1
const send = (method: string, path: string, body: unknown, headers: Record<string, string> = bot1) =>
  call(`${API}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
const create = (body: unknown) => send("POST", `/channels/${CHANNEL}/messages`, body)

const text = (n: number, c = "x") => c.repeat(n)
const button = (custom_id: string, extra: Record<string, unknown> = {}) => ({ type: 2, style: 1, label: "Go", custom_id, ...extra })
const link = (url = "https://example.com", extra: Record<string, unknown> = {}) => ({ type: 2, style: 5, label: "Open", url, ...extra })
const row = (...components: ReadonlyArray<unknown>) => ({ type: 1, components })
const select = (custom_id: string) => ({ type: 3, custom_id, options: [{ label: "A", value: "a" }] })
/** 25 fields of 240 characters: 6,000 in all. */
const fullFields = Array.from({ length: 25 }, (_, i) => ({ name: text(40, String.fromCharCode(97 + (i % 26))), value: text(200) }))

/** Discord's 400 for a body it refuses: `{ code: 50035, message: "Invalid Form Body", errors }`, with the error at `path`. */
const refusedAt = (answer: { readonly status: number; readonly body: unknown }, path: ReadonlyArray<string | number>, code?: string) => {
  assert.strictEqual(answer.status, 400, JSON.stringify(answer.body))
  assert.strictEqual(field(answer.body, "code"), 50035)
  assert.strictEqual(field(answer.body, "message"), "Invalid Form Body")
  const node = path.reduce<unknown>((n, k) => field(n, String(k)), field(answer.body, "errors"))
  const errors = field(node, "_errors")
  assert.isArray(errors, `no error at ${path.join(".")}: ${JSON.stringify(field(answer.body, "errors"))}`)
  if (code !== undefined) assert.include((errors as Array<unknown>).map((e) => field(e, "code")), code, JSON.stringify(errors))
  return errors as ReadonlyArray<{ code: string; message: string }>
}
const accepted = (answer: { readonly status: number; readonly body: unknown }) => assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))

describe("message rules", () => {
  it("count title, description, field names and values, footer text and author name, trimmed, across all embeds", () => {
    assert.strictEqual(embedsLength([{ title: "ab", description: "  cd  ", fields: [{ name: "e", value: "fg" }], footer: { text: "h" }, author: { name: "ij" }, url: "https://x.y" }, { title: "k" }]), 11)
    assert.deepStrictEqual(messageProblems({ embeds: [{ fields: fullFields }] }, "create"), [])
    assert.deepStrictEqual(messageProblems({ embeds: [{ fields: fullFields, footer: { text: "f" } }] }, "create"), ["$.embeds: Embed size exceeds maximum size of 6000 (MAX_EMBED_SIZE_EXCEEDED)"])
  })

  it("flags by route: create, execute, follow-up, answer", () => {
    const table: ReadonlyArray<readonly ["create" | "execute" | "followup" | "answer", number, boolean]> = [
      ["create", 4 | 4096, true],
      ["create", 64, false],
      ["create", 2, false],
      ["execute", 4096, true],
      ["execute", 64, false],
      ["execute", 8192, false],
      ["followup", 64 | 4, true],
      ["followup", 128, false],
      ["answer", 64 | 4096 | 4, true],
      ["answer", 1, false]
    ]
    for (const [route, flags, ok] of table) {
      const problems = messageProblems({ content: "x", flags }, route)
      assert.strictEqual(problems.length === 0, ok, `${route} ${flags}: ${problems.join()}`)
    }
  })
})

layer(Sandbox, { excludeTestServices: true })("sandbox: message rules on the routes", (it) => {
  it.effect("embeds: at most 6,000 characters in all, 25 fields each, 10 embeds (create)", () =>
    Effect.gen(function*() {
      accepted(yield* create({ embeds: [{ description: text(4000) + "    " }, { title: text(256), description: text(1744) }] }))
      accepted(yield* create({ embeds: [{ fields: fullFields }] }))
      const over = yield* create({ embeds: [{ description: text(4000) }, { title: text(256), description: text(1745) }] })
      const errors = refusedAt(over, ["embeds"], "MAX_EMBED_SIZE_EXCEEDED")
      assert.strictEqual(errors[0]!.message, "Embed size exceeds maximum size of 6000")
      refusedAt(yield* create({ embeds: [{ fields: fullFields, author: { name: "A" } }] }), ["embeds"], "MAX_EMBED_SIZE_EXCEEDED")
      refusedAt(yield* create({ embeds: [{ fields: [...fullFields.slice(0, 25), { name: "n", value: "v" }].map((f) => ({ name: f.name.slice(0, 1), value: "v" })) }] }), ["embeds", 0, "fields"])
      refusedAt(yield* create({ embeds: Array.from({ length: 11 }, () => ({ title: "t" })) }), ["embeds"])
    }))

  it.effect("classic layout: up to 5 action rows of up to 5 buttons or one select; button fields by style; unique custom ids", () =>
    Effect.gen(function*() {
      accepted(yield* create({
        content: "A full form",
        components: [
          row(button("a1"), button("a2"), button("a3"), button("a4"), link()),
          row(select("s1")),
          row(button("c1", { style: 2 }), button("c2", { style: 3 }), button("c3", { style: 4 })),
          row(link("https://example.com/2")),
          row(button("e1", { label: text(80) }))
        ]
      }))
      refusedAt(yield* create({ components: Array.from({ length: 6 }, (_, i) => row(button(`r${i}`))) }), ["components"], "BASE_TYPE_MAX_LENGTH")
      refusedAt(yield* create({ components: [{ type: 10, content: "Text display without the V2 flag" }] }), ["components", 0, "type"])
      refusedAt(yield* create({ components: [row(select("s"), button("b"))] }), ["components", 0, "components", 1], "COMPONENT_LAYOUT_WIDTH_EXCEEDED")
      refusedAt(yield* create({ components: [row(button("b1"), select("s"))] }), ["components", 0, "components", 1], "COMPONENT_LAYOUT_WIDTH_EXCEEDED")
      refusedAt(yield* create({ components: [row(...Array.from({ length: 6 }, (_, i) => button(`w${i}`)))] }), ["components", 0, "components", 5], "COMPONENT_LAYOUT_WIDTH_EXCEEDED")
      refusedAt(yield* create({ components: [row({ type: 2, style: 1, label: "No id" })] }), ["components", 0, "components", 0, "custom_id"], "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED")
      refusedAt(yield* create({ components: [row(button("b", { url: "https://example.com" }))] }), ["components", 0, "components", 0, "url"])
      refusedAt(yield* create({ components: [row({ type: 2, style: 5, label: "No url" })] }), ["components", 0, "components", 0, "url"])
      refusedAt(yield* create({ components: [row(link("https://example.com", { custom_id: "x" }))] }), ["components", 0, "components", 0, "custom_id"])
      refusedAt(yield* create({ components: [row({ type: 2, style: 6 })] }), ["components", 0, "components", 0, "sku_id"])
      refusedAt(yield* create({ components: [row(button("same")), row(button("other"), button("same"))] }), ["components", 1, "components", 1, "custom_id"], "COMPONENT_CUSTOM_ID_DUPLICATED")
      refusedAt(yield* create({ components: [row(button("long", { label: text(81) }))] }), ["components", 0, "components", 0, "label"])
    }))

  it.effect("IS_COMPONENTS_V2: the layout is the schema's, but no content or embeds", () =>
    Effect.gen(function*() {
      const v2 = [{ type: 10, content: "Hello" }, row(button("v1")), { type: 17, components: [{ type: 10, content: "Inside" }] }]
      accepted(yield* create({ flags: 32768, components: v2 }))
      refusedAt(yield* create({ flags: 32768, components: v2, content: "Hi" }), ["content"])
      refusedAt(yield* create({ flags: 32768, components: v2, embeds: [{ title: "t" }] }), ["embeds"])
      refusedAt(yield* create({ flags: 32768, components: [row(button("dup")), { type: 9, components: [{ type: 10, content: "s" }], accessory: button("dup") }] }), ["components", 1, "accessory", "custom_id"], "COMPONENT_CUSTOM_ID_DUPLICATED")
    }))

  it.effect("flags on create: SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS and IS_COMPONENTS_V2 pass; EPHEMERAL and others are refused", () =>
    Effect.gen(function*() {
      accepted(yield* create({ content: "quiet", flags: 4 | 4096 }))
      refusedAt(yield* create({ content: "ephemeral?", flags: 64 }), ["flags"])
      refusedAt(yield* create({ content: "crossposted?", flags: 2 }), ["flags"])
    }))

  it.effect("allowed_mentions: parse users with a users list (or roles with roles) is refused; an empty list or another type passes", () =>
    Effect.gen(function*() {
      accepted(yield* create({ content: `<@${BOB_ID}>`, allowed_mentions: { parse: ["users"], users: [] } }))
      accepted(yield* create({ content: `@everyone <@${BOB_ID}>`, allowed_mentions: { parse: ["everyone"], users: [BOB_ID] } }))
      const users = refusedAt(yield* create({ content: `<@${BOB_ID}>`, allowed_mentions: { parse: ["users"], users: [BOB_ID] } }), ["allowed_mentions"], "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE")
      assert.match(users[0]!.message, /mutually exclusive/)
      refusedAt(yield* create({ content: "roles", allowed_mentions: { parse: ["roles"], roles: [SEED.guilds[0]!.roles[0]!.id] } }), ["allowed_mentions"], "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE")
    }))

  it.effect("edits: content up to 2,000 characters; an edit that leaves nothing is 50006; the rules hold for the message after the edit", () =>
    Effect.gen(function*() {
      const posted = yield* create({ content: "first", embeds: [{ title: "kept" }] })
      accepted(posted)
      const path = `/channels/${CHANNEL}/messages/${String(field(posted.body, "id"))}`
      accepted(yield* send("PATCH", path, { content: text(2000) }))
      refusedAt(yield* send("PATCH", path, { content: text(2001) }), ["content"])
      accepted(yield* send("PATCH", path, { content: null }))
      const empty = yield* send("PATCH", path, { embeds: [] })
      assert.deepStrictEqual([empty.status, field(empty.body, "code"), field(empty.body, "message")], [400, 50006, "Cannot send an empty message"])
      refusedAt(yield* send("PATCH", path, { embeds: [{ description: text(4096) }, { description: text(1905) }] }), ["embeds"], "MAX_EMBED_SIZE_EXCEEDED")
      refusedAt(yield* send("PATCH", path, { components: [row(link("https://example.com", { custom_id: "x" }))] }), ["components", 0, "components", 0, "custom_id"])
      refusedAt(yield* send("PATCH", path, { allowed_mentions: { parse: ["users"], users: [BOB_ID] } }), ["allowed_mentions"])
      const got = yield* call(`${API}${path}`, { headers: bot1 })
      assert.deepStrictEqual([field(got.body, "content"), (field(got.body, "embeds") as Array<unknown>).length], ["", 1], "the refused edits changed nothing")
      // A V2 message keeps its flag: an edit cannot add content back.
      const v2 = yield* create({ flags: 32768, components: [{ type: 10, content: "V2" }] })
      accepted(v2)
      const v2Path = `/channels/${CHANNEL}/messages/${String(field(v2.body, "id"))}`
      refusedAt(yield* send("PATCH", v2Path, { content: "back to text" }), ["content"])
      accepted(yield* send("PATCH", v2Path, { components: [{ type: 10, content: "V2, edited" }] }))
      const unflagged = yield* send("PATCH", v2Path, { flags: 4, components: [{ type: 10, content: "still V2" }] })
      accepted(unflagged)
      assert.strictEqual(field(unflagged.body, "flags"), 32768 | 4, "IS_COMPONENTS_V2 cannot be removed")
    }))

  it.effect("webhook executes: the same embed, component, flag and mention rules", () =>
    Effect.gen(function*() {
      const created = yield* send("POST", `/channels/${SEED.ids.textChannels.s4}/webhooks`, { name: "Rules" }, bot2)
      accepted(created)
      const url = `/webhooks/${String(field(created.body, "id"))}/${String(field(created.body, "token"))}?wait=true`
      const execute = (body: unknown) => call(`${API}${url}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      accepted(yield* execute({ content: "fine", flags: 4096, embeds: [{ fields: fullFields }], allowed_mentions: { parse: ["users"] } }))
      refusedAt(yield* execute({ embeds: [{ fields: fullFields, title: "t" }] }), ["embeds"], "MAX_EMBED_SIZE_EXCEEDED")
      refusedAt(yield* execute({ embeds: [{ fields: [...fullFields, { name: "n", value: "v" }].map(() => ({ name: "n", value: "v" })) }] }), ["embeds", 0, "fields"])
      refusedAt(yield* execute({ content: "x", flags: 64 }), ["flags"])
      refusedAt(yield* execute({ content: "x", allowed_mentions: { parse: ["users"], users: [BOB_ID] } }), ["allowed_mentions"])
      refusedAt(yield* execute({ content: "x", components: [row(link(), link("https://example.com/b", { custom_id: "c" }))] }), ["components", 0, "components", 1, "custom_id"])
    }))
})
