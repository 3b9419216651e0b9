import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema, SchemaIssue } from "effect"
import { formatPath } from "../../src/http/Envelope.ts"
import { FormInput } from "../../src/domain/Form.ts"
import { validateForm } from "../../src/services/FormValidation.ts"
import type { FormContext } from "../../src/services/FormValidation.ts"
import { access, BOARDS, CATEGORY, input, NEWS, OTHER_ROLE, OTHER_TEXT, ROLE, ROLE2, TEXT, VOICE } from "./fixtures.ts"

const server = access()
const paired: FormContext = { channels: server.channels, roles: server.roles, boards: BOARDS }
const unpaired: FormContext = { ...paired, boards: undefined }

const paths = (problems: ReadonlyArray<{ readonly additionalProperties?: Record<string, unknown> }>) =>
  problems.map((p) => p.additionalProperties?.["path"])

describe("FormValidation", () => {
  it("accepts text and news channels and roles of the server", () => {
    assert.deepStrictEqual(
      validateForm(input({ channel_id: TEXT, fwd_channel_ids: [NEWS, TEXT], role_mentions: [ROLE], public_mentions: [ROLE2, ROLE] }), paired),
      []
    )
  })

  it("channel_id: a voice channel, a category, a channel of another server are refused", () => {
    for (const channel of [VOICE, CATEGORY, OTHER_TEXT]) {
      const problems = validateForm(input({ channel_id: channel }), paired)
      assert.deepStrictEqual(paths(problems), ["channel_id"])
    }
    assert.match(validateForm(input({ channel_id: VOICE }), paired)[0]!.message, /not a text or news channel/)
    assert.match(validateForm(input({ channel_id: OTHER_TEXT }), paired)[0]!.message, /not a channel of this server/)
  })

  it("fwd_channel_ids: each bad element at its index", () => {
    assert.deepStrictEqual(
      paths(validateForm(input({ fwd_channel_ids: [TEXT, VOICE, NEWS, OTHER_TEXT] }), paired)),
      ["fwd_channel_ids[1]", "fwd_channel_ids[3]"]
    )
  })

  it("role_mentions and public_mentions: unknown roles at their index", () => {
    assert.deepStrictEqual(
      paths(validateForm(input({ role_mentions: [OTHER_ROLE, ROLE], public_mentions: [ROLE, "1"] }), paired)),
      ["role_mentions[0]", "public_mentions[1]"]
    )
  })

  it("taskboard_board with the integration on: a real board of the paired team", () => {
    assert.deepStrictEqual(validateForm(input({ taskboard_integration: true, taskboard_board: "b-2" }), paired), [])
    for (const board of ["0", "-1", "unknown"]) {
      assert.deepStrictEqual(paths(validateForm(input({ taskboard_integration: true, taskboard_board: board }), paired)), ["taskboard_board"])
    }
    assert.deepStrictEqual(paths(validateForm(input({ taskboard_integration: true }), paired)), ["taskboard_board"])
    const noTeam = validateForm(input({ taskboard_integration: true, taskboard_board: "b-1" }), unpaired)
    assert.deepStrictEqual(paths(noTeam), ["taskboard_board"])
    assert.match(noTeam[0]!.message, /no paired task-board team|paired task-board team/)
  })

  it("taskboard_board with the integration off: 0, -1 or a real board; an unknown board is refused", () => {
    for (const board of ["0", "-1", "b-1"]) assert.deepStrictEqual(validateForm(input({ taskboard_board: board }), paired), [])
    assert.deepStrictEqual(validateForm(input({ taskboard_board: "-1" }), unpaired), [])
    assert.deepStrictEqual(paths(validateForm(input({ taskboard_board: "b-1" }), unpaired)), ["taskboard_board"])
    assert.deepStrictEqual(paths(validateForm(input({ taskboard_board: "nope" }), paired)), ["taskboard_board"])
  })

  it("workflow_id of a PATCH body must match the path when present", () => {
    const patch = { ...paired, formId: 12 }
    assert.deepStrictEqual(validateForm(input({ workflow_id: 12 }), patch), [])
    assert.deepStrictEqual(validateForm(input({}), patch), [])
    assert.deepStrictEqual(validateForm(input({ workflow_id: null }), patch), [])
    assert.deepStrictEqual(paths(validateForm(input({ workflow_id: 13 }), patch)), ["workflow_id"])
    assert.deepStrictEqual(paths(validateForm(input({ workflow_id: "abc" }), patch)), ["workflow_id"])
    // POST: the read-only workflow_id is ignored.
    assert.deepStrictEqual(validateForm(input({ workflow_id: 13 }), paired), [])
  })

  it("lists every problem together", () => {
    const problems = validateForm(input({
      workflow_id: 99,
      channel_id: VOICE,
      fwd_channel_ids: [OTHER_TEXT],
      role_mentions: [OTHER_ROLE],
      public_mentions: ["2"],
      taskboard_integration: true,
      taskboard_board: "0"
    }), { ...paired, formId: 1 })
    assert.deepStrictEqual(paths(problems), [
      "workflow_id", "channel_id", "fwd_channel_ids[0]", "role_mentions[0]", "public_mentions[0]", "taskboard_board"
    ])
    for (const p of problems) assert.isString(p.message)
  })
})

/** The structural rules are the FormInput schema's; each failure is reported at its own path. */
describe("FormInput structural rules", () => {
  const issuePaths = (body: unknown) =>
    Schema.decodeUnknownEffect(FormInput)(body, { errors: "all" }).pipe(
      Effect.flip,
      Effect.map((e) => SchemaIssue.makeFormatterStandardSchemaV1()(e.issue).issues.map((i) => formatPath(i.path ?? [])))
    )
  const message = (s: Record<string, unknown>) => ({ type: "message", string: "q", ...s })

  it.effect("each rule fails at its path, and all are listed together", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<[unknown, string]> = [
        [{ title: "" }, "title"],
        [{ title: "x".repeat(257) }, "title"],
        [{ title: "t", color_hex: "green" }, "color_hex"],
        [{ title: "t", steps: Array.from({ length: 26 }, () => message({})) }, "steps"],
        [{ title: "t", steps: [message({ string: "" })] }, "steps[0].string"],
        [{ title: "t", steps: [message({ string: "x".repeat(2001) })] }, "steps[0].string"],
        [{ title: "t", steps: [message({}), message({ alias: "a".repeat(257) })] }, "steps[1].alias"],
        [{ title: "t", steps: [message({ answers_validation: Array.from({ length: 26 }, () => "a") })] }, "steps[0].answers_validation"],
        [{ title: "t", steps: [message({ answers_validation: ["x".repeat(101)] })] }, "steps[0].answers_validation[0]"],
        [{ title: "t", steps: [{ type: "reaction", string: "q" }] }, "steps[0].answers_validation"],
        [{ title: "t", steps: [{ type: "reaction", string: "q", answers_validation: Array.from({ length: 21 }, () => "a") }] }, "steps[0].answers_validation"],
        [{ title: "t", steps: [message({}), message({}), message({ char_limit: [0, 10] })] }, "steps[2].char_limit"],
        [{ title: "t", steps: [message({ char_limit: [10, 5] })] }, "steps[0].char_limit"],
        [{ title: "t", steps: [message({ char_limit: [1, 2001] })] }, "steps[0].char_limit"],
        [{ title: "t", steps: [message({ char_limit: [1] })] }, "steps[0].char_limit[1]"],
        [{ title: "t", steps: [message({ taskboard_mapping: "Card" })] }, "steps[0].taskboard_mapping"],
        [{ title: "t", steps: [{ type: "poll", string: "q" }] }, "steps[0].type"],
        [{ title: "t", workflow_live: true }, "channel_id"],
        [{ title: "t", taskboard_integration: true, steps: [message({ taskboard_mapping: "Label" })] }, "steps"],
        [{ title: "t", channel_id: "general" }, "channel_id"]
      ]
      for (const [body, path] of cases) {
        const found = yield* issuePaths(body)
        assert.include(found, path, JSON.stringify(body))
      }
      const all = yield* issuePaths({ title: "", color_hex: "x", steps: [message({ char_limit: [0, 1] }), { type: "reaction", string: "" }] })
      assert.includeMembers(all, ["title", "color_hex", "steps[0].char_limit", "steps[1].string"])
    }))
})
