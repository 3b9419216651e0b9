/**
 * Form validation cases issue #19's mutation run found unpinned (decisions.md "Errors" and "Forms"):
 * what each problem carries besides its path (`in: "payload"`, a message naming the rule), a body
 * that is not an object, a tuple with one element too many, the Title rule over several steps or
 * none, and a schema failure at the root (what the panel shows for a body that is not an object).
 */
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { FormInput } from "../../src/domain/forms/Form.ts"
import { issueProblems } from "../../src/domain/forms/FormProblems.ts"
import { checkFormBody } from "../../src/services/forms/FormValidation.ts"
import type { FormContext } from "../../src/services/forms/FormValidation.ts"
import { access, BOARDS, OTHER_ROLE, TEXT } from "./FormFixtures.ts"

const server = access()
const paired: FormContext = { channels: server.channels, roles: server.roles, boards: BOARDS }

const problemsOf = (body: unknown, context: FormContext = paired) => {
  const r = checkFormBody(body, context)
  return Result.isFailure(r) ? r.failure : []
}
const message = (s: Record<string, unknown>) => ({ type: "message", string: "q", ...s })

describe("checkFormBody: what each problem says", () => {
  it("every problem of a body carries its path and in: \"payload\", nothing else", () => {
    const problems = problemsOf({ title: "", color_hex: "red", role_mentions: [OTHER_ROLE], workflow_live: true })
    assert.strictEqual(problems.length, 4)
    for (const p of problems) {
      assert.deepStrictEqual(p.additionalProperties, { path: p.additionalProperties?.["path"], in: "payload" })
      assert.isTrue(p.message.startsWith(`${p.additionalProperties?.["path"]}: `), p.message)
    }
  })

  it("a body that is not a JSON object is one problem without a path, whatever it is", () => {
    for (const body of [null, "a form", 5, true, undefined, [{ title: "t" }]]) {
      const problems = problemsOf(body)
      assert.strictEqual(problems.length, 1, JSON.stringify(body))
      assert.match(problems[0]!.message, /must be a JSON object/)
      assert.isUndefined(problems[0]!.additionalProperties)
    }
  })

  it("a char_limit with a third element: that element is one too many", () => {
    assert.deepStrictEqual(problemsOf({ title: "t", steps: [message({ char_limit: [1, 2, 3] })] }).map((p) => p.message), [
      "steps[0].char_limit[2]: is one element too many"
    ])
  })

  it("a live form without a channel: the message says channel_id is required while workflow_live is true", () => {
    const [p, ...rest] = problemsOf({ title: "t", workflow_live: true })
    assert.deepStrictEqual(rest, [])
    assert.match(p!.message, /^channel_id: .*required.*workflow_live/)
  })

  it("a role of another server: the message names the role", () => {
    const [p] = problemsOf({ title: "t", public_mentions: [OTHER_ROLE] })
    assert.match(p!.message, new RegExp(`^public_mentions\\[0\\]: .*role ${OTHER_ROLE}.*not a role of this server`))
  })

  it("taskboard_board with the integration on: the message asks for one of the server's boards", () => {
    const [p] = problemsOf({ title: "t", taskboard_integration: true, taskboard_board: "nope", steps: [message({ taskboard_mapping: "Title" })] })
    assert.match(p!.message, /^taskboard_board: .*taskboard_integration.*task boards/)
  })

  it("an unknown board with the integration off: the message names the board", () => {
    const [p] = problemsOf({ title: "t", taskboard_board: "b-9" })
    assert.match(p!.message, /^taskboard_board: .*task board b-9 is not a task board/)
  })
})

describe("checkFormBody: the Title step of the task-board integration", () => {
  const on = { title: "t", taskboard_integration: true, taskboard_board: "b-1" }

  it("one Title step among others is enough, wherever it is", () => {
    for (const steps of [
      [message({ taskboard_mapping: "Label" }), message({ taskboard_mapping: "Title" })],
      [message({ taskboard_mapping: "Title" }), message({}), message({ taskboard_mapping: "" })]
    ]) {
      assert.isTrue(Result.isSuccess(checkFormBody({ ...on, steps }, paired)), JSON.stringify(steps))
    }
  })

  it("no steps at all (absent or empty): the Title rule fails at steps, with a message that says so", () => {
    for (const body of [on, { ...on, steps: [] }]) {
      const problems = problemsOf(body)
      assert.deepStrictEqual(problems.map((p) => p.additionalProperties?.["path"]), ["steps"], JSON.stringify(body))
      assert.match(problems[0]!.message, /^steps: .*taskboard_mapping Title/)
    }
  })

  it("steps that are not a list: only their own schema problem, and no crash on a step that is not an object", () => {
    for (const steps of [{}, "Title", 3]) {
      assert.deepStrictEqual(problemsOf({ ...on, steps }).map((p) => p.message), ["steps: expected a list of steps"], JSON.stringify(steps))
    }
    assert.deepStrictEqual(
      problemsOf({ ...on, steps: [null, message({ taskboard_mapping: "Title" })] }).map((p) => p.additionalProperties?.["path"]),
      ["steps[0]"]
    )
  })
})

describe("issueProblems: a schema failure as the panel shows it", () => {
  it("a failure at the root has no path and says the body is invalid", () => {
    const decoded = Schema.decodeUnknownResult(FormInput)("not a form")
    assert.isTrue(Result.isFailure(decoded))
    if (Result.isFailure(decoded)) {
      assert.deepStrictEqual(issueProblems(decoded.failure.issue), [
        { message: "The body is invalid: expected a JSON object: the form" }
      ])
    }
  })

  it("a failure in a field has its path", () => {
    const decoded = Schema.decodeUnknownResult(FormInput)({ title: "t", channel_id: "general", fwd_channel_ids: [TEXT, "x"] })
    if (Result.isFailure(decoded)) {
      assert.deepStrictEqual(issueProblems(decoded.failure.issue).map((p) => p.additionalProperties?.["path"]), ["channel_id"])
    } else assert.fail("decoded")
  })
})
