import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BadRequest, NotFound, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { FormsRepoSql } from "../../src/layers/forms/FormsRepoSql.ts"
import { Forms, FormsSettings } from "../../src/services/forms/Forms.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import {
  access,
  AuditFailure,
  AuditLogSqlFailing,
  auditRows,
  BOARDS,
  BOT,
  input,
  NEWS,
  OTHER_SERVER,
  ROLE,
  TaskBoardFake,
  TEXT,
  UNPAIRED_SERVER,
  VOICE
} from "./FormFixtures.ts"

const OPTIONS = ["Description", "Title", "List", "Label", "Attachment", "Private"]
const PAIRED_LISTING = [{ id: "0", name: "Disable task-board integration" }, ...BOARDS]
const UNPAIRED_LISTING = [{ id: "-1", name: "No task-board team paired" }]

const server = (n: number) => `81000000000000000${n}`
const paths = (e: BadRequest) => e.problems.map((p) => p.additionalProperties?.["path"])

const formCount = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM forms WHERE server_id = ${serverId}`
    return rows[0]!.n
  })

const withAuditFailing = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const failure = yield* AuditFailure
    failure.failing = true
    return yield* Effect.ensuring(self, Effect.sync(() => { failure.failing = false }))
  })

for (const kind of dbKinds) {
  const env = Forms.layer.pipe(
    // A small limit, so that the limit's test needs few forms (the other tests stay below it per server).
    Layer.provideMerge(Layer.mergeAll(FormsRepoSql, AuditLogSqlFailing, TaskBoardFake, Layer.succeed(FormsSettings, { maxFormsPerServer: 3 }))),
    Layer.provideMerge(testDb(kind))
  )

  layer(env, { excludeTestServices: true })(`Forms on ${kind}`, (it) => {
    it.effect("options, boards listing and template (paired and unpaired)", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        assert.deepStrictEqual(yield* forms.taskboardOptions, { options: OPTIONS })
        assert.deepStrictEqual(yield* forms.taskboardBoards(access()), { taskboard_boards: PAIRED_LISTING })
        assert.deepStrictEqual(yield* forms.taskboardBoards(access(UNPAIRED_SERVER)), { taskboard_boards: UNPAIRED_LISTING })
        const template = yield* forms.template(access(UNPAIRED_SERVER))
        assert.deepStrictEqual(template, {
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
          anonymize: false,
          disable_downvote: false,
          disable_upvote: false,
          extended_embed: false,
          highlight_attachments: false,
          anonymize_rejection: false,
          disable_mentions: false,
          disable_priorities: false,
          taskboard_options: OPTIONS,
          taskboard_boards: UNPAIRED_LISTING
        })
        assert.deepStrictEqual((yield* forms.template(access())).taskboard_boards, PAIRED_LISTING)
      }))

    it.effect("create, get, list, update, delete, each audited in its transaction", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(1))
        const created = yield* forms.create(a, input({
          workflow_id: 777, // read-only: ignored
          timestamp_created: "yesterday",
          taskboard_boards: [],
          title: "Applications",
          channel_id: TEXT,
          fwd_channel_ids: [NEWS],
          role_mentions: [ROLE],
          workflow_live: true,
          steps: [
            { step_id: 9, type: "message", string: "Why?" },
            { type: "reaction", string: "Pick", answers_validation: ["a", "b"], char_limit: [2, 3], alias: "pick", taskboard_mapping: "Title" }
          ]
        }))
        const id = created.workflow_id!
        assert.notStrictEqual(id, 777)
        assert.strictEqual(created.title, "Applications")
        assert.strictEqual(created.color_hex, "#00d084")
        assert.strictEqual(created.taskboard_board, "0")
        assert.isFalse(created.anonymize)
        assert.deepStrictEqual(created.steps, [
          { step_id: 1, type: "message", string: "Why?", answers_validation: [], char_limit: [1, 2000], alias: "", taskboard_mapping: "" },
          { step_id: 2, type: "reaction", string: "Pick", answers_validation: ["a", "b"], char_limit: [2, 3], alias: "pick", taskboard_mapping: "Title" }
        ])
        assert.deepStrictEqual(created.taskboard_options, OPTIONS)
        assert.deepStrictEqual(created.taskboard_boards, PAIRED_LISTING)

        const read = yield* forms.get(a, id)
        assert.deepStrictEqual(read, created)
        assert.deepStrictEqual(yield* forms.list(a), {
          forms: [{ workflow_id: id, taskboard_integration: false, workflow_live: true, title: "Applications", color_hex: "#00d084" }]
        })

        // PATCH replaces the whole form: omitted flags, lists and colour take their defaults.
        const updated = yield* forms.update(a, id, input({
          workflow_id: id,
          title: "Applications 2",
          color_hex: "#123456",
          steps: [{ type: "message", string: "Only" }]
        }))
        assert.strictEqual(updated.workflow_id, id)
        assert.isFalse(updated.workflow_live)
        assert.strictEqual(updated.channel_id, null)
        assert.deepStrictEqual(updated.fwd_channel_ids, [])
        assert.deepStrictEqual(updated.role_mentions, [])
        assert.deepStrictEqual(updated.steps.map((s) => [s.step_id, s.string]), [[1, "Only"]])
        assert.strictEqual(updated.timestamp_created, created.timestamp_created)
        const recolored = yield* forms.update(a, id, input({ title: "Applications 2" }))
        assert.strictEqual(recolored.color_hex, "#00d084")
        assert.deepStrictEqual(recolored.steps, [])

        assert.deepStrictEqual(yield* forms.remove(a, id), { success: true })
        const gone = yield* Effect.flip(forms.get(a, id))
        assert.instanceOf(gone, NotFound)

        const log = yield* auditRows(a.serverId)
        assert.deepStrictEqual(log.map((r) => [r.module_name, Number(r.item_identifier), r.event_type, r.event_string]), [
          ["forms", id, "PUSH", `Created form "Applications" (#${id})`],
          ["forms", id, "GET", `Viewed form "Applications" (#${id})`],
          ["forms", id, "PATCH", `Updated form "Applications 2" (#${id})`],
          ["forms", id, "PATCH", `Updated form "Applications 2" (#${id})`],
          ["forms", id, "DELETE", `Deleted form "Applications 2" (#${id})`]
        ])
      }))

    it.effect("a form of another server or bot, or an unknown id: 404 everywhere, nothing written", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const mine = access(server(2))
        const { workflow_id } = yield* forms.create(mine, input({ title: "Mine" }))
        const id = workflow_id!
        for (const other of [access(OTHER_SERVER), access(server(2), "900000000000000002")]) {
          assert.instanceOf(yield* Effect.flip(forms.get(other, id)), NotFound)
          // Even a body that is invalid for the other server: 404, not 400.
          assert.instanceOf(yield* Effect.flip(forms.update(other, id, input({ title: "Theirs", channel_id: TEXT }))), NotFound)
          assert.instanceOf(yield* Effect.flip(forms.remove(other, id)), NotFound)
          assert.deepStrictEqual((yield* forms.list(other)).forms.filter((f) => f.workflow_id === id), [])
        }
        assert.instanceOf(yield* Effect.flip(forms.get(mine, 987654321)), NotFound)
        assert.instanceOf(yield* Effect.flip(forms.update(mine, 987654321, input())), NotFound)
        assert.instanceOf(yield* Effect.flip(forms.remove(mine, 987654321)), NotFound)
        assert.strictEqual((yield* forms.get(mine, id)).title, "Mine")
        assert.deepStrictEqual((yield* auditRows(OTHER_SERVER)).length, 0)
        assert.deepStrictEqual((yield* auditRows(mine.serverId)).map((r) => r.event_type), ["PUSH", "GET"])
      }))

    it.effect("validation: every problem listed with its path, nothing written", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(3))
        const e = yield* Effect.flip(forms.create(a, input({
          channel_id: VOICE,
          fwd_channel_ids: [TEXT, "799999999999999999"],
          role_mentions: ["1"],
          taskboard_integration: true,
          taskboard_board: "-1",
          steps: [{ type: "message", string: "t", taskboard_mapping: "Title" }]
        })))
        assert.instanceOf(e, BadRequest)
        assert.deepStrictEqual(paths(e as BadRequest), ["channel_id", "fwd_channel_ids[1]", "role_mentions[0]", "taskboard_board"])
        assert.strictEqual(yield* formCount(a.serverId), 0)

        const { workflow_id } = yield* forms.create(a, input({ title: "Valid" }))
        const mismatch = yield* Effect.flip(forms.update(a, workflow_id!, input({ workflow_id: workflow_id! + 1, title: "Changed" })))
        assert.deepStrictEqual(paths(mismatch as BadRequest), ["workflow_id"])
        assert.strictEqual((yield* forms.get(a, workflow_id!)).title, "Valid")
        assert.deepStrictEqual((yield* auditRows(a.serverId)).map((r) => r.event_type), ["PUSH", "GET"])
      }))

    it.effect("every rule runs at once: schema, cross-field and server problems in one BadRequest, nothing written", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(8))
        const e = yield* Effect.flip(forms.create(a, {
          title: "",
          workflow_live: true,
          color_hex: "red",
          fwd_channel_ids: [VOICE, 5],
          role_mentions: ["1"],
          taskboard_integration: true,
          taskboard_board: "b-2",
          steps: [{ type: "message", string: "" }]
        }))
        assert.instanceOf(e, BadRequest)
        assert.sameMembers(paths(e as BadRequest), [
          "title", "color_hex", "fwd_channel_ids[1]", "steps[0].string", // schema
          "channel_id", "steps", // across fields: live without channel_id, integration without a Title step
          "fwd_channel_ids[0]", "role_mentions[0]" // the server, on every well-formed element (also of a malformed list)
        ])
        for (const p of (e as BadRequest).problems) {
          const path = String(p.additionalProperties?.["path"])
          assert.isTrue(p.message.startsWith(`${path}: `), p.message)
        }
        for (const body of [null, [], "form", 5]) {
          const notObject = yield* Effect.flip(forms.create(a, body))
          assert.match((notObject as BadRequest).problems[0]!.message, /JSON object/)
        }
        assert.strictEqual(yield* formCount(a.serverId), 0)
        assert.deepStrictEqual(yield* auditRows(a.serverId), [])
      }))

    it.effect("colour stored and returned lower case; alias and taskboard_mapping \"\" when unset (null, absent or \"\")", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(9))
        const created = yield* forms.create(a, {
          title: "Colours",
          color_hex: "#ABCDEF",
          steps: [
            { type: "message", string: "a", alias: null, taskboard_mapping: null },
            { type: "message", string: "b", alias: "", taskboard_mapping: "" },
            { type: "message", string: "c" }
          ]
        })
        assert.strictEqual(created.color_hex, "#abcdef")
        for (const s of created.steps) {
          assert.strictEqual(s.alias, "")
          assert.strictEqual(s.taskboard_mapping, "")
        }
        assert.strictEqual((yield* forms.list(a)).forms[0]!.color_hex, "#abcdef")
        assert.deepStrictEqual(yield* forms.get(a, created.workflow_id!), created)
        // What a read answers can be written back as is.
        const again = yield* forms.update(a, created.workflow_id!, created)
        assert.deepStrictEqual(again.steps, created.steps)
      }))

    it.effect("at most maxFormsPerServer forms per server: the next create → 400 naming the limit, nothing written", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(7))
        for (const i of [1, 2, 3]) yield* forms.create(a, input({ title: `F${i}` }))
        const e = yield* Effect.flip(forms.create(a, input({ title: "F4" })))
        assert.instanceOf(e, BadRequest)
        assert.match((e as BadRequest).problems[0]!.message, /already has 3 forms/)
        assert.deepStrictEqual((e as BadRequest).problems[0]!.additionalProperties, { limit: 3 })
        assert.strictEqual(yield* formCount(a.serverId), 3)
        assert.deepStrictEqual((yield* auditRows(a.serverId)).map((r) => r.event_type), ["PUSH", "PUSH", "PUSH"])
        // A body refused on a full server names the limit too, in the same 400 (every problem at once).
        const both = yield* Effect.flip(forms.create(a, input({ title: "" })))
        assert.instanceOf(both, BadRequest)
        assert.deepStrictEqual(paths(both as BadRequest), ["title", undefined])
        assert.deepStrictEqual((both as BadRequest).problems[1]!.additionalProperties, { limit: 3 })
        assert.strictEqual(yield* formCount(a.serverId), 3)
        // Another bot on the same server has its own forms module; a refused body there is not full.
        const notFull = yield* Effect.flip(forms.create(access(server(7), "900000000000000002"), input({ title: "" })))
        assert.deepStrictEqual(paths(notFull as BadRequest), ["title"])
        yield* forms.create(access(server(7), "900000000000000002"), input({ title: "Other bot" }))
      }))

    it.effect("task board: a real board of the paired team; no team → 400", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const body = input({
          taskboard_integration: true,
          taskboard_board: "b-2",
          steps: [{ type: "message", string: "Title?", taskboard_mapping: "Title" }]
        })
        const linked = yield* forms.create(access(server(4)), body)
        assert.strictEqual(linked.taskboard_board, "b-2")
        assert.isTrue(linked.taskboard_integration)
        const noTeam = yield* Effect.flip(forms.create(access(UNPAIRED_SERVER), body))
        assert.deepStrictEqual(paths(noTeam as BadRequest), ["taskboard_board"])
        const unknownBoard = yield* Effect.flip(forms.create(access(server(4)), input({ ...body, taskboard_board: "b-9" })))
        assert.deepStrictEqual(paths(unknownBoard as BadRequest), ["taskboard_board"])
        const unpaired = yield* forms.create(access(UNPAIRED_SERVER), input({ title: "No board" }))
        assert.strictEqual(unpaired.taskboard_board, "-1")
        assert.deepStrictEqual(unpaired.taskboard_boards, UNPAIRED_LISTING)
      }))

    it.effect("a write whose audit entry fails is rolled back entirely, and leaves no entry", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(5))
        // The fake audit writes its row and then fails: the row and the form must both vanish.
        const failedCreate = yield* Effect.flip(withAuditFailing(forms.create(a, input({ title: "Lost", steps: [{ type: "message", string: "q" }] }))))
        assert.instanceOf(failedCreate, ServiceUnavailable)
        assert.strictEqual(yield* formCount(a.serverId), 0)
        assert.deepStrictEqual(yield* auditRows(a.serverId), [])

        const kept = yield* forms.create(a, input({ title: "Kept", steps: [{ type: "message", string: "q1" }] }))
        const id = kept.workflow_id!
        const failedUpdate = yield* Effect.exit(withAuditFailing(forms.update(a, id, input({ title: "Changed", steps: [] }))))
        assert.isTrue(Exit.isFailure(failedUpdate))
        const failedDelete = yield* Effect.exit(withAuditFailing(forms.remove(a, id)))
        assert.isTrue(Exit.isFailure(failedDelete))
        const failedGet = yield* Effect.exit(withAuditFailing(forms.get(a, id)))
        assert.isTrue(Exit.isFailure(failedGet))

        const repo = yield* FormsRepo
        const stored = Option.getOrThrow(yield* repo.find({ botId: BOT, serverId: a.serverId }, id))
        assert.strictEqual(stored.title, "Kept")
        assert.deepStrictEqual(stored.steps.map((s) => s.string), ["q1"])
        assert.deepStrictEqual((yield* auditRows(a.serverId)).map((r) => r.event_type), ["PUSH"])
      }))

    it.effect("20 concurrent PATCHes: the final form is exactly one of them, 20 audit entries", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(6))
        const { workflow_id } = yield* forms.create(a, input({ title: "Race" }))
        const id = workflow_id!
        const bodies = Array.from({ length: 20 }, (_, v) =>
          input({
            title: `Race ${v}`,
            steps: Array.from({ length: 1 + ((v * 3) % 5) }, (_, i) => ({ type: "message" as const, string: `v${v} q${i}`, char_limit: [1, 10 + v] as const }))
          }))
        yield* Effect.forEach(bodies, (b) => forms.update(a, id, b), { concurrency: "unbounded" })
        const final = yield* forms.get(a, id)
        const winner = bodies.find((b) => b.title === final.title)!
        assert.deepStrictEqual(
          final.steps.map((s) => [s.step_id, s.string, s.char_limit]),
          winner.steps!.map((s, i) => [i + 1, s.string, s.char_limit])
        )
        assert.strictEqual((yield* auditRows(a.serverId)).filter((r) => r.event_type === "PATCH").length, 20)
      }))
  })
}
