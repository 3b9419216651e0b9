/**
 * The forms routes' writes over HTTP against the sandbox chat platform and task board, on a real
 * database: the lifecycle and the audit entries each action leaves, scoping (other server, other
 * bot), permissions, path ids and the per-server limit. Reads: FormsHttpReads.test.ts; validation:
 * FormsHttpValidation.test.ts.
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOB_ID, BOT1_ID, BOT2_ID, CAROL_ID, channelId, roleId, S1_ID, S2_ID, SEED } from "../../src/sandbox/Seed.ts"
import { assertBadRequest, call, formsOverHttp, formsPath, OPTIONS, paths, REAL_BOARDS, step } from "./FormsHttpFixtures.ts"

const FLAGS = [
  "workflow_live",
  "taskboard_integration",
  "anonymize",
  "disable_downvote",
  "disable_upvote",
  "extended_embed",
  "highlight_attachments",
  "anonymize_rejection",
  "disable_mentions",
  "disable_priorities"
] as const
const ALICE = SEED.users.find((u) => u.id === ALICE_ID)!

formsOverHttp("writes", (it) => {
  describe("lifecycle", () => {
    it.effect("create → get → list → update (steps reordered, added, removed) → delete → 404; audited", () =>
      Effect.gen(function*() {
        const body = {
          title: "Staff application",
          color_hex: "#ABCDEF",
          channel_id: channelId(1, 2),
          fwd_channel_ids: [channelId(1, 3), channelId(1, 4)],
          role_mentions: [roleId(1, 1)],
          public_mentions: [roleId(1, 2)],
          workflow_live: true,
          anonymize: true,
          taskboard_integration: true,
          taskboard_board: REAL_BOARDS[0]!.id,
          // Read-only fields are ignored.
          workflow_id: 999_999,
          timestamp_created: "2000-01-01T00:00:00Z",
          steps: [
            step("Your name?", { taskboard_mapping: "Title", alias: "Name", char_limit: [2, 64] }),
            { type: "reaction", string: "Pick a team", answers_validation: ["red", "blue"], step_id: 42 },
            step("Why?", { answers_validation: ["because"] })
          ]
        }
        const created = yield* call("POST", formsPath(), body)
        assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        const form = created.body
        const id = form.workflow_id
        assert.isTrue(Number.isInteger(id) && id > 0)
        assert.notStrictEqual(id, 999_999)
        assert.notStrictEqual(form.timestamp_created, "2000-01-01T00:00:00Z")
        assert.isFalse(Number.isNaN(Date.parse(form.timestamp_created)))
        assert.strictEqual(form.title, "Staff application")
        assert.strictEqual(form.channel_id, channelId(1, 2))
        assert.deepStrictEqual(form.fwd_channel_ids, [channelId(1, 3), channelId(1, 4)])
        assert.deepStrictEqual(form.role_mentions, [roleId(1, 1)])
        assert.deepStrictEqual(form.public_mentions, [roleId(1, 2)])
        assert.strictEqual(form.taskboard_board, REAL_BOARDS[0]!.id)
        assert.isTrue(form.workflow_live && form.anonymize && form.taskboard_integration)
        assert.isFalse(form.disable_upvote)
        assert.deepStrictEqual(form.taskboard_options, OPTIONS)
        assert.deepStrictEqual(form.taskboard_boards.map((b: { id: string }) => b.id), ["0", ...REAL_BOARDS.map((b) => b.id)])
        // alias and taskboard_mapping are Strings: "" when unset, never null (decisions.md "Forms").
        assert.deepStrictEqual(form.steps, [
          { step_id: 1, type: "message", string: "Your name?", answers_validation: [], char_limit: [2, 64], alias: "Name", taskboard_mapping: "Title" },
          { step_id: 2, type: "reaction", string: "Pick a team", answers_validation: ["red", "blue"], char_limit: [1, 2000], alias: "", taskboard_mapping: "" },
          { step_id: 3, type: "message", string: "Why?", answers_validation: ["because"], char_limit: [1, 2000], alias: "", taskboard_mapping: "" }
        ])
        // Upper-case colour: stored and returned lower case.
        assert.strictEqual(form.color_hex, "#abcdef")

        const got = yield* call("GET", `${formsPath()}/${id}`)
        assert.strictEqual(got.status, 200, JSON.stringify(got.body))
        assert.deepStrictEqual(got.body, form)

        const list = yield* call("GET", formsPath())
        assert.strictEqual(list.status, 200)
        const summary = list.body.forms.find((f: { workflow_id: number }) => f.workflow_id === id)
        assert.deepStrictEqual(summary, {
          workflow_id: id,
          taskboard_integration: true,
          workflow_live: true,
          title: "Staff application",
          color_hex: form.color_hex
        })

        // Reorder (3rd first), drop the 2nd, add a new one; flags omitted → false; PATCH replaces.
        const patched = yield* call("PATCH", `${formsPath()}/${id}`, {
          workflow_id: id,
          title: "Staff application v2",
          steps: [step("Why?"), step("Your name?", { taskboard_mapping: "Title" }), step("Anything else?", { step_id: 1 })]
        })
        assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
        assert.strictEqual(patched.body.workflow_id, id)
        assert.strictEqual(patched.body.timestamp_created, form.timestamp_created)
        assert.deepStrictEqual(patched.body.steps.map((s: { step_id: number; string: string }) => [s.step_id, s.string]), [
          [1, "Why?"],
          [2, "Your name?"],
          [3, "Anything else?"]
        ])
        for (const f of FLAGS) assert.strictEqual(patched.body[f], false, f)
        assert.strictEqual(patched.body.channel_id, null)
        assert.deepStrictEqual(patched.body.fwd_channel_ids, [])
        assert.strictEqual(patched.body.color_hex, "#00d084")
        assert.deepStrictEqual((yield* call("GET", `${formsPath()}/${id}`)).body, patched.body)

        const removed = yield* call("DELETE", `${formsPath()}/${id}`)
        assert.strictEqual(removed.status, 200, JSON.stringify(removed.body))
        assert.deepStrictEqual(removed.body, { success: true })
        for (const [method, b] of [["GET", undefined], ["PATCH", { title: "x" }], ["DELETE", undefined]] as const) {
          const r = yield* call(method, `${formsPath()}/${id}`, b)
          assert.strictEqual(r.status, 404, `${method} after delete: ${JSON.stringify(r.body)}`)
          assert.strictEqual(r.body.errors[0].code, "Not Found")
        }
        const after = yield* call("GET", formsPath())
        assert.isUndefined(after.body.forms.find((f: { workflow_id: number }) => f.workflow_id === id))

        // The audit log: PUSH, GET (two reads), PATCH, DELETE, newest first, for this form.
        const logs = yield* call("GET", `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/logs?module=forms&page_size=100`)
        assert.strictEqual(logs.status, 200, JSON.stringify(logs.body))
        const mine = logs.body.logs.filter((l: { item_identifier: number }) => l.item_identifier === id)
        assert.deepStrictEqual(mine.map((l: { event_type: string }) => l.event_type), ["DELETE", "GET", "PATCH", "GET", "PUSH"])
        for (const l of mine) {
          assert.strictEqual(l.module_name, "forms")
          assert.strictEqual(l.user_id, ALICE_ID)
          // The account username ("alice"), not the display name ("Alice"): decisions.md "Audit logs".
          assert.strictEqual(l.user_name, ALICE.username)
          assert.notStrictEqual(l.user_name, ALICE.global_name)
          assert.strictEqual(l.user_avatar, ALICE.avatar)
          assert.isString(l.event_string)
          assert.isFalse(Number.isNaN(Date.parse(l.timestamp)))
        }
        // Nothing is audited for the template, listings or failed reads.
        assert.strictEqual(logs.body.logs.filter((l: { item_identifier: number | null }) => l.item_identifier === null).length, 0)
      }))

    it.effect("workflow_id is unique across servers; a PATCH whose workflow_id differs from the path → 400", () =>
      Effect.gen(function*() {
        const a = yield* call("POST", formsPath(), { title: "A" })
        const b = yield* call("POST", formsPath(S2_ID), { title: "B" })
        assert.strictEqual(a.status, 200, JSON.stringify(a.body))
        assert.strictEqual(b.status, 200, JSON.stringify(b.body))
        assert.notStrictEqual(a.body.workflow_id, b.body.workflow_id)
        const r = yield* call("PATCH", `${formsPath()}/${a.body.workflow_id}`, { workflow_id: a.body.workflow_id + 1000, title: "A" })
        assertBadRequest(r, ["workflow_id"], "workflow_id mismatch")
      }))
  })

  describe("scoping and permissions", () => {
    it.effect("a form of another server or another bot → 404 on get, update and delete; it survives", () =>
      Effect.gen(function*() {
        const created = yield* call("POST", formsPath(), { title: "Scoped" })
        assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        const id = created.body.workflow_id
        for (const base of [formsPath(S2_ID), formsPath(S1_ID, BOT2_ID)]) {
          for (const [method, b] of [["GET", undefined], ["PATCH", { title: "Hijack" }], ["DELETE", undefined]] as const) {
            const r = yield* call(method, `${base}/${id}`, b)
            assert.strictEqual(r.status, 404, `${method} ${base}: ${JSON.stringify(r.body)}`)
          }
          const list = yield* call("GET", base)
          assert.isUndefined(list.body.forms.find((f: { workflow_id: number }) => f.workflow_id === id))
        }
        // CAROL owns S2: through S2 the S1 form is still not there.
        const carol = yield* call("GET", `${formsPath(S2_ID)}/${id}`, undefined, CAROL_ID)
        assert.strictEqual(carol.status, 404)
        const still = yield* call("GET", `${formsPath()}/${id}`)
        assert.strictEqual(still.status, 200)
        assert.strictEqual(still.body.title, "Scoped")
      }))

    it.effect("BOB (no MANAGE_GUILD in S1) → 403; unsigned → 401", () =>
      Effect.gen(function*() {
        const created = yield* call("POST", formsPath(), { title: "Private" })
        const id = created.body.workflow_id
        for (const [method, path, b] of [
          ["GET", formsPath(), undefined],
          ["GET", `${formsPath()}/${id}`, undefined],
          ["POST", formsPath(), { title: "x" }],
          ["PATCH", `${formsPath()}/${id}`, { title: "x" }],
          ["DELETE", `${formsPath()}/${id}`, undefined]
        ] as const) {
          const bob = yield* call(method, path, b, BOB_ID)
          assert.strictEqual(bob.status, 403, `${method} ${path}: ${JSON.stringify(bob.body)}`)
          assert.strictEqual(bob.body.errors[0].code, "Forbidden")
          const anon = yield* call(method, path, b, null)
          assert.strictEqual(anon.body.errors[0].code, "Unauthorized")
          assert.strictEqual(anon.status, 401, `${method} ${path}`)
        }
        assert.strictEqual((yield* call("GET", `${formsPath()}/${id}`)).body.title, "Private")
      }))

    it.effect("an unknown form id → 404; a non-numeric one → 400 naming formId", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* call("GET", `${formsPath()}/987654321`)).status, 404)
        const r = yield* call("GET", `${formsPath()}/abc`)
        assert.strictEqual(r.status, 400, JSON.stringify(r.body))
        assert.include(paths(r.body), "formId")
      }))

    it.effect("path ids are canonical positive decimals: other notations → 400 naming the parameter; canonical unknown → 404", () =>
      Effect.gen(function*() {
        const created = yield* call("POST", formsPath(), { title: "Canonical" })
        assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        const id = created.body.workflow_id as number
        const spellings = [`0${id}`, `0x${id.toString(16)}`, `${id}e0`, `%20${id}`, `-${id}`, `+${id}`, `${id}.0`, `%2B${id}`, "0"]
        for (const spelled of spellings) {
          for (const method of ["GET", "PATCH", "DELETE"] as const) {
            const r = yield* call(method, `${formsPath()}/${spelled}`, method === "PATCH" ? { title: "x" } : undefined)
            assert.strictEqual(r.status, 400, `${method} ${spelled}: ${JSON.stringify(r.body)}`)
            assert.deepStrictEqual(paths(r.body), ["formId"], spelled)
            assert.include(r.body.errors[0].message, "formId")
          }
        }
        assert.strictEqual((yield* call("GET", `${formsPath()}/${id}`)).body.title, "Canonical")
        for (const unknown of ["9007199254740993", "99999999999999999999999", "9".repeat(400)]) {
          for (const method of ["GET", "PATCH", "DELETE"] as const) {
            const r = yield* call(method, `${formsPath()}/${unknown}`, method === "PATCH" ? { title: "x" } : undefined)
            assert.strictEqual(r.status, 404, `${method} ${unknown}: ${JSON.stringify(r.body)}`)
          }
        }
        // :appClientId and :serverId: the same rule, on every route.
        const server = yield* call("GET", `/api/v1/bots/${BOT1_ID}/servers/0${S1_ID}/modules/forms`)
        assert.strictEqual(server.status, 400, JSON.stringify(server.body))
        assert.deepStrictEqual(paths(server.body), ["serverId"])
        const bot = yield* call("GET", `/api/v1/bots/+${BOT1_ID}/servers`)
        assert.strictEqual(bot.status, 400, JSON.stringify(bot.body))
        assert.deepStrictEqual(paths(bot.body), ["appClientId"])
        assert.strictEqual((yield* call("GET", `/api/v1/bots/${BOT1_ID}/servers/9${S1_ID}/modules/forms`)).status, 404)
        assert.strictEqual((yield* call("GET", `/api/v1/bots/9${BOT1_ID}/servers`)).status, 404)
        // :feedId.
        const rss = `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss/feeds`
        for (const spelled of ["01", "0x1", "1e0", "-1", "+1"]) {
          const r = yield* call("DELETE", `${rss}/${spelled}`)
          assert.strictEqual(r.status, 400, `${spelled}: ${JSON.stringify(r.body)}`)
          assert.deepStrictEqual(paths(r.body), ["feedId"])
        }
        assert.strictEqual((yield* call("DELETE", `${rss}/987654321987`)).status, 404)
        assert.strictEqual((yield* call("DELETE", `${formsPath()}/${id}`)).status, 200)
      }))
  })

  describe("the per-server limit", () => {
    it.effect("at most 50 forms per server: concurrent creates stop at exactly 50, the others → 400; a delete makes room", () =>
      Effect.gen(function*() {
        // Bot 2's forms module on S1: a scope no other test fills.
        const path = formsPath(S1_ID, BOT2_ID)
        const answers = yield* Effect.forEach(
          Array.from({ length: 56 }, (_, i) => i),
          (i) => call("POST", path, { title: `Form ${i}` }),
          { concurrency: "unbounded" }
        )
        const created = answers.filter((a) => a.status === 200)
        const refused = answers.filter((a) => a.status !== 200)
        assert.strictEqual(created.length, 50)
        for (const r of refused) {
          assert.strictEqual(r.status, 400, JSON.stringify(r.body))
          assert.match(r.body.errors[0].message, /already has 50 forms/)
          assert.strictEqual(r.body.errors[0].additionalProperties.limit, 50)
        }
        assert.strictEqual((yield* call("GET", path)).body.forms.length, 50)
        assert.strictEqual((yield* call("DELETE", `${path}/${created[0]!.body.workflow_id}`)).status, 200)
        assert.strictEqual((yield* call("POST", path, { title: "One more" })).status, 200)
        assert.strictEqual((yield* call("POST", path, { title: "Too many" })).status, 400)
        const all = (yield* call("GET", path)).body.forms as ReadonlyArray<{ workflow_id: number }>
        yield* Effect.forEach(all, (f) => call("DELETE", `${path}/${f.workflow_id}`), { concurrency: 8 })
      }))
  })
})
