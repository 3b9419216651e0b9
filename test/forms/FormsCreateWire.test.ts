/**
 * The answers of POST, GET and PATCH of a form over HTTP, as bytes: each must be status 200,
 * `content-type: application/json`, and exactly the text Schema's encoding of `Form` gives for the
 * same form (keys in the schema's order, nothing more: unknown keys in the request are not echoed).
 * A handler that wrote a form's JSON itself (issue #16 weighed one) would have to pass this.
 */
import { assert, describe } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Form } from "../../src/domain/forms/Form.ts"
import { ALICE_ID, channelId, roleId } from "../../src/sandbox/Seed.ts"
import { formsOverHttp, formsPath, REAL_BOARDS, step } from "../api/FormsHttpFixtures.ts"
import { raw, tokenOf } from "../utils/TestApp.ts"

/** What HttpApi's encoding of the success schema would have written for this form. */
const schemaText = (text: string) => JSON.stringify(Schema.encodeSync(Form)(Schema.decodeUnknownSync(Form)(JSON.parse(text))))

const send = (method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(ALICE_ID)
    const res = yield* raw({
      method,
      token,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
    }, path)
    return { status: res.status, type: res.headers.get("content-type"), text: yield* Effect.promise(() => res.text()) }
  })

const assertFormAnswer = (r: { status: number; type: string | null; text: string }, label: string) => {
  assert.strictEqual(r.status, 200, `${label}: ${r.text}`)
  assert.strictEqual(r.type, "application/json", label)
  assert.strictEqual(r.text, schemaText(r.text), label)
  assert.deepStrictEqual(Object.keys(JSON.parse(r.text)), Object.keys(Form.fields), label)
}

formsOverHttp("answers as bytes", (it) => {
  describe("POST, GET, PATCH", () => {
    it.effect("each answers the form exactly as the schema encodes it", () =>
      Effect.gen(function*() {
        const body = {
          title: "Wire \"bytes\" 😀",
          color_hex: "#ABCDEF",
          channel_id: channelId(1, 2),
          fwd_channel_ids: [channelId(1, 3)],
          role_mentions: [roleId(1, 1)],
          taskboard_integration: true,
          taskboard_board: REAL_BOARDS[0]!.id,
          // A key the schemas do not have is not echoed.
          unknown_key: "dropped",
          steps: [
            step("Name?", { taskboard_mapping: "Title", alias: "name", char_limit: [2, 50] }),
            { type: "reaction", string: "Pick", answers_validation: ["a", "b"], extra: 1 }
          ]
        }
        const created = yield* send("POST", formsPath(), body)
        assertFormAnswer(created, "POST")
        const form = JSON.parse(created.text)
        assert.strictEqual(form.title, body.title)
        assert.strictEqual(form.color_hex, "#abcdef")
        assert.deepStrictEqual(form.steps.map((s: { step_id: number }) => s.step_id), [1, 2])
        assert.deepStrictEqual(form.taskboard_boards.slice(1), REAL_BOARDS)
        assert.notInclude(created.text, "unknown_key")
        assert.notInclude(created.text, "\"extra\"")

        const read = yield* send("GET", `${formsPath()}/${form.workflow_id}`)
        assertFormAnswer(read, "GET")
        assert.strictEqual(read.text, created.text)

        const updated = yield* send("PATCH", `${formsPath()}/${form.workflow_id}`, { ...body, title: "Renamed", steps: [body.steps[0]] })
        assertFormAnswer(updated, "PATCH")
        assert.strictEqual(JSON.parse(updated.text).title, "Renamed")
        assert.deepStrictEqual(JSON.parse(updated.text).steps.map((s: { string: string }) => s.string), ["Name?"])

        assert.strictEqual((yield* send("DELETE", `${formsPath()}/${form.workflow_id}`)).status, 200)
      }))
  })
})
