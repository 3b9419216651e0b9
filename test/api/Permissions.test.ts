/**
 * The permission matrix of decisions.md ("Servers, modules, permissions") over HTTP, against the
 * sandbox chat platform and a real database: who may see and manage which server, which modules are
 * `available`, 200/403/404 per route, and the shape of channels and roles.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  ALICE_ID,
  BOB_ID,
  BOT1_ID,
  BOT2_ID,
  CAROL_ID,
  channelId,
  roleId,
  S1_ID,
  S2_ID,
  S3_ID,
  S4_ID
} from "../../src/sandbox/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"

const UNKNOWN_BOT = "299999999999999999"
const UNKNOWN_SERVER = "399999999999999999"
const FEED_MODULES = ["photo", "forum", "rss", "streaming", "microblog", "video"] as const
const ALL_MODULES = ["forms", ...FEED_MODULES] as const

const get = (userId: string, path: string) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(userId)
    const res = yield* raw({ token }, `/api/v1${path}`)
    const body = yield* json(res)
    return { status: res.status, body }
  })

/** Every route of decisions.md's matrix for one server, the module routes by their list reads. */
const routesOf = (bot: string, server: string) => {
  const base = `/bots/${bot}/servers/${server}`
  return {
    server: base,
    modules: `${base}/modules`,
    logs: `${base}/logs`,
    forms: `${base}/modules/forms`,
    ...Object.fromEntries(FEED_MODULES.map((m) => [m, `${base}/modules/${m}/feeds`]))
  } as Record<"server" | "modules" | "logs" | (typeof ALL_MODULES)[number], string>
}

type Expect = Partial<Record<keyof ReturnType<typeof routesOf>, number>>

const expectAll = (userId: string, bot: string, server: string, expected: Expect, label: string) =>
  Effect.gen(function*() {
    const routes = routesOf(bot, server)
    const results = yield* Effect.forEach(
      Object.entries(expected),
      ([name, status]) =>
        Effect.map(get(userId, routes[name as keyof typeof routes]), (r) => ({ name, status, r })),
      { concurrency: 4 }
    )
    for (const { name, r, status } of results) {
      assert.strictEqual(r.status, status, `${label}: ${name} → ${r.status} ${JSON.stringify(r.body)}`)
      if (status >= 400) {
        assert.deepStrictEqual(Object.keys(r.body), ["errors"], `${label}: ${name} envelope`)
        assert.strictEqual(r.body.errors[0].code, status === 403 ? "Forbidden" : "Not Found", `${label}: ${name} code`)
      }
    }
  })

const every = (status: number): Expect =>
  Object.fromEntries(["server", "modules", "logs", ...ALL_MODULES].map((k) => [k, status]))

for (const db of dbKinds) {
  layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 60_000 })(`permissions (${db})`, (it) => {
    describe("GET …/servers lists exactly the servers the user may manage with that bot", () => {
      const cases: ReadonlyArray<readonly [string, string, string, ReadonlyArray<string>]> = [
        // ALICE: owner of S1, MANAGE_GUILD in S2, plain member of S3, not in S4.
        ["alice/bot1", ALICE_ID, BOT1_ID, [S1_ID, S2_ID]],
        ["alice/bot2", ALICE_ID, BOT2_ID, [S1_ID]],
        // BOB: plain member of S1, ADMINISTRATOR of S3, owner of S4 (bot 2 only).
        ["bob/bot1", BOB_ID, BOT1_ID, [S3_ID]],
        ["bob/bot2", BOB_ID, BOT2_ID, [S3_ID, S4_ID]],
        // CAROL: owner of S2 (bot 1 only) and S3, MANAGE_GUILD|MANAGE_WEBHOOKS in S4.
        ["carol/bot1", CAROL_ID, BOT1_ID, [S2_ID, S3_ID]],
        ["carol/bot2", CAROL_ID, BOT2_ID, [S3_ID, S4_ID]]
      ]
      for (const [label, user, bot, servers] of cases) {
        it.effect(label, () =>
          Effect.gen(function*() {
            const r = yield* get(user, `/bots/${bot}/servers`)
            assert.strictEqual(r.status, 200, JSON.stringify(r.body))
            assert.deepStrictEqual(r.body.servers.map((s: { id: string }) => s.id).sort(), [...servers].sort())
            for (const s of r.body.servers) assert.deepStrictEqual(Object.keys(s).sort(), ["icon", "id", "name"])
          }))
      }
      it.effect("an unknown bot → 404", () =>
        Effect.gen(function*() {
          const r = yield* get(ALICE_ID, `/bots/${UNKNOWN_BOT}/servers`)
          assert.strictEqual(r.status, 404, JSON.stringify(r.body))
          assert.strictEqual(r.body.errors[0].code, "Not Found")
        }))
    })

    describe("the route matrix", () => {
      it.effect("owner: every route 200 (ALICE in S1, CAROL in S2 with bot 1, BOB in S4 with bot 2)", () =>
        Effect.gen(function*() {
          yield* expectAll(ALICE_ID, BOT1_ID, S1_ID, every(200), "alice owner S1")
          yield* expectAll(CAROL_ID, BOT1_ID, S2_ID, every(200), "carol owner S2")
          yield* expectAll(BOB_ID, BOT2_ID, S4_ID, every(200), "bob owner S4")
        }))

      it.effect("administrator: every route 200 (BOB in S3)", () =>
        Effect.gen(function*() {
          yield* expectAll(BOB_ID, BOT1_ID, S3_ID, every(200), "bob admin S3 bot1")
          yield* expectAll(BOB_ID, BOT2_ID, S3_ID, every(200), "bob admin S3 bot2")
        }))

      it.effect("MANAGE_GUILD only (ALICE in S2): server, modules, forms 200; feeds and logs 403", () =>
        Effect.gen(function*() {
          yield* expectAll(ALICE_ID, BOT1_ID, S2_ID, {
            server: 200,
            modules: 200,
            forms: 200,
            logs: 403,
            ...Object.fromEntries(FEED_MODULES.map((m) => [m, 403]))
          }, "alice manage_guild S2")
        }))

      it.effect("MANAGE_GUILD|MANAGE_WEBHOOKS|VIEW_AUDIT_LOG without ADMINISTRATOR (CAROL in S4): every route 200", () =>
        expectAll(CAROL_ID, BOT2_ID, S4_ID, every(200), "carol webmaster S4"))

      it.effect("plain member: every route 403 (BOB in S1, ALICE in S3)", () =>
        Effect.gen(function*() {
          yield* expectAll(BOB_ID, BOT1_ID, S1_ID, every(403), "bob member S1")
          yield* expectAll(ALICE_ID, BOT2_ID, S3_ID, every(403), "alice member S3")
        }))

      it.effect("not a member: every route 403 (CAROL in S1, BOB in S2, ALICE in S4)", () =>
        Effect.gen(function*() {
          yield* expectAll(CAROL_ID, BOT1_ID, S1_ID, every(403), "carol outsider S1")
          yield* expectAll(BOB_ID, BOT1_ID, S2_ID, every(403), "bob outsider S2")
          yield* expectAll(ALICE_ID, BOT2_ID, S4_ID, every(403), "alice outsider S4")
        }))

      it.effect("bot absent from the server: every route 404, even for its owner (bot 1 in S4, bot 2 in S2)", () =>
        Effect.gen(function*() {
          yield* expectAll(BOB_ID, BOT1_ID, S4_ID, every(404), "bot1 absent S4")
          yield* expectAll(CAROL_ID, BOT2_ID, S2_ID, every(404), "bot2 absent S2")
        }))

      it.effect("a server that does not exist: every route 404", () =>
        expectAll(ALICE_ID, BOT1_ID, UNKNOWN_SERVER, every(404), "unknown server"))

      it.effect("an unknown bot: every route 404, even on the user's own server", () =>
        expectAll(ALICE_ID, UNKNOWN_BOT, S1_ID, every(404), "unknown bot"))

      it.effect("unsigned → 401 on every route", () =>
        Effect.gen(function*() {
          const routes = routesOf(BOT1_ID, S1_ID)
          for (const path of [`/bots/${BOT1_ID}/servers`, ...Object.values(routes)]) {
            const res = yield* raw({}, `/api/v1${path}`)
            assert.strictEqual(res.status, 401, path)
            assert.strictEqual((yield* json(res)).errors[0].code, "Unauthorized")
          }
        }))
    })

    describe("modules: available per module per user", () => {
      const availability = (userId: string, bot: string, server: string) =>
        Effect.gen(function*() {
          const r = yield* get(userId, `/bots/${bot}/servers/${server}/modules`)
          assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          assert.deepStrictEqual(r.body.modules.map((m: { name: string }) => m.name), [...ALL_MODULES])
          for (const m of r.body.modules) {
            assert.deepStrictEqual(Object.keys(m).sort(), ["available", "full_name", "image", "name", "short_description"])
            assert.isString(m.full_name)
            assert.isString(m.image)
          }
          return Object.fromEntries(r.body.modules.map((m: { name: string; available: boolean }) => [m.name, m.available]))
        })
      const all = (v: boolean) => Object.fromEntries(ALL_MODULES.map((m) => [m, v]))

      it.effect("owner and administrator: all available", () =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* availability(ALICE_ID, BOT1_ID, S1_ID), all(true))
          assert.deepStrictEqual(yield* availability(CAROL_ID, BOT1_ID, S2_ID), all(true))
          assert.deepStrictEqual(yield* availability(BOB_ID, BOT2_ID, S3_ID), all(true))
        }))
      it.effect("MANAGE_GUILD only: forms only", () =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* availability(ALICE_ID, BOT1_ID, S2_ID), { ...all(false), forms: true })
        }))
      it.effect("MANAGE_GUILD and MANAGE_WEBHOOKS: all available", () =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* availability(CAROL_ID, BOT2_ID, S4_ID), all(true))
        }))

      it.effect("every request to a module whose available is false → 403 (ALICE's feed modules in S2)", () =>
        Effect.gen(function*() {
          const token = yield* tokenOf(ALICE_ID)
          const base = `/api/v1/bots/${BOT1_ID}/servers/${S2_ID}/modules`
          const body = JSON.stringify({ feed_identifier: "x", webhook_channel: channelId(2, 2) })
          const patch = JSON.stringify({ webhook_options: {} })
          const requests: Array<readonly [string, string, string | undefined]> = FEED_MODULES.flatMap((m) => [
            ["GET", `${base}/${m}/feeds`, undefined] as const,
            ["POST", `${base}/${m}/feeds`, body] as const,
            ["PATCH", `${base}/${m}/feeds/1`, patch] as const,
            ["DELETE", `${base}/${m}/feeds/1`, undefined] as const
          ])
          for (const m of ["photo", "streaming", "microblog", "video"]) {
            requests.push(["GET", `${base}/${m}/getUserId/someone`, undefined])
          }
          requests.push(["GET", `${base}/streaming/getGameId/Minecraft`, undefined])
          for (const [method, path, payload] of requests) {
            const res = yield* raw({
              token,
              method,
              ...(payload === undefined ? {} : { body: payload, headers: { "content-type": "application/json" } })
            }, path)
            const b = yield* json(res)
            assert.strictEqual(res.status, 403, `${method} ${path}: ${JSON.stringify(b)}`)
            assert.strictEqual(b.errors[0].code, "Forbidden")
          }
        }))

      it.effect("forms routes of a plain member → 403 on each of the eight", () =>
        Effect.gen(function*() {
          const token = yield* tokenOf(BOB_ID)
          const base = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules/forms`
          const form = JSON.stringify({ title: "x" })
          const requests: ReadonlyArray<readonly [string, string, string | undefined]> = [
            ["GET", `${base}/taskboardOptions`, undefined],
            ["GET", `${base}/taskboardBoards`, undefined],
            ["GET", base, undefined],
            ["GET", `${base}/new`, undefined],
            ["GET", `${base}/1`, undefined],
            ["POST", base, form],
            ["PATCH", `${base}/1`, form],
            ["DELETE", `${base}/1`, undefined]
          ]
          for (const [method, path, payload] of requests) {
            const res = yield* raw({
              token,
              method,
              ...(payload === undefined ? {} : { body: payload, headers: { "content-type": "application/json" } })
            }, path)
            assert.strictEqual(res.status, 403, `${method} ${path}: ${JSON.stringify(yield* json(res))}`)
          }
        }))
    })

    describe("GET …/server: channels and roles", () => {
      it.effect("channel types are GuildText/GuildNews/GuildVoice, categories are not listed; colours #rrggbb lower case", () =>
        Effect.gen(function*() {
          const r = yield* get(ALICE_ID, `/bots/${BOT1_ID}/servers/${S1_ID}`)
          assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          assert.strictEqual(r.body.id, S1_ID)
          assert.strictEqual(r.body.name, "Sandbox One")
          assert.deepStrictEqual(Object.keys(r.body).sort(), ["channels", "icon", "id", "name", "roles"])
          const channels = Object.fromEntries(r.body.channels.map((c: { id: string; type: string }) => [c.id, c.type]))
          assert.deepStrictEqual(channels, {
            [channelId(1, 2)]: "GuildText",
            [channelId(1, 3)]: "GuildText",
            [channelId(1, 4)]: "GuildNews",
            [channelId(1, 5)]: "GuildVoice"
          })
          for (const c of r.body.channels) assert.deepStrictEqual(Object.keys(c).sort(), ["id", "name", "type"])
          const roles = Object.fromEntries(r.body.roles.map((x: { id: string; color_hex: string }) => [x.id, x.color_hex]))
          assert.strictEqual(roles[roleId(1, 1)], "#e74c3c")
          assert.strictEqual(roles[roleId(1, 2)], "#3498db")
          assert.strictEqual(roles[S1_ID], "#000000")
          for (const role of r.body.roles) {
            assert.deepStrictEqual(Object.keys(role).sort(), ["color_hex", "id", "name"])
            assert.match(role.color_hex, /^#[0-9a-f]{6}$/)
          }
        }))
      it.effect("S4 (bot 2): a purple role is lower case too", () =>
        Effect.gen(function*() {
          const r = yield* get(CAROL_ID, `/bots/${BOT2_ID}/servers/${S4_ID}`)
          assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          const webmasters = r.body.roles.find((x: { id: string }) => x.id === roleId(4, 1))
          assert.strictEqual(webmasters.color_hex, "#9b59b6")
          const channels = r.body.channels.map((c: { id: string }) => c.id)
          assert.notInclude(channels, channelId(4, 1))
        }))
    })
  })
}
