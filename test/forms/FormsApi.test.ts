/**
 * The eight forms routes through the HttpApi pipeline (request decoding, handlers, response and
 * error encoding), with a typed in-memory client: memory repo and audit, fake directory and board.
 * Raw statuses and envelopes belong to the full in-process server harness (test/utils/TestApp.ts).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Ref } from "effect"
import { HttpClientRequest, HttpServer } from "effect/http"
import { HttpApi, HttpApiMiddleware, HttpApiTest } from "effect/http-api"
import { BadRequest, Forbidden, NotFound, Unauthorized } from "../../src/domain/infra/Errors.ts"
import { BotId, FormId, ServerId, UserId } from "../../src/domain/infra/Ids.ts"
import { FormsGroup } from "../../src/http/contract/Api.ts"
import { SchemaErrorsLive } from "../../src/http/edge/SchemaErrorsLive.ts"
import { IdempotencyLive } from "../../src/http/edge/IdempotencyLive.ts"
import { FormsHandlers } from "../../src/http/forms/FormsHandlers.ts"
import { Authorization, CurrentPrincipal, SchemaErrors } from "../../src/http/contract/Middleware.ts"
import { Directory } from "../../src/services/platform/Directory.ts"
import { Forms, FormsSettings } from "../../src/services/forms/Forms.ts"
import { AuditLogMemory, AuditLogMemoryStore } from "../layers/AuditLogMemory.ts"
import { FormsRepoMemory } from "../layers/FormsRepoMemory.ts"
import { IdempotencyStoreMemory } from "../layers/IdempotencyStoreMemory.ts"
import { stub } from "../layers/Stub.ts"
import { access, BOARDS, BOT, OTHER_SERVER, SERVER, TaskBoardFake, TEXT, UNPAIRED_SERVER, VOICE } from "./FormFixtures.ts"

const MANAGER = "manager-token"
const MEMBER = "member-token" // signed in, but without MANAGE_GUILD

const principals: Record<string, string> = { [MANAGER]: "500000000000000001", [MEMBER]: "500000000000000002" }

const authenticate = <A, E, R>(httpEffect: Effect.Effect<A, E, R>, credential: Redacted.Redacted<string>) => {
  const userId = principals[Redacted.value(credential)]
  return userId === undefined
    ? Effect.fail(Unauthorized.of())
    : Effect.provideService(httpEffect, CurrentPrincipal, {
      userId: UserId.make(userId),
      familyId: "family",
      accessExpiresAt: new Date(Date.now() + 3_600_000)
    })
}

const AuthorizationFake = Layer.succeed(Authorization, Authorization.of({
  bearer: (httpEffect, { credential }) => authenticate(httpEffect, credential),
  accessToken: (httpEffect, { credential }) => authenticate(httpEffect, credential)
}))

/** Known bot and servers; the member may not manage them (403). */
const DirectoryFake = stub(Directory, {
  access: (principal, botId, serverId) => {
    if (botId !== BOT) return Effect.fail(NotFound.of("No such bot."))
    if (![SERVER, OTHER_SERVER, UNPAIRED_SERVER].includes(serverId)) return Effect.fail(NotFound.of("No such server."))
    if (principal.userId !== principals[MANAGER]) return Effect.fail(Forbidden.of("You may not manage this server's forms."))
    return Effect.succeed(access(serverId))
  }
})

const HandlersLayer = FormsHandlers.pipe(
  Layer.provide(Forms.layer),
  Layer.provide(Layer.mergeAll(FormsRepoMemory, TaskBoardFake, DirectoryFake, FormsSettings.layerDefaults)),
  Layer.provideMerge(AuditLogMemory),
  Layer.provideMerge(Layer.mergeAll(AuthorizationFake, SchemaErrorsLive, IdempotencyLive.pipe(Layer.provide(IdempotencyStoreMemory))))
)

const as = (token: string | undefined) =>
  HttpApiMiddleware.layerClient(Authorization, ({ next, request }) =>
    next(token === undefined ? request : HttpClientRequest.bearerToken(request, token)))

/** The gateway Api cut down to the forms group, with the same API-wide middleware and parse options. */
class FormsApi extends HttpApi.make("gateway")
  .add(FormsGroup)
  .middleware(SchemaErrors)
  .annotate(HttpApi.PayloadParseOptions, { errors: "all" })
{}

const makeClient = HttpApiTest.groups(FormsApi, ["forms"])
const on = (serverId: string, botId = BOT) => ({ appClientId: BotId.make(botId), serverId: ServerId.make(serverId) })
const OPTIONS = ["Description", "Title", "List", "Label", "Attachment", "Private"]

layer(Layer.mergeAll(HandlersLayer, HttpServer.layerServices))("forms routes", (it) => {
  it.effect("the eight routes for a manager", () =>
    Effect.gen(function*() {
      const client = yield* makeClient
      const forms = client.forms
      assert.deepStrictEqual(yield* forms.taskboardOptions({ params: on(SERVER) }), { options: OPTIONS })
      assert.deepStrictEqual((yield* forms.taskboardBoards({ params: on(SERVER) })).taskboard_boards.map((b) => b.id), ["0", ...BOARDS.map((b) => b.id)])
      assert.deepStrictEqual((yield* forms.taskboardBoards({ params: on(UNPAIRED_SERVER) })).taskboard_boards.map((b) => b.id), ["-1"])
      const template = yield* forms.template({ params: on(SERVER) })
      assert.strictEqual(template.workflow_id, null)
      assert.strictEqual(template.title, "TITLE_NOT_FOUND")
      assert.deepStrictEqual(template.taskboard_options, OPTIONS)

      const created = yield* forms.create({
        params: on(SERVER),
        payload: { title: "Applications", channel_id: TEXT, steps: [{ type: "message", string: "Why?" }, { type: "message", string: "How?" }] }
      })
      const id = created.workflow_id!
      assert.deepStrictEqual(created.steps.map((s) => [s.step_id, s.char_limit]), [[1, [1, 2000]], [2, [1, 2000]]])
      assert.deepStrictEqual(created.taskboard_options, OPTIONS)
      assert.deepStrictEqual(yield* forms.get({ params: { ...on(SERVER), formId: FormId.make(id) } }), created)
      assert.deepStrictEqual((yield* forms.list({ params: on(SERVER) })).forms.map((f) => f.workflow_id), [id])

      const updated = yield* forms.update({
        params: { ...on(SERVER), formId: FormId.make(id) },
        payload: { workflow_id: id, title: "Applications 2", steps: [{ type: "message", string: "How?" }] }
      })
      assert.strictEqual(updated.title, "Applications 2")
      assert.strictEqual(updated.channel_id, null)
      assert.deepStrictEqual(updated.steps.map((s) => [s.step_id, s.string]), [[1, "How?"]])

      assert.deepStrictEqual(yield* forms.delete({ params: { ...on(SERVER), formId: FormId.make(id) } }), { success: true })
      const gone = yield* Effect.flip(forms.get({ params: { ...on(SERVER), formId: FormId.make(id) } }))
      assert.strictEqual(gone._tag, "NotFound")

      const store = yield* AuditLogMemoryStore
      const entries = yield* Ref.get(store.entries)
      assert.deepStrictEqual(
        entries.filter((e) => e.serverId === SERVER).map((e) => e.eventType),
        ["PUSH", "GET", "PATCH", "DELETE"]
      )
    }).pipe(Effect.provide(as(MANAGER))))

  it.effect("400 lists every server-rule problem with its path", () =>
    Effect.gen(function*() {
      const forms = (yield* makeClient).forms
      // (Schema rules: the typed client refuses to send such a body; FormValidation.test.ts covers their paths.)
      const semantic = yield* Effect.flip(forms.create({
        params: on(SERVER),
        payload: { title: "t", channel_id: VOICE, role_mentions: ["1"] }
      }))
      assert.instanceOf(semantic, BadRequest)
      assert.deepStrictEqual((semantic as BadRequest).problems.map((p) => p.additionalProperties?.["path"]), ["channel_id", "role_mentions[0]"])

      const { workflow_id } = yield* forms.create({ params: on(SERVER), payload: { title: "t" } })
      const mismatch = yield* Effect.flip(forms.update({ params: { ...on(SERVER), formId: FormId.make(workflow_id!) }, payload: { title: "t", workflow_id: 424242 } }))
      assert.deepStrictEqual((mismatch as BadRequest).problems.map((p) => p.additionalProperties?.["path"]), ["workflow_id"])
    }).pipe(Effect.provide(as(MANAGER))))

  it.effect("cross-server and cross-bot: 404, never the other server's form", () =>
    Effect.gen(function*() {
      const forms = (yield* makeClient).forms
      const { workflow_id } = yield* forms.create({ params: on(SERVER), payload: { title: "Mine" } })
      const id = workflow_id!
      for (const params of [{ ...on(OTHER_SERVER), formId: FormId.make(id) }, { ...on(SERVER, "900000000000000002"), formId: FormId.make(id) }]) {
        assert.strictEqual((yield* Effect.flip(forms.get({ params })))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(forms.update({ params, payload: { title: "x" } })))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(forms.delete({ params })))._tag, "NotFound")
      }
      assert.notInclude((yield* forms.list({ params: on(OTHER_SERVER) })).forms.map((f) => f.workflow_id), id)
      assert.strictEqual((yield* Effect.flip(forms.list({ params: on("800000000000000099") })))._tag, "NotFound")
      assert.strictEqual((yield* forms.get({ params: { ...on(SERVER), formId: FormId.make(id) } })).title, "Mine")
    }).pipe(Effect.provide(as(MANAGER))))

  it.effect("a user without MANAGE_GUILD: 403 on every route", () =>
    Effect.gen(function*() {
      const forms = (yield* makeClient).forms
      const p = on(SERVER)
      const f = { ...p, formId: FormId.make(1) }
      const tags = yield* Effect.all([
        Effect.flip(forms.taskboardOptions({ params: p })),
        Effect.flip(forms.taskboardBoards({ params: p })),
        Effect.flip(forms.list({ params: p })),
        Effect.flip(forms.template({ params: p })),
        Effect.flip(forms.get({ params: f })),
        Effect.flip(forms.create({ params: p, payload: { title: "t" } })),
        Effect.flip(forms.update({ params: f, payload: { title: "t" } })),
        Effect.flip(forms.delete({ params: f }))
      ])
      assert.deepStrictEqual(tags.map((e) => e._tag), Array.from({ length: 8 }, () => "Forbidden"))
    }).pipe(Effect.provide(as(MEMBER))))

  it.effect("unsigned: 401", () =>
    Effect.gen(function*() {
      const forms = (yield* makeClient).forms
      assert.strictEqual((yield* Effect.flip(forms.list({ params: on(SERVER) })))._tag, "Unauthorized")
      assert.strictEqual((yield* Effect.flip(forms.create({ params: on(SERVER), payload: { title: "t" } })))._tag, "Unauthorized")
    }).pipe(Effect.provide(as(undefined))))
})
