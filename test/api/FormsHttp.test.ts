/**
 * The eight forms routes over HTTP against the sandbox chat platform and task board, on a real
 * database: the lifecycle, the template, validation envelopes, the server-dependent rules, task
 * boards, scoping (other server, other bot), permissions and the audit entries each action leaves.
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
  SEED
} from "../../src/sandbox/Seed.ts"
import { RSS_PATHS, TASKBOARD_BOARDS } from "../../src/sandbox/sources/Seed.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"

const OPTIONS = ["Description", "Title", "List", "Label", "Attachment", "Private"]
const REAL_BOARDS = TASKBOARD_BOARDS.filter((b) => !b.closed).map((b) => ({ id: b.id, name: b.name }))
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

const formsPath = (server = S1_ID, bot = BOT1_ID) => `/api/v1/bots/${bot}/servers/${server}/modules/forms`

/** A request as `userId` (null: unsigned); the body, if any, as JSON. */
const call = (method: string, path: string, body?: unknown, userId: string | null = ALICE_ID) =>
  Effect.gen(function*() {
    const init: RequestInit & { token?: string } = { method }
    if (userId !== null) init.token = yield* tokenOf(userId)
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { "content-type": "application/json" }
    }
    const res = yield* raw(init, path)
    return { status: res.status, body: yield* json(res) }
  })

const paths = (body: { errors: ReadonlyArray<{ additionalProperties?: { path?: string } }> }) =>
  body.errors.map((e) => e.additionalProperties?.path)

const assertBadRequest = (r: { status: number; body: any }, expectedPaths: ReadonlyArray<string>, label: string) => {
  assert.strictEqual(r.status, 400, `${label}: ${JSON.stringify(r.body)}`)
  assert.deepStrictEqual(Object.keys(r.body), ["errors"])
  for (const e of r.body.errors) {
    assert.strictEqual(e.code, "Bad Request")
    assert.isString(e.message)
  }
  assert.sameMembers(paths(r.body), [...expectedPaths], `${label}: ${JSON.stringify(r.body)}`)
}

const step = (text: string, extra: Record<string, unknown> = {}) => ({ type: "message", string: text, ...extra })

/** The sandbox's call counts (per route name), and their reset. */
const sandbox = (method: string, path: string) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const res = yield* Effect.promise(() => fetch(`${app.url}${path}`, { method }))
    const text = yield* Effect.promise(() => res.text())
    return text === "" ? undefined : JSON.parse(text)
  })
const taskBoardCalls = Effect.map(sandbox("GET", "/sandbox/stats"), (s: { calls: Record<string, number> }) =>
  Object.entries(s.calls).filter(([route]) => route.includes("/taskboard/")).reduce((n, [, c]) => n + c, 0))
const resetStats = sandbox("DELETE", "/sandbox/stats")

const EMOJI = "\u{1F600}" // one code point, two UTF-16 units

for (const db of dbKinds) {
  layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 60_000 })(`forms over HTTP (${db})`, (it) => {
    // First in the file: it needs the task board's cache cold (nothing before it reads S1's boards).
    describe("task-board calls (issue #12 item 17)", () => {
      it.effect("a burst of templates, board listings, creates, reads and updates on one server → one task-board call", () =>
        Effect.gen(function*() {
          yield* tokenOf(ALICE_ID)
          yield* resetStats
          const answers = yield* Effect.all([
            ...Array.from({ length: 20 }, () => call("GET", `${formsPath()}/new`)),
            ...Array.from({ length: 10 }, () => call("GET", `${formsPath()}/taskboardBoards`)),
            ...Array.from({ length: 10 }, (_, i) => call("POST", formsPath(), { title: `Burst ${i}` }))
          ], { concurrency: "unbounded" })
          for (const a of answers) assert.strictEqual(a.status, 200, JSON.stringify(a.body))
          const ids: Array<number> = answers.slice(30).map((a) => a.body.workflow_id)
          const reads = yield* Effect.forEach(ids, (id) => call("GET", `${formsPath()}/${id}`), { concurrency: "unbounded" })
          const writes = yield* Effect.forEach(ids, (id) => call("PATCH", `${formsPath()}/${id}`, { title: "Burst" }), { concurrency: "unbounded" })
          for (const a of [...reads, ...writes]) assert.strictEqual(a.status, 200, JSON.stringify(a.body))
          // 60 requests that each need S1's boards: one upstream call, shared (coalesced, then cached).
          assert.strictEqual(yield* taskBoardCalls, 1)
          for (const a of reads) assert.deepStrictEqual(a.body.taskboard_boards, reads[0]!.body.taskboard_boards)
          // An unpaired server needs no call at all.
          yield* resetStats
          assert.strictEqual((yield* call("GET", `${formsPath(S2_ID)}/new`)).status, 200)
          assert.strictEqual(yield* taskBoardCalls, 0)
          yield* Effect.forEach(ids, (id) => call("DELETE", `${formsPath()}/${id}`))
        }))
    })

    describe("listings and template", () => {
      it.effect("taskboardOptions lists the six option values", () =>
        Effect.gen(function*() {
          const r = yield* call("GET", `${formsPath()}/taskboardOptions`)
          assert.strictEqual(r.status, 200)
          assert.deepStrictEqual(r.body, { options: OPTIONS })
        }))

      it.effect("taskboardBoards: S1 (paired) lists 0 then the real open boards; S2 (unpaired) only -1", () =>
        Effect.gen(function*() {
          const s1 = yield* call("GET", `${formsPath()}/taskboardBoards`)
          assert.strictEqual(s1.status, 200, JSON.stringify(s1.body))
          assert.deepStrictEqual(s1.body.taskboard_boards.map((b: { id: string }) => b.id), ["0", ...REAL_BOARDS.map((b) => b.id)])
          assert.deepStrictEqual(s1.body.taskboard_boards.slice(1), REAL_BOARDS)
          const s2 = yield* call("GET", `${formsPath(S2_ID)}/taskboardBoards`)
          assert.strictEqual(s2.status, 200, JSON.stringify(s2.body))
          assert.deepStrictEqual(s2.body.taskboard_boards.map((b: { id: string }) => b.id), ["-1"])
        }))

      it.effect("the template equals the contract's defaults exactly", () =>
        Effect.gen(function*() {
          const r = yield* call("GET", `${formsPath()}/new`)
          assert.strictEqual(r.status, 200, JSON.stringify(r.body))
          const { taskboard_options, taskboard_boards, ...rest } = r.body
          assert.deepStrictEqual(rest, {
            workflow_id: null,
            channel_id: null,
            fwd_channel_ids: [],
            role_mentions: [],
            public_mentions: [],
            timestamp_created: null,
            taskboard_integration: false,
            taskboard_board: "-1",
            workflow_live: false,
            title: "TITLE_NOT_FOUND",
            color_hex: "#00d084",
            steps: [],
            // Not shown by the contract; decisions.md: an omitted flag is false.
            anonymize: false,
            disable_downvote: false,
            disable_upvote: false,
            extended_embed: false,
            highlight_attachments: false,
            anonymize_rejection: false,
            disable_mentions: false,
            disable_priorities: false
          })
          assert.deepStrictEqual(taskboard_options, OPTIONS)
          assert.deepStrictEqual(taskboard_boards.map((b: { id: string }) => b.id), ["0", ...REAL_BOARDS.map((b) => b.id)])
          const unpaired = yield* call("GET", `${formsPath(S2_ID)}/new`)
          assert.deepStrictEqual(unpaired.body.taskboard_boards.map((b: { id: string }) => b.id), ["-1"])
        }))
    })

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

    describe("validation", () => {
      it.effect("a body with several structural problems lists them all, each with its path", () =>
        Effect.gen(function*() {
          const r = yield* call("POST", formsPath(), {
            title: "",
            color_hex: "red",
            steps: [
              step("ok", { char_limit: [0, 10] }),
              { type: "reaction", string: "no answers", answers_validation: [] },
              { type: "poll", string: "bad type" },
              step("x".repeat(2001))
            ]
          })
          assertBadRequest(r, [
            "title",
            "color_hex",
            "steps[0].char_limit",
            "steps[1].answers_validation",
            "steps[2].type",
            "steps[3].string"
          ], "structural")
        }))

      it.effect("limits: char_limit max > 2000 or max < min, more than 25 steps, alias over 256", () =>
        Effect.gen(function*() {
          const r1 = yield* call("POST", formsPath(), {
            title: "t",
            steps: [step("a", { char_limit: [1, 2001] }), step("b", { char_limit: [10, 5] }), step("c", { char_limit: [1, 2, 3] }), step("d", { alias: "x".repeat(257) })]
          })
          assertBadRequest(r1, ["steps[0].char_limit", "steps[1].char_limit", "steps[2].char_limit[2]", "steps[3].alias"], "limits")
          const r2 = yield* call("POST", formsPath(), { title: "t", steps: Array.from({ length: 26 }, (_, i) => step(`q${i}`)) })
          assertBadRequest(r2, ["steps"], "26 steps")
          const ok = yield* call("POST", formsPath(), { title: "x".repeat(256), steps: Array.from({ length: 25 }, (_, i) => step(`q${i}`, { char_limit: [2000, 2000] })) })
          assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
        }))

      it.effect("a channel of another server, a voice channel, a category and an unknown role → 400, all listed", () =>
        Effect.gen(function*() {
          const r = yield* call("POST", formsPath(), {
            title: "t",
            channel_id: channelId(2, 2),
            fwd_channel_ids: [channelId(1, 2), channelId(1, 5), channelId(1, 1)],
            role_mentions: [roleId(1, 1), roleId(2, 1)],
            public_mentions: ["123"]
          })
          assertBadRequest(r, ["channel_id", "fwd_channel_ids[1]", "fwd_channel_ids[2]", "role_mentions[1]", "public_mentions[0]"], "server rules")
        }))

      it.effect("workflow_live without channel_id → 400", () =>
        Effect.gen(function*() {
          assertBadRequest(yield* call("POST", formsPath(), { title: "t", workflow_live: true }), ["channel_id"], "live")
        }))

      it.effect("task board: integration with a missing, special or unknown board → 400; without Title → 400; unpaired server → 400", () =>
        Effect.gen(function*() {
          const title = [step("Name", { taskboard_mapping: "Title" })]
          for (const board of [undefined, "0", "-1", "5f1a0000000000000000b003", "nope"]) {
            const r = yield* call("POST", formsPath(), {
              title: "t",
              taskboard_integration: true,
              ...(board === undefined ? {} : { taskboard_board: board }),
              steps: title
            })
            assertBadRequest(r, ["taskboard_board"], `board ${board}`)
          }
          const noTitle = yield* call("POST", formsPath(), {
            title: "t",
            taskboard_integration: true,
            taskboard_board: REAL_BOARDS[1]!.id,
            steps: [step("Name", { taskboard_mapping: "Description" })]
          })
          assertBadRequest(noTitle, ["steps"], "no Title")
          const badMapping = yield* call("POST", formsPath(), { title: "t", steps: [step("Name", { taskboard_mapping: "Cover" })] })
          assertBadRequest(badMapping, ["steps[0].taskboard_mapping"], "mapping")
          const unpaired = yield* call("POST", formsPath(S2_ID), {
            title: "t",
            taskboard_integration: true,
            taskboard_board: REAL_BOARDS[0]!.id,
            steps: title
          })
          assertBadRequest(unpaired, ["taskboard_board"], "unpaired")
          const ok = yield* call("POST", formsPath(), {
            title: "t",
            taskboard_integration: true,
            taskboard_board: REAL_BOARDS[1]!.id,
            steps: title
          })
          assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
        }))

      it.effect("every problem in one answer: field schemas, rules across fields and the server's rules together (issue #12 item 1)", () =>
        Effect.gen(function*() {
          const before = yield* call("GET", formsPath())
          const voice = channelId(1, 5)
          const mixed = { title: "", channel_id: voice, role_mentions: [roleId(2, 1)] }
          assertBadRequest(yield* call("POST", formsPath(), mixed), ["title", "channel_id", "role_mentions[0]"], "title + voice channel + foreign role")
          assertBadRequest(yield* call("POST", formsPath(), { title: "", workflow_live: true }), ["title", "channel_id"], "title + live without channel")
          assertBadRequest(
            yield* call("POST", formsPath(), {
              title: 5,
              workflow_live: true,
              fwd_channel_ids: [voice, 7, channelId(2, 2)],
              public_mentions: ["x", roleId(2, 1)],
              taskboard_integration: true,
              taskboard_board: "nope",
              steps: [step(""), { type: "poll", string: "q" }]
            }),
            [
              "title", "channel_id", "fwd_channel_ids[0]", "fwd_channel_ids[1]", "fwd_channel_ids[2]", "public_mentions[0]",
              "public_mentions[1]", "taskboard_board", "steps", "steps[0].string", "steps[1].type"
            ],
            "everything at once"
          )
          // PATCH runs every rule too; nothing is written by a refused body.
          const form = yield* call("POST", formsPath(), { title: "Kept" })
          assert.strictEqual(form.status, 200, JSON.stringify(form.body))
          const path = `${formsPath()}/${form.body.workflow_id}`
          assertBadRequest(yield* call("PATCH", path, mixed), ["title", "channel_id", "role_mentions[0]"], "PATCH")
          assert.strictEqual((yield* call("GET", path)).body.title, "Kept")
          assert.strictEqual((yield* call("DELETE", path)).status, 200)
          assert.deepStrictEqual((yield* call("GET", formsPath())).body, before.body)
        }))

      it.effect("messages name the field and what it expects in words, never an internal schema name", () =>
        Effect.gen(function*() {
          const r = yield* call("POST", formsPath(), {
            title: 5,
            workflow_live: "yes",
            color_hex: "#12345",
            steps: [{ type: "poll", alias: 5, taskboard_mapping: "Card" }, "x"]
          })
          assert.strictEqual(r.status, 400, JSON.stringify(r.body))
          for (const e of r.body.errors) {
            const path = e.additionalProperties.path as string
            assert.isTrue(e.message.startsWith(`${path}: `), e.message)
            assert.notMatch(e.message, /FormInput|StepInput|Expected [a-z]+( \||,)|Missing key/, e.message)
          }
          const byPath = Object.fromEntries(r.body.errors.map((e: { message: string; additionalProperties: { path: string } }) => [e.additionalProperties.path, e.message]))
          assert.strictEqual(byPath["title"], "title: expected a text of 1 to 256 characters")
          assert.strictEqual(byPath["workflow_live"], "workflow_live: expected true or false")
          assert.strictEqual(byPath["steps[0].string"], "steps[0].string: is required")
          assert.strictEqual(byPath["steps[1]"], "steps[1]: expected a step: an object with type and string")
          const notObject = yield* call("POST", formsPath(), [])
          assert.strictEqual(notObject.status, 400)
          assert.match(notObject.body.errors[0].message, /JSON object/)
        }))

      it.effect("lengths count code points: 256 emoji are a valid title, 2,000 a valid step; one more is refused", () =>
        Effect.gen(function*() {
          const ok = yield* call("POST", formsPath(S2_ID), {
            title: EMOJI.repeat(256),
            steps: [step(EMOJI.repeat(2000), { alias: EMOJI.repeat(256), answers_validation: [EMOJI.repeat(100)] })]
          })
          assert.strictEqual(ok.status, 200, JSON.stringify(ok.body).slice(0, 500))
          assert.strictEqual(ok.body.title, EMOJI.repeat(256))
          assert.strictEqual(ok.body.steps[0].string, EMOJI.repeat(2000))
          assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${ok.body.workflow_id}`)).status, 200)
          const over = yield* call("POST", formsPath(S2_ID), {
            title: EMOJI.repeat(257),
            steps: [step(EMOJI.repeat(2001), { alias: EMOJI.repeat(257), answers_validation: [EMOJI.repeat(101)] })]
          })
          assertBadRequest(over, ["title", "steps[0].string", "steps[0].alias", "steps[0].answers_validation[0]"], "one code point over")
        }))

      it.effect("feed option limits count code points too: 600 emoji are a valid custom_header (limit 1,024)", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const rss = `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss/feeds`
          const created = yield* call("POST", rss, {
            feed_identifier: `${app.url}${RSS_PATHS.rss}`,
            webhook_channel: channelId(1, 3),
            webhook_options: { custom_header: EMOJI.repeat(600), "webhook-name": EMOJI.repeat(32), filter_words: [EMOJI.repeat(100)] }
          })
          assert.strictEqual(created.status, 200, JSON.stringify(created.body).slice(0, 500))
          assert.strictEqual(created.body.webhook_options.custom_header, EMOJI.repeat(600))
          assert.strictEqual((yield* call("DELETE", `${rss}/${created.body.id}`)).status, 200)
          const over = yield* call("POST", rss, {
            feed_identifier: `${app.url}${RSS_PATHS.rss}`,
            webhook_channel: channelId(1, 3),
            webhook_options: { custom_header: EMOJI.repeat(1025), "webhook-name": EMOJI.repeat(33), filter_words: [EMOJI.repeat(101)] }
          })
          assertBadRequest(over, [
            "webhook_options.custom_header",
            "webhook_options.webhook-name",
            "webhook_options.filter_words[0]"
          ], "feed options one code point over")
        }))

      it.effect("color_hex upper case is stored and listed lower case; board 0 on a server without a paired team → 400", () =>
        Effect.gen(function*() {
          const created = yield* call("POST", formsPath(S2_ID), { title: "Colour", color_hex: "#A1B2C3" })
          assert.strictEqual(created.status, 200, JSON.stringify(created.body))
          assert.strictEqual(created.body.color_hex, "#a1b2c3")
          const listed = (yield* call("GET", formsPath(S2_ID))).body.forms.find((f: { workflow_id: number }) => f.workflow_id === created.body.workflow_id)
          assert.strictEqual(listed.color_hex, "#a1b2c3")
          assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${created.body.workflow_id}`)).status, 200)
          // S2 has no paired team: only -1 is a board there (decisions.md "Forms").
          const zero = yield* call("POST", formsPath(S2_ID), { title: "Board", taskboard_board: "0" })
          assertBadRequest(zero, ["taskboard_board"], "board 0 unpaired")
          const none = yield* call("POST", formsPath(S2_ID), { title: "Board", taskboard_board: "-1" })
          assert.strictEqual(none.status, 200, JSON.stringify(none.body))
          assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${none.body.workflow_id}`)).status, 200)
        }))

            it.effect("malformed JSON → 400, a non-JSON content type → 415", () =>
        Effect.gen(function*() {
          const token = yield* tokenOf(ALICE_ID)
          const bad = yield* raw({ token, method: "POST", body: "{", headers: { "content-type": "application/json" } }, formsPath())
          assert.strictEqual(bad.status, 400)
          assert.strictEqual((yield* json(bad)).errors[0].code, "Bad Request")
          const text = yield* raw({ token, method: "POST", body: "title=x", headers: { "content-type": "text/plain" } }, formsPath())
          assert.strictEqual(text.status, 415)
        }))

      it.effect("U+0000 in a string → 400 at its path on POST and PATCH (never 500/503), nothing written", () =>
        Effect.gen(function*() {
          const before = yield* call("GET", formsPath(S2_ID))
          const created = yield* call("POST", formsPath(S2_ID), { title: "a\u0000b", steps: [step("ok"), step("b\u0000")] })
          assertBadRequest(created, ["title", "steps[1].string"], "POST with U+0000")
          assert.deepStrictEqual((yield* call("GET", formsPath(S2_ID))).body, before.body)

          const form = yield* call("POST", formsPath(S2_ID), { title: "clean" })
          assert.strictEqual(form.status, 200, JSON.stringify(form.body))
          const id = form.body.workflow_id
          assertBadRequest(yield* call("PATCH", `${formsPath(S2_ID)}/${id}`, { title: "\u0000" }), ["title"], "PATCH with U+0000")
          const read = yield* call("GET", `${formsPath(S2_ID)}/${id}`)
          assert.strictEqual(read.body.title, "clean")
          assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${id}`)).status, 200)
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
}
