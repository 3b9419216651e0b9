/**
 * Every route of the contract answers its documented success shape: each body is decoded, strictly
 * (no unknown keys), with the domain schema of src/domain. Runs on the memory capabilities and on
 * every database kind of this run.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { AuditLogPage } from "../../src/domain/audit/AuditLog.ts"
import { FeedModules, GameLookup, UserLookup } from "../../src/domain/feeds/Feed.ts"
import { Form, FormsResponse, TaskboardBoardsResponse, TaskboardOptionsResponse } from "../../src/domain/forms/Form.ts"
import { BotsResponse, ModulesResponse, Server, ServersResponse, User } from "../../src/domain/platform/Platform.ts"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { Success, TokenCheck, TokenResponse } from "../../src/domain/auth/Token.ts"
import { ALICE_ID, BOT1_ID, BOT2_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { GAMES, PHOTO_USERS, STREAMING_USERS, MICROBLOG_USERS, VIDEO_CHANNELS } from "../../src/sandbox/sources/Seed.ts"
import { CLIENT_REDIRECT, json, raw, signIn, TestApp, UA } from "../utils/TestApp.ts"
import { capabilitySets, expectJson, FEED_MODULES, feedIdentifier, formBody, OpenApiDoc, S1_TEXT, text } from "./ContractFixtures.ts"

const S1 = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}`
const modules = `${S1}/modules`
const post = (token: string, body: unknown) => ({
  method: "POST",
  token,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body)
})
const patch = (token: string, body: unknown) => ({ ...post(token, body), method: "PATCH" })
const del = (token: string) => ({ method: "DELETE", token })

const HealthOk = Schema.Struct({ status: Schema.Literal("ok") })
const Ready = Schema.Struct({ status: Schema.Literal("ready") })

/** Lookups: the input name and the external id the sandbox knows it by. */
const LOOKUPS = {
  photo: { name: PHOTO_USERS[0]!.username, id: PHOTO_USERS[0]!.id },
  streaming: { name: STREAMING_USERS[0]!.login, id: STREAMING_USERS[0]!.id },
  microblog: { name: MICROBLOG_USERS[0]!.username, id: MICROBLOG_USERS[0]!.id },
  video: { name: VIDEO_CHANNELS[0]!.customUrl!, id: VIDEO_CHANNELS[0]!.id }
} as const

for (const set of capabilitySets) {
  layer(TestApp.layer({ capabilities: set.capabilities }), { excludeTestServices: true, timeout: 60_000 })(
    `contract routes (${set.name})`,
    (it) => {
      it.effect("token routes: login 307, callback 302, token, check, refresh, revoke", () =>
        Effect.gen(function*() {
          const login = yield* raw({}, `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}&state=s1`)
          assert.strictEqual(login.status, 307, yield* text(login))
          const cookie = login.headers.get("set-cookie")!.split(";")[0]!
          const authorize = yield* Effect.promise(() =>
            fetch(`${login.headers.get("location")!}&login_hint=${ALICE_ID}`, { redirect: "manual" })
          )
          const callback = yield* Effect.promise(() =>
            fetch(authorize.headers.get("location")!, { redirect: "manual", headers: { cookie, "user-agent": UA } })
          )
          assert.strictEqual(callback.status, 302)
          const location = new URL(callback.headers.get("location")!)
          assert.strictEqual(`${location.origin}${location.pathname}`, CLIENT_REDIRECT)
          assert.strictEqual(location.searchParams.get("state"), "s1")
          const code = location.searchParams.get("code")!
          assert.isString(code)

          const token = yield* expectJson(
            yield* raw({ method: "POST", headers: { authorization: code } }, "/auth/idp/token"),
            200,
            TokenResponse
          )
          assert.strictEqual(token.token_type, "Bearer")
          assert.strictEqual(token.scope, "all")

          const check = yield* expectJson(
            yield* raw({ method: "POST", headers: { authorization: token.access_token } }, "/auth/idp/token/check"),
            200,
            TokenCheck
          )
          assert.isTrue(check.is_valid)
          assert.isAbove(check.expires_in, 0)

          const refreshed = yield* expectJson(
            yield* raw({ method: "POST", headers: { "x-refresh-token": token.refresh_token } }, "/auth/idp/token/refresh"),
            200,
            TokenResponse
          )
          assert.notStrictEqual(refreshed.access_token, token.access_token)

          const revoked = yield* expectJson(
            yield* raw({ method: "POST", headers: { authorization: refreshed.access_token } }, "/auth/idp/token/revoke"),
            200,
            Success
          )
          assert.deepStrictEqual(revoked, { success: true })
        }))

      it.effect("general: user, bots, servers, server, modules", () =>
        Effect.gen(function*() {
          const { access_token: t } = yield* signIn(ALICE_ID)
          const user = yield* expectJson(yield* raw({ token: t }, "/api/v1/user"), 200, User)
          assert.strictEqual(user.id, ALICE_ID)

          const bots = yield* expectJson(yield* raw({ token: t }, "/api/v1/bots"), 200, BotsResponse)
          assert.includeMembers(bots.bots.map((b) => b.id), [BOT1_ID, BOT2_ID])

          const servers = yield* expectJson(yield* raw({ token: t }, `/api/v1/bots/${BOT1_ID}/servers`), 200, ServersResponse)
          assert.include(servers.servers.map((s) => s.id), S1_ID)

          const server = yield* expectJson(yield* raw({ token: t }, S1), 200, Server)
          assert.strictEqual(server.id, S1_ID)
          assert.include(server.channels.map((c) => c.id), S1_TEXT)
          assert.isAbove(server.roles.length, 0)
          for (const role of server.roles) assert.match(role.color_hex, /^#[0-9a-f]{6}$/)

          const mods = yield* expectJson(yield* raw({ token: t }, modules), 200, ModulesResponse)
          assert.deepStrictEqual(
            mods.modules.map((m) => m.name).sort(),
            ["forms", "photo", "forum", "rss", "streaming", "microblog", "video"].sort()
          )
          assert.isTrue(mods.modules.every((m) => m.available), "the owner may configure every module")
        }))

      it.effect("forms: options, boards, template, create, list, get, update, delete", () =>
        Effect.gen(function*() {
          const { access_token: t } = yield* signIn(ALICE_ID)
          const forms = `${modules}/forms`
          const options = yield* expectJson(yield* raw({ token: t }, `${forms}/taskboardOptions`), 200, TaskboardOptionsResponse)
          assert.deepStrictEqual(options.options, ["Description", "Title", "List", "Label", "Attachment", "Private"])
          const boards = yield* expectJson(yield* raw({ token: t }, `${forms}/taskboardBoards`), 200, TaskboardBoardsResponse)
          assert.strictEqual(boards.taskboard_boards[0]!.id, "0", "S1 has a paired team: the disable board comes first")

          const template = yield* expectJson(yield* raw({ token: t }, `${forms}/new`), 200, Form)
          assert.strictEqual(template.workflow_id, null)
          assert.strictEqual(template.title, "TITLE_NOT_FOUND")

          const created = yield* expectJson(yield* raw(post(t, formBody("Routes form")), forms), 200, Form)
          const id = created.workflow_id!
          assert.isAbove(id, 0)
          assert.deepStrictEqual(created.steps.map((s) => s.step_id), [1, 2])

          const list = yield* expectJson(yield* raw({ token: t }, forms), 200, FormsResponse)
          assert.include(list.forms.map((f) => f.workflow_id), id)

          const got = yield* expectJson(yield* raw({ token: t }, `${forms}/${id}`), 200, Form)
          assert.strictEqual(got.title, "Routes form")

          const updated = yield* expectJson(
            yield* raw(patch(t, { ...formBody("Routes form, renamed"), workflow_live: false }), `${forms}/${id}`),
            200,
            Form
          )
          assert.strictEqual(updated.workflow_id, id)
          assert.strictEqual(updated.title, "Routes form, renamed")
          assert.isFalse(updated.workflow_live)

          const deleted = yield* expectJson(yield* raw(del(t), `${forms}/${id}`), 200, Success)
          assert.deepStrictEqual(deleted, { success: true })
          const gone = yield* raw({ token: t }, `${forms}/${id}`)
          assert.strictEqual(gone.status, 404)
        }))

      for (const m of FEED_MODULES) {
        it.effect(`${m} feeds: create, list, update, delete`, () =>
          Effect.gen(function*() {
            const app = yield* TestApp
            const { access_token: t } = yield* signIn(ALICE_ID)
            const s = FeedModules[m as FeedModuleName]
            const feeds = `${modules}/${m}/feeds`
            const created = yield* expectJson(
              yield* raw(post(t, { feed_identifier: feedIdentifier(m, app.url), webhook_channel: S1_TEXT }), feeds),
              200,
              s.feed
            )
            assert.match(created.id, /^[1-9][0-9]*$/)
            assert.strictEqual(created.webhook_info.channel_id, S1_TEXT)
            assert.strictEqual(created.webhook_options["webhook-name"], null)

            const list = yield* expectJson(yield* raw({ token: t }, feeds), 200, s.feeds)
            assert.include(list.feeds.map((f) => f.id), created.id)

            const updated = yield* expectJson(
              yield* raw(patch(t, { webhook_options: { "webhook-name": "Routes" } }), `${feeds}/${created.id}`),
              200,
              s.feed
            )
            assert.strictEqual(updated.id, created.id)
            assert.strictEqual(updated.webhook_options["webhook-name"], "Routes")

            const deleted = yield* expectJson(yield* raw(del(t), `${feeds}/${created.id}`), 200, Success)
            assert.deepStrictEqual(deleted, { success: true })
            const after = yield* expectJson(yield* raw({ token: t }, feeds), 200, s.feeds)
            assert.notInclude(after.feeds.map((f) => f.id), created.id)
          }))
      }

      it.effect("lookups: getUserId for photo, streaming, microblog, video; getGameId for streaming", () =>
        Effect.gen(function*() {
          const { access_token: t } = yield* signIn(ALICE_ID)
          for (const [m, { id, name }] of Object.entries(LOOKUPS)) {
            const found = yield* expectJson(
              yield* raw({ token: t }, `${modules}/${m}/getUserId/${encodeURIComponent(name)}`),
              200,
              UserLookup
            )
            assert.strictEqual(found.userId, id, m)
          }
          const game = GAMES[1]!
          const found = yield* expectJson(
            yield* raw({ token: t }, `${modules}/streaming/getGameId/${encodeURIComponent(game.name)}`),
            200,
            GameLookup
          )
          assert.deepStrictEqual(found, { gameId: game.id, gameName: game.name })
        }))

      it.effect("logs: the audited writes, newest first, paginated", () =>
        Effect.gen(function*() {
          const { access_token: t } = yield* signIn(ALICE_ID)
          const created = yield* raw(post(t, formBody("Audited form")), `${modules}/forms`)
          const form = yield* json(created)
          assert.strictEqual(created.status, 200, JSON.stringify(form))
          const page = yield* expectJson(
            yield* raw({ token: t }, `${S1}/logs?module=forms&page_size=1`),
            200,
            AuditLogPage
          )
          assert.strictEqual(page.page, 1)
          assert.strictEqual(page.page_size, 1)
          assert.strictEqual(page.logs.length, 1)
          assert.isAtLeast(page.page_max, 1)
          const [entry] = page.logs
          assert.strictEqual(entry!.event_type, "PUSH")
          assert.strictEqual(entry!.item_identifier, form.workflow_id)
          assert.strictEqual(entry!.user_id, ALICE_ID)
        }))

      it.effect("ops: /healthz, /readyz, /openapi.json, /docs", () =>
        Effect.gen(function*() {
          yield* expectJson(yield* raw({}, "/healthz"), 200, HealthOk)
          yield* expectJson(yield* raw({}, "/readyz"), 200, Ready)
          const doc = yield* expectJson(yield* raw({}, "/openapi.json"), 200, OpenApiDoc, { strict: false })
          assert.match(doc.openapi, /^3\./)
          assert.property(doc.paths, "/api/v1/user")
          const docs = yield* raw({}, "/docs")
          const html = yield* text(docs)
          assert.strictEqual(docs.status, 200)
          assert.match(docs.headers.get("content-type") ?? "", /^text\/html/)
          assert.match(html, /<html/i)
        }))
    }
  )
}
