import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { checkFormBody, validateForm } from "../../src/services/forms/FormValidation.ts"
import type { FormContext } from "../../src/services/forms/FormValidation.ts"
import { access, BOARDS, CATEGORY, input, NEWS, OTHER_ROLE, OTHER_TEXT, ROLE, ROLE2, TEXT, VOICE } from "./FormFixtures.ts"

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
    // Board 0 exists only with a paired team (decisions.md "Forms"): without one only -1.
    const zero = validateForm(input({ taskboard_board: "0" }), unpaired)
    assert.deepStrictEqual(paths(zero), ["taskboard_board"])
    assert.match(zero[0]!.message, /-1/)
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

/** checkFormBody: every rule at once on the body as sent, each failure at its own path. */
describe("checkFormBody", () => {
  const problemsOf = (body: unknown, context: FormContext = paired) => {
    const r = checkFormBody(body, context)
    return Result.isFailure(r) ? r.failure : []
  }
  const pathsOf = (body: unknown, context: FormContext = paired) => paths(problemsOf(body, context))
  const message = (s: Record<string, unknown>) => ({ type: "message", string: "q", ...s })

  it("each rule fails at its path", () => {
    const cases: ReadonlyArray<[unknown, string]> = [
      [{}, "title"],
      [{ title: "" }, "title"],
      [{ title: "x".repeat(257) }, "title"],
      [{ title: 5 }, "title"],
      [{ title: "t", color_hex: "green" }, "color_hex"],
      [{ title: "t", workflow_live: "yes" }, "workflow_live"],
      [{ title: "t", fwd_channel_ids: "x" }, "fwd_channel_ids"],
      [{ title: "t", fwd_channel_ids: Array.from({ length: 26 }, () => TEXT) }, "fwd_channel_ids"],
      [{ title: "t", taskboard_board: 3 }, "taskboard_board"],
      [{ title: "t", steps: {} }, "steps"],
      [{ title: "t", steps: ["x"] }, "steps[0]"],
      [{ title: "t", steps: [{ string: "q" }] }, "steps[0].type"],
      [{ title: "t", steps: Array.from({ length: 26 }, () => message({})) }, "steps"],
      [{ title: "t", steps: [message({ string: "" })] }, "steps[0].string"],
      [{ title: "t", steps: [message({ string: "x".repeat(2001) })] }, "steps[0].string"],
      [{ title: "t", steps: [message({}), message({ alias: "a".repeat(257) })] }, "steps[1].alias"],
      [{ title: "t", steps: [message({ alias: 5 })] }, "steps[0].alias"],
      [{ title: "t", steps: [message({ answers_validation: Array.from({ length: 26 }, () => "a") })] }, "steps[0].answers_validation"],
      [{ title: "t", steps: [message({ answers_validation: ["x".repeat(101)] })] }, "steps[0].answers_validation[0]"],
      [{ title: "t", steps: [{ type: "reaction", string: "q" }] }, "steps[0].answers_validation"],
      [{ title: "t", steps: [{ type: "reaction", string: "q", answers_validation: Array.from({ length: 21 }, () => "a") }] }, "steps[0].answers_validation"],
      [{ title: "t", steps: [message({}), message({}), message({ char_limit: [0, 10] })] }, "steps[2].char_limit"],
      [{ title: "t", steps: [message({ char_limit: [10, 5] })] }, "steps[0].char_limit"],
      [{ title: "t", steps: [message({ char_limit: [1, 2001] })] }, "steps[0].char_limit"],
      [{ title: "t", steps: [message({ char_limit: [1] })] }, "steps[0].char_limit[1]"],
      [{ title: "t", steps: [message({ char_limit: [1, 2, 3] })] }, "steps[0].char_limit[2]"],
      [{ title: "t", steps: [message({ char_limit: [1.5, 2] })] }, "steps[0].char_limit[0]"],
      [{ title: "t", steps: [message({ taskboard_mapping: "Card" })] }, "steps[0].taskboard_mapping"],
      [{ title: "t", steps: [{ type: "poll", string: "q" }] }, "steps[0].type"],
      [{ title: "t", workflow_live: true }, "channel_id"],
      [{ title: "t", workflow_live: true, channel_id: null }, "channel_id"],
      [{ title: "t", taskboard_integration: true, taskboard_board: "b-1", steps: [message({ taskboard_mapping: "Label" })] }, "steps"],
      [{ title: "t", channel_id: "general" }, "channel_id"],
      [{ title: "t", channel_id: VOICE }, "channel_id"]
    ]
    for (const [body, path] of cases) assert.deepStrictEqual(pathsOf(body), [path], JSON.stringify(body))
  })

  it("a valid body decodes; unset alias and mapping may be null, absent or \"\"", () => {
    const r = checkFormBody({
      title: "😀".repeat(256),
      channel_id: TEXT,
      workflow_live: true,
      steps: [message({ alias: null, taskboard_mapping: null }), message({ alias: "", taskboard_mapping: "" }), message({ string: "😀".repeat(2000) })]
    }, paired)
    assert.isTrue(Result.isSuccess(r), JSON.stringify(r))
  })

  it("schema, cross-field and server problems together in one list (issue #12)", () => {
    // A title problem does not hide the channel and role problems, nor live-without-channel.
    assert.sameMembers(pathsOf({ title: "", channel_id: VOICE, role_mentions: [OTHER_ROLE] }), ["title", "channel_id", "role_mentions[0]"])
    assert.sameMembers(pathsOf({ title: "", workflow_live: true }), ["title", "channel_id"])
    // A malformed element does not hide the server problems of the well-formed ones.
    assert.sameMembers(pathsOf({ title: "t", fwd_channel_ids: [VOICE, 5, TEXT, OTHER_TEXT], public_mentions: [1, OTHER_ROLE] }), [
      "fwd_channel_ids[0]", "fwd_channel_ids[1]", "fwd_channel_ids[3]", "public_mentions[0]", "public_mentions[1]"
    ])
    // A broken Title step still counts as the Title step; a malformed integration flag judges no board.
    assert.sameMembers(pathsOf({ title: "t", taskboard_integration: true, taskboard_board: "b-1", steps: [message({ string: "", taskboard_mapping: "Title" })] }), ["steps[0].string"])
    assert.sameMembers(pathsOf({ title: "t", taskboard_integration: "yes", taskboard_board: "b-1" }), ["taskboard_integration"])
    assert.sameMembers(pathsOf({ title: 1, taskboard_board: "0" }, unpaired), ["title", "taskboard_board"])
    assert.sameMembers(pathsOf({ title: "t", workflow_id: "x", steps: [{ type: "poll" }] }, { ...paired, formId: 3 }), [
      "workflow_id", "steps[0].type", "steps[0].string"
    ])
  })

  it("messages name the field and say what it expects in words, never a schema name", () => {
    const problems = problemsOf({
      title: 5,
      workflow_live: "yes",
      fwd_channel_ids: "x",
      color_hex: "#12345",
      taskboard_board: 3,
      steps: [{ type: "poll", alias: 5, taskboard_mapping: "Card", char_limit: [1] }, "x"]
    })
    const byPath = Object.fromEntries(problems.map((p) => [p.additionalProperties?.["path"], p.message]))
    assert.deepStrictEqual(byPath, {
      title: "title: expected a text of 1 to 256 characters",
      workflow_live: "workflow_live: expected true or false",
      fwd_channel_ids: "fwd_channel_ids: expected a list of channel ids",
      color_hex: "color_hex: expected a colour as #rrggbb (six hexadecimal digits)",
      taskboard_board: "taskboard_board: expected a board id as a string (see taskboardBoards)",
      "steps[0].type": `steps[0].type: expected "message" or "reaction"`,
      "steps[0].string": "steps[0].string: is required",
      "steps[0].alias": "steps[0].alias: expected a text of at most 256 characters, or null (unset)",
      "steps[0].taskboard_mapping": `steps[0].taskboard_mapping: expected one of Description, Title, List, Label, Attachment, Private, or "" (unset)`,
      "steps[0].char_limit[1]": "steps[0].char_limit[1]: is required",
      "steps[1]": "steps[1]: expected a step: an object with type and string"
    })
    for (const p of problems) {
      assert.notMatch(p.message, /FormInput|StepInput|Step\b|Expected [a-z]+ \|/, p.message)
      assert.deepStrictEqual(Object.keys(p.additionalProperties ?? {}).sort(), ["in", "path"])
    }
    assert.match(problemsOf({ title: "x".repeat(257) })[0]!.message, /^title: expected a text of 1 to 256 characters/)
    assert.match(problemsOf([])[0]!.message, /must be a JSON object/)
  })
})
