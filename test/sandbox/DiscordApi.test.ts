import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import type { SchemaDocument } from "../../src/sandbox/DiscordSchemaCheck.ts"
import { checkSchema } from "../../src/sandbox/DiscordSchemaCheck.ts"
import { DiscordState, SandboxServer } from "../../src/sandbox/Sandbox.ts"
import {
  ALICE_ID,
  ALL_PERMISSIONS,
  BOB_ID,
  BOT1_ID,
  BOT1_TOKEN,
  BOT2_ID,
  BOT2_TOKEN,
  CAROL_ID,
  computePermissions,
  findGuild,
  PermissionBits,
  S1_ID,
  S2_ID,
  S3_ID,
  S4_ID,
  SEED,
  WEBHOOK_S1_ID,
  WEBHOOK_S1_TOKEN
} from "../../src/sandbox/Seed.ts"
import { call, field } from "./SandboxCallFixtures.ts"

const doc = JSON.parse(
  readFileSync(new URL("../fixtures/discord/openapi-subset.json", import.meta.url), "utf8")
) as SchemaDocument

const assertShape = (schema: string, value: unknown) => assert.deepStrictEqual(checkSchema(doc, schema, value), [])

const bot1 = { authorization: `Bot ${BOT1_TOKEN}` }
const bot2 = { authorization: `Bot ${BOT2_TOKEN}` }

const api = (path: string, init?: RequestInit) => call(`/sandbox/discord/api/v10${path}`, init)

const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const assertRateLimitHeaders = (headers: Headers) => {
  for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-reset-after"]) {
    assert.isFalse(Number.isNaN(Number(headers.get(name))), `${name}: ${headers.get(name)}`)
  }
  assert.match(headers.get("x-ratelimit-bucket") ?? "", /^[0-9a-f]{32}$/)
}

describe("seed", () => {
  it("computes permissions like Discord", () => {
    const perms = (guild: string, user: string) => computePermissions(findGuild(guild)!, user)
    const has = (bits: bigint | undefined, bit: bigint) => bits !== undefined && (bits & bit) !== 0n
    const { ADMINISTRATOR, MANAGE_GUILD, MANAGE_WEBHOOKS, VIEW_AUDIT_LOG } = PermissionBits
    assert.strictEqual(perms(S1_ID, ALICE_ID), ALL_PERMISSIONS)
    for (const bit of [ADMINISTRATOR, MANAGE_GUILD, MANAGE_WEBHOOKS, VIEW_AUDIT_LOG]) {
      assert.isFalse(has(perms(S1_ID, BOB_ID), bit))
      assert.isFalse(has(perms(S3_ID, ALICE_ID), bit))
    }
    assert.isUndefined(perms(S1_ID, CAROL_ID))
    assert.isTrue(has(perms(S2_ID, ALICE_ID), MANAGE_GUILD))
    assert.isFalse(has(perms(S2_ID, ALICE_ID), VIEW_AUDIT_LOG))
    assert.isFalse(has(perms(S2_ID, ALICE_ID), MANAGE_WEBHOOKS))
    assert.strictEqual(perms(S3_ID, BOB_ID), ALL_PERMISSIONS)
    assert.strictEqual(perms(S4_ID, BOB_ID), ALL_PERMISSIONS)
    assert.isTrue(has(perms(S4_ID, CAROL_ID), MANAGE_GUILD | MANAGE_WEBHOOKS | VIEW_AUDIT_LOG))
    assert.isTrue(has(perms(S4_ID, CAROL_ID), MANAGE_GUILD) && has(perms(S4_ID, CAROL_ID), VIEW_AUDIT_LOG))
    assert.isTrue(has(perms(S1_ID, BOT1_ID), MANAGE_WEBHOOKS))
    assert.isTrue(has(perms(S3_ID, BOT1_ID), MANAGE_WEBHOOKS))
    assert.isFalse(has(perms(S2_ID, BOT1_ID), MANAGE_WEBHOOKS))
    for (const g of [S1_ID, S3_ID, S4_ID]) assert.isTrue(has(perms(g, BOT2_ID), MANAGE_WEBHOOKS))
    assert.isUndefined(perms(S4_ID, BOT1_ID))
    assert.strictEqual(SEED.taskboardTeam, "sandbox-team-1")
    assert.strictEqual(findGuild(S1_ID)?.taskboardTeam, "sandbox-team-1")
  })

  it("gives every server text, news, voice and category channels and coloured roles", () => {
    for (const guild of SEED.guilds) {
      const types = guild.channels.map((c) => c.type)
      assert.isAtLeast(types.filter((t) => t === 0).length, 2)
      for (const t of [2, 4, 5] as const) assert.include(types, t)
      for (const c of guild.channels) assert.match(c.id, /^\d{18}$/)
      const everyone = guild.roles.find((r) => r.id === guild.id)
      assert.strictEqual(everyone?.color, 0)
      assert.isAtLeast(guild.roles.filter((r) => r.color !== 0).length, 2)
    }
  })
})

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox Discord API", (it) => {
  it.effect("GET /sandbox lists users, bots and sources", () =>
    Effect.gen(function*() {
      const answer = yield* call("/sandbox")
      assert.strictEqual(answer.status, 200)
      assert.deepStrictEqual(list(field(answer.body, "users")).map((u) => field(u, "id")), [ALICE_ID, BOB_ID, CAROL_ID])
      assert.deepStrictEqual(list(field(answer.body, "bots")).map((b) => [field(b, "id"), field(b, "name")]), [
        [BOT1_ID, "FormsBot"],
        [BOT2_ID, "FeedsBot"]
      ])
      assert.isObject(field(answer.body, "sources"))
    }))

  it.effect("GET /users/@me with a bot token is the bot user", () =>
    Effect.gen(function*() {
      const answer = yield* api("/users/@me", { headers: bot1 })
      assert.strictEqual(answer.status, 200)
      assertShape("UserPIIResponse", answer.body)
      assert.strictEqual(field(answer.body, "id"), BOT1_ID)
      assert.strictEqual(field(answer.body, "bot"), true)
      assert.strictEqual(field(answer.body, "username"), "FormsBot")
      assertRateLimitHeaders(answer.headers)
    }))

  it.effect("GET /users/@me/guilds with a bot token lists its guilds with its permissions", () =>
    Effect.gen(function*() {
      const answer = yield* api("/users/@me/guilds", { headers: bot1 })
      assert.strictEqual(answer.status, 200)
      for (const g of list(answer.body)) assertShape("MyGuildResponse", g)
      assert.deepStrictEqual(list(answer.body).map((g) => field(g, "id")), [S1_ID, S2_ID, S3_ID])
      const s2 = list(answer.body).find((g) => field(g, "id") === S2_ID)
      assert.strictEqual(BigInt(String(field(s2, "permissions"))) & PermissionBits.MANAGE_WEBHOOKS, 0n)
      assert.strictEqual(field(s2, "owner"), false)
      const second = yield* api("/users/@me/guilds", { headers: bot2 })
      assert.deepStrictEqual(list(second.body).map((g) => field(g, "id")), [S1_ID, S3_ID, S4_ID])
    }))

  it.effect("GET /guilds/{id} is GuildResponse with owner and roles", () =>
    Effect.gen(function*() {
      const answer = yield* api(`/guilds/${S1_ID}?with_counts=true`, { headers: bot1 })
      assert.strictEqual(answer.status, 200)
      assertShape("GuildWithCountsResponse", answer.body)
      assertShape("GuildResponse", answer.body)
      assert.strictEqual(field(answer.body, "owner_id"), ALICE_ID)
      const roles = list(field(answer.body, "roles"))
      assert.strictEqual(field(roles.find((r) => field(r, "id") === S1_ID), "name"), "@everyone")
      assertRateLimitHeaders(answer.headers)
    }))

  it.effect("GET /guilds/{id}/channels and /roles", () =>
    Effect.gen(function*() {
      const channels = yield* api(`/guilds/${S3_ID}/channels`, { headers: bot2 })
      assert.strictEqual(channels.status, 200)
      for (const c of list(channels.body)) assertShape("GuildChannelResponse", c)
      assert.deepStrictEqual(list(channels.body).map((c) => field(c, "type")), [4, 0, 0, 5, 2])
      const roles = yield* api(`/guilds/${S3_ID}/roles`, { headers: bot2 })
      assert.strictEqual(roles.status, 200)
      for (const r of list(roles.body)) assertShape("GuildRoleResponse", r)
      const admins = list(roles.body).find((r) => field(r, "name") === "Admins")
      assert.strictEqual(field(admins, "permissions"), String(PermissionBits.ADMINISTRATOR))
      assert.strictEqual(field(admins, "color"), 0xE74C3C)
    }))

  it.effect("webhooks: list, create, fetch by token, delete", () =>
    Effect.gen(function*() {
      const channel = SEED.ids.textChannels.s1
      const listed = yield* api(`/channels/${channel}/webhooks`, { headers: bot2 })
      assert.strictEqual(listed.status, 200)
      for (const w of list(listed.body)) assertShape("GuildIncomingWebhookResponse", w)
      assert.include(list(listed.body).map((w) => field(w, "id")), WEBHOOK_S1_ID)
      const seeded = yield* api(`/webhooks/${WEBHOOK_S1_ID}/${WEBHOOK_S1_TOKEN}`)
      assert.strictEqual(seeded.status, 200)
      assert.strictEqual(field(seeded.body, "application_id"), BOT2_ID)

      const created = yield* api(`/channels/${channel}/webhooks`, {
        method: "POST",
        headers: { ...bot1, "content-type": "application/json" },
        body: JSON.stringify({ name: "Forms" })
      })
      assert.strictEqual(created.status, 200)
      assertShape("GuildIncomingWebhookResponse", created.body)
      assert.strictEqual(field(created.body, "type"), 1)
      assert.strictEqual(field(created.body, "application_id"), BOT1_ID)
      assert.strictEqual(field(created.body, "guild_id"), S1_ID)
      assert.strictEqual(field(created.body, "channel_id"), channel)
      const id = String(field(created.body, "id"))
      const token = String(field(created.body, "token"))
      assert.isAtLeast(token.length, 60)
      assert.match(String(field(created.body, "url")), new RegExp(`/sandbox/discord/api/v10/webhooks/${id}/`))

      const byToken = yield* call(`/sandbox/discord/api/v10/webhooks/${id}/${token}`)
      assert.strictEqual(byToken.status, 200)
      assertShape("GuildIncomingWebhookResponse", byToken.body)
      assert.isUndefined(field(byToken.body, "user"))
      const wrongToken = yield* api(`/webhooks/${id}/not-the-token`)
      assert.strictEqual(wrongToken.status, 404)
      assert.deepStrictEqual(wrongToken.body, { message: "Unknown Webhook", code: 10015 })

      const executed = yield* api(`/webhooks/${id}/${token}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "hello" })
      })
      assert.strictEqual(executed.status, 204)
      const store = yield* DiscordState
      assert.deepStrictEqual(store.messages.map((m) => m.body), [{ content: "hello" }])

      const deleted = yield* api(`/webhooks/${id}`, { method: "DELETE", headers: bot1 })
      assert.strictEqual(deleted.status, 204)
      const gone = yield* api(`/webhooks/${id}/${token}`)
      assert.strictEqual(gone.status, 404)
      assertShape("ErrorResponse", gone.body)
    }))

  it.effect("creating a webhook without MANAGE_WEBHOOKS is 403 Missing Permissions", () =>
    Effect.gen(function*() {
      const answer = yield* api(`/channels/${SEED.ids.textChannels.s2}/webhooks`, {
        method: "POST",
        headers: { ...bot1, "content-type": "application/json" },
        body: JSON.stringify({ name: "Forms" })
      })
      assert.strictEqual(answer.status, 403)
      assert.deepStrictEqual(answer.body, { message: "Missing Permissions", code: 50013 })
      assertShape("ErrorResponse", answer.body)
      const listing = yield* api(`/channels/${SEED.ids.textChannels.s2}/webhooks`, { headers: bot1 })
      assert.strictEqual(listing.status, 403)
    }))

  it.effect("an invalid webhook name is 400 Invalid Form Body", () =>
    Effect.gen(function*() {
      const answer = yield* api(`/channels/${SEED.ids.textChannels.s1}/webhooks`, {
        method: "POST",
        headers: { ...bot1, "content-type": "application/json" },
        body: JSON.stringify({ name: "" })
      })
      assert.strictEqual(answer.status, 400)
      assert.strictEqual(field(answer.body, "code"), 50035)
      // Real Discord field errors carry string codes ("BASE_TYPE_BAD_LENGTH"); the OpenAPI document
      // types them as integers, so only the top level is checked against the schema.
      assertShape("Error", { message: field(answer.body, "message"), code: field(answer.body, "code") })
      assert.isArray(field(field(field(answer.body, "errors"), "name"), "_errors"))
    }))

  it.effect("unknown or foreign objects are Discord's 404s", () =>
    Effect.gen(function*() {
      const foreign = yield* api(`/guilds/${S4_ID}`, { headers: bot1 })
      assert.strictEqual(foreign.status, 404)
      assert.deepStrictEqual(foreign.body, { message: "Unknown Guild", code: 10004 })
      assertShape("ErrorResponse", foreign.body)
      assertRateLimitHeaders(foreign.headers)
      const unknown = yield* api(`/guilds/399999999999999999/roles`, { headers: bot1 })
      assert.deepStrictEqual([unknown.status, unknown.body], [404, { message: "Unknown Guild", code: 10004 }])
      const channel = yield* api(`/channels/319999999999999999/webhooks`, { headers: bot1 })
      assert.deepStrictEqual([channel.status, channel.body], [404, { message: "Unknown Channel", code: 10003 }])
      const webhook = yield* api(`/webhooks/339999999999999999`, { method: "DELETE", headers: bot1 })
      assert.deepStrictEqual([webhook.status, webhook.body], [404, { message: "Unknown Webhook", code: 10015 }])
      const route = yield* api(`/no/such/route`, { headers: bot1 })
      assert.deepStrictEqual([route.status, route.body], [404, { message: "404: Not Found", code: 0 }])
    }))

  it.effect("a bad or missing token is 401", () =>
    Effect.gen(function*() {
      for (const headers of [{}, { authorization: "Bot nope" }, { authorization: "Bearer nope" }, { authorization: "nope" }]) {
        const answer = yield* api("/users/@me", { headers })
        assert.strictEqual(answer.status, 401)
        assert.deepStrictEqual(answer.body, { message: "401: Unauthorized", code: 0 })
        assertShape("ErrorResponse", answer.body)
        assertRateLimitHeaders(answer.headers)
      }
      const webhooks = yield* api(`/channels/${SEED.ids.textChannels.s1}/webhooks`, { method: "POST", body: "{}" })
      assert.strictEqual(webhooks.status, 401)
    }))
})
