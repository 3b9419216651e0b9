/**
 * The input schemas of a form (src/domain/forms/Form.ts, StepType..FormInput) where issue #19's mutation
 * run found them unpinned: the limits of decisions.md "Forms" at both sides of each bound, and the
 * message of each failure, which "names the field and what it expects in words" (decisions.md
 * "Errors"); and the name the OpenAPI document gives the body.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { OpenApi } from "effect/http-api"
import { Api } from "../../src/http/contract/Api.ts"
import { checkFormBody } from "../../src/services/forms/FormValidation.ts"
import type { FormContext } from "../../src/services/forms/FormValidation.ts"
import { access, BOARDS, ROLE, TEXT } from "./FormFixtures.ts"

const server = access()
const paired: FormContext = { channels: server.channels, roles: server.roles, boards: BOARDS }

const messagesOf = (body: Record<string, unknown>) => {
  const r = checkFormBody({ title: "t", ...body }, paired)
  return Result.isFailure(r) ? r.failure.map((p) => p.message) : []
}
const accepted = (body: Record<string, unknown>) => {
  const r = checkFormBody({ title: "t", ...body }, paired)
  assert.isTrue(Result.isSuccess(r), `${JSON.stringify(body)}: ${JSON.stringify(r)}`)
}
const message = (s: Record<string, unknown>) => ({ type: "message", string: "q", ...s })
const reaction = (answers: number) => ({ type: "reaction", string: "q", answers_validation: Array.from({ length: answers }, (_, i) => `a${i}`) })
const times = <A>(n: number, a: A) => Array.from({ length: n }, () => a)

describe("color_hex: #rrggbb", () => {
  it("six hexadecimal digits after #, either case, are accepted", () => {
    for (const color_hex of ["#00d084", "#ABCDEF", "#a1B2c3"]) accepted({ color_hex })
  })

  it("anything else is refused at color_hex, saying what a colour looks like", () => {
    for (const color_hex of ["x#123456", "#1234567", "#12345", "#12345g", "123456", "#", 5]) {
      assert.deepStrictEqual(messagesOf({ color_hex }), ["color_hex: expected a colour as #rrggbb (six hexadecimal digits)"], JSON.stringify(color_hex))
    }
  })
})

describe("char_limit: [min, max] with 0 < min <= max <= 2000", () => {
  it("the bounds themselves are accepted: min = max, max = 2000, min = 1", () => {
    accepted({ steps: [message({ char_limit: [5, 5] }), message({ char_limit: [1, 2000] }), message({ char_limit: [2000, 2000] })] })
  })

  it("out of bounds, not a pair, not whole numbers: each with its message", () => {
    assert.deepStrictEqual(messagesOf({ steps: [message({ char_limit: [6, 5] })] }), [
      "steps[0].char_limit: expected [min, max] with 0 < min <= max <= 2000"
    ])
    assert.deepStrictEqual(messagesOf({ steps: [message({ char_limit: [1, 2001] })] }), [
      "steps[0].char_limit: expected [min, max] with 0 < min <= max <= 2000"
    ])
    assert.deepStrictEqual(messagesOf({ steps: [message({ char_limit: "10-20" })] }), [
      "steps[0].char_limit: expected [min, max]: two whole numbers with 0 < min <= max <= 2000"
    ])
    assert.deepStrictEqual(messagesOf({ steps: [message({ char_limit: [1.5, 2] })] }), ["steps[0].char_limit[0]: expected a whole number"])
    assert.deepStrictEqual(messagesOf({ steps: [message({ char_limit: [1, 2.5] })] }), ["steps[0].char_limit[1]: expected a whole number"])
    // Not a number at all: the same words, not the schema library's default "Expected number".
    assert.deepStrictEqual(messagesOf({ steps: [message({ char_limit: [1, "2"] })] }), ["steps[0].char_limit[1]: expected a whole number"])
    assert.deepStrictEqual(messagesOf({ steps: [message({ char_limit: [null, 2] })] }), ["steps[0].char_limit[0]: expected a whole number"])
  })
})

describe("a reaction step: 1 to 20 answers", () => {
  it("1 and 20 answers are accepted", () => {
    accepted({ steps: [reaction(1), reaction(20)] })
  })

  it("0 and 21 are refused at answers_validation, saying how many it needs", () => {
    for (const n of [0, 21]) {
      assert.deepStrictEqual(messagesOf({ steps: [reaction(n)] }), ["steps[0].answers_validation: a reaction step needs 1 to 20 answers"], String(n))
    }
  })
})

describe("the lists: each says what it holds and how many it may", () => {
  it("a list that is not a list names its elements", () => {
    assert.deepStrictEqual(messagesOf({ fwd_channel_ids: TEXT }), ["fwd_channel_ids: expected a list of channel ids"])
    assert.deepStrictEqual(messagesOf({ role_mentions: ROLE }), ["role_mentions: expected a list of role ids"])
    assert.deepStrictEqual(messagesOf({ public_mentions: ROLE }), ["public_mentions: expected a list of role ids"])
    assert.deepStrictEqual(messagesOf({ steps: message({}) }), ["steps: expected a list of steps"])
    assert.deepStrictEqual(messagesOf({ steps: [message({ answers_validation: "yes" })] }), ["steps[0].answers_validation: expected a list of answers"])
  })

  it("one element over the limit says the limit and the elements", () => {
    assert.deepStrictEqual(messagesOf({ role_mentions: times(26, ROLE) }), ["role_mentions: expected at most 25 role ids"])
    assert.deepStrictEqual(messagesOf({ public_mentions: times(26, ROLE) }), ["public_mentions: expected at most 25 role ids"])
    assert.deepStrictEqual(messagesOf({ fwd_channel_ids: times(26, TEXT) }), ["fwd_channel_ids: expected at most 25 channel ids"])
    assert.deepStrictEqual(messagesOf({ steps: times(26, message({})) }), ["steps: expected at most 25 steps"])
    assert.deepStrictEqual(messagesOf({ steps: [message({ answers_validation: times(26, "a") })] }), [
      "steps[0].answers_validation: expected at most 25 answers"
    ])
    accepted({ role_mentions: times(25, ROLE), fwd_channel_ids: times(25, TEXT), steps: times(25, message({ answers_validation: times(25, "a") })) })
  })
})

describe("ids: a string of digits", () => {
  it("an element that is not one names what kind of id it should be", () => {
    assert.deepStrictEqual(messagesOf({ fwd_channel_ids: [5, "general"] }), [
      "fwd_channel_ids[0]: expected a channel id (a string of digits)",
      "fwd_channel_ids[1]: expected a channel id (a string of digits)"
    ])
    assert.deepStrictEqual(messagesOf({ role_mentions: [5, "mods"], public_mentions: ["@here"] }), [
      "role_mentions[0]: expected a role id (a string of digits)",
      "role_mentions[1]: expected a role id (a string of digits)",
      "public_mentions[0]: expected a role id (a string of digits)"
    ])
  })

  it("channel_id may also be null, and says so when it is neither; a string that is no id is told what an id is", () => {
    for (const channel_id of [5, false, ["1"]]) {
      assert.deepStrictEqual(messagesOf({ channel_id }), ["channel_id: expected a channel id (a string of digits) or null"], JSON.stringify(channel_id))
    }
    assert.deepStrictEqual(messagesOf({ channel_id: "general" }), ["channel_id: expected a channel id (a string of digits)"])
  })
})

describe("taskboard_mapping", () => {
  it("a value of the wrong type gets the same message as an unknown option", () => {
    for (const taskboard_mapping of [5, true, ["Title"], "title"]) {
      assert.deepStrictEqual(messagesOf({ steps: [message({ taskboard_mapping })] }), [
        `steps[0].taskboard_mapping: expected one of Description, Title, List, Label, Attachment, Private, or "" (unset)`
      ], JSON.stringify(taskboard_mapping))
    }
  })
})

describe("the body as a whole", () => {
  it("the OpenAPI document names the body of POST and PATCH FormInput", () => {
    const spec = OpenApi.fromApi(Api) as unknown as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } }>>
      components: { schemas: Record<string, unknown> }
    }
    // The form's own routes: not its publications and submissions (forms-runtime.md), which take other bodies.
    const forms = Object.entries(spec.paths).filter(([path]) => /\/forms(\/\{formId\})?$/.test(path))
    const bodies = forms.flatMap(([, ops]) => [ops["post"], ops["patch"]].flatMap((op) => (op?.requestBody ? [op.requestBody] : [])))
    assert.strictEqual(bodies.length, 2)
    for (const body of bodies) assert.strictEqual(body.content["application/json"]?.schema.$ref, "#/components/schemas/FormInput")
    assert.property(spec.components.schemas, "FormInput")
  })
})
