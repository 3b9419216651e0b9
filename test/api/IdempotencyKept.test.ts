/**
 * Which answers a key keeps (issue #30, docs/choices.md): a 2xx and most 4xx are kept and replayed
 * with `Idempotent-Replayed: true`; a 409 (like 408 and 429) is not, so a retry with its key runs
 * again. Shown on a review from the panel, whose second review is a 409 naming the reviewer; and the
 * 422 of a key used for another request, word for word. PGlite and PostgreSQL.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ALICE_ID, BOB_ID } from "../../src/sandbox/seed/Ids.ts"
import { tokenOf } from "../utils/TestApp.ts"
import { send } from "./IdempotencyFixtures.ts"
import { createForm, FORMS, seedSubmission, submissionsOverHttp } from "./SubmissionsHttpFixtures.ts"

/** The review route of a new pending submission (Bob's) of a new form titled `title`. */
const reviewPath = (title: string) =>
  Effect.gen(function*() {
    const formId = yield* createForm(yield* tokenOf(ALICE_ID), { title })
    const id = yield* seedSubmission(formId, { id: BOB_ID, name: "Bob" }, ["Bob", "I like it", "bob@example.org"])
    return `${FORMS}/${formId}/submissions/${id}/review`
  })

submissionsOverHttp("idempotency keys: what is kept", (it) => {
  it.effect("a review's 200 is kept and replayed; the 409 of a second review is not kept", () =>
    Effect.gen(function*() {
      const path = yield* reviewPath("Kept answers")
      const first = randomUUID()
      const passed = yield* send("POST", path, first, { decision: "pass" })
      assert.strictEqual(passed.status, 200, passed.text)
      assert.isNull(passed.replayed)

      const second = randomUUID()
      const refused = yield* send("POST", path, second, { decision: "drop" })
      assert.strictEqual(refused.status, 409, refused.text)
      assert.isNull(refused.replayed)
      // Not kept: the retry runs again (and is refused again, not replayed).
      const refusedAgain = yield* send("POST", path, second, { decision: "drop" })
      assert.strictEqual(refusedAgain.status, 409, refusedAgain.text)
      assert.isNull(refusedAgain.replayed)
      assert.strictEqual(refusedAgain.type, "application/json")

      // The first key's answer is kept: replayed as it was, with its content type.
      const replayed = yield* send("POST", path, first, { decision: "pass" })
      assert.strictEqual(replayed.status, 200)
      assert.strictEqual(replayed.replayed, "true")
      assert.strictEqual(replayed.text, passed.text)
      assert.strictEqual(replayed.type, passed.type)
    }))

  // (A key in use, the 409, word for word: IdempotencyHttp's ten at once.)
  it.effect("another request with a used key: refused in the envelope, word for word, naming the header", () =>
    Effect.gen(function*() {
      const path = yield* reviewPath("Refusals")
      const key = randomUUID()
      assert.strictEqual((yield* send("POST", path, key, { decision: "pass" })).status, 200)
      const other = yield* send("POST", path, key, { decision: "drop" })
      assert.strictEqual(other.status, 422, other.text)
      assert.deepStrictEqual(JSON.parse(other.text), {
        errors: [{
          code: "Unprocessable Content",
          message: "This Idempotency-Key was used for another request (method, path or body) in the last 24 hours: use a new key for a new request.",
          additionalProperties: { header: "Idempotency-Key" }
        }]
      })
    }))
})
