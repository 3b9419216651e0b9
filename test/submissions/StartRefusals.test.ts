/**
 * Starts that are refused (forms-runtime.md §2): a member with a submission awaiting review is told
 * so and nothing is stored; more than 10 starts by one member in a minute → "Slow down" for the rest
 * of that minute, others unaffected. Each test its own members: the start counter is per member.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { createForm, member } from "./FlowHelpers.ts"
import type { Answer } from "./InteractionClient.ts"
import { inputsOf, waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import { twoSteps } from "./PlayerFixtures.ts"

const PENDING = "You already have a submission of this form awaiting review."
const slowedDown = (a: Answer) => {
  assert.strictEqual(a.type, 4, JSON.stringify(a))
  assert.strictEqual(a.data?.flags, 64)
  assert.match(a.data?.content ?? "", /^Slow down/)
}
const fillOnePage = (modal: Answer) => {
  const [name, team] = inputsOf(modal).map((i) => i.input.custom_id!)
  return { [name!]: "Someone", [team!]: ["1"] }
}

/** What is stored of `formId`: all its drafts and submissions, and the member's. */
const storedOf = (formId: number, userId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ drafts: number; mine: number; submissions: number; pending: number; ids: string | null }>`
      SELECT (SELECT count(*)::int FROM form_drafts WHERE workflow_id = ${formId}) AS drafts,
        (SELECT count(*)::int FROM form_drafts WHERE workflow_id = ${formId} AND user_id = ${userId}) AS mine,
        (SELECT count(*)::int FROM form_submissions WHERE workflow_id = ${formId}) AS submissions,
        (SELECT count(*)::int FROM form_submissions WHERE workflow_id = ${formId} AND user_id = ${userId} AND status = 'pending') AS pending,
        (SELECT string_agg(id::text, ',' ORDER BY id) FROM form_submissions WHERE workflow_id = ${formId}) AS ids`
    return row!
  })

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`refused starts, on ${kind}`, (it) => {
    it.effect("a submission awaiting review: the refusal stores no draft and no submission", () =>
      Effect.gen(function*() {
        yield* waitForKeys(signer)
        const formId = yield* createForm({ title: "Once at a time", steps: twoSteps })
        const dana = member(signer, { userId: "100000000000000301", username: "dana" })
        // Another member's draft, so that "no draft" is not read off an empty table.
        const other = member(signer, { userId: "100000000000000302", username: "eve" })
        assert.strictEqual((yield* other.pick(formId)).type, 9)
        const modal = yield* dana.pick(formId)
        assert.include((yield* dana.submit(modal, fillOnePage(modal))).data?.content, "Submitted")

        const before = yield* storedOf(formId, "100000000000000301")
        assert.deepStrictEqual({ drafts: before.drafts, mine: before.mine, submissions: before.submissions, pending: before.pending }, {
          drafts: 1,
          mine: 0,
          submissions: 1,
          pending: 1
        })
        // From the /submit select, and from a published start message's Start button.
        for (const start of [dana.pick(formId), dana.click(`f:start:${formId}`), dana.pick(formId)]) {
          const refused = yield* start
          assert.strictEqual(refused.type, 4, JSON.stringify(refused))
          assert.strictEqual(refused.data?.flags, 64)
          assert.strictEqual(refused.data?.content, PENDING)
        }
        assert.deepStrictEqual(yield* storedOf(formId, "100000000000000301"), before)
      }))

    it.effect("the 11th start in a minute and every later one: Slow down, even after a pause; a paced 11th too; another member starts", () =>
      Effect.gen(function*() {
        yield* waitForKeys(signer)
        const formId = yield* createForm({ title: "Busy", steps: twoSteps })
        const spare = yield* createForm({ title: "Untouched", steps: twoSteps })
        // A paced member: one start now, ten after the pause below (11 starts within ~8 s).
        const paced = member(signer, { userId: "100000000000000321", username: "paced" })
        const startedAt = Date.now()
        assert.strictEqual((yield* paced.pick(formId)).type, 9, "paced start 1")
        const userId = "100000000000000311"
        const eager = member(signer, { userId, username: "eager" })
        for (let i = 0; i < 10; i++) assert.strictEqual((yield* eager.pick(formId)).type, 9, `start ${i + 1}`)
        slowedDown(yield* eager.pick(formId))
        slowedDown(yield* eager.pick(formId))
        slowedDown(yield* eager.click(`f:start:${formId}`))
        // A form not started before: refused too, and nothing stored for it.
        slowedDown(yield* eager.pick(spare))
        assert.strictEqual((yield* storedOf(spare, userId)).mine, 0)
        // Still that minute: a counter that gives a start back every 6 s (Effect's "fixed-window"
        // limiter, or a token bucket) would let these through.
        yield* Effect.sleep("7 seconds")
        slowedDown(yield* eager.pick(formId))
        slowedDown(yield* eager.pick(spare))
        assert.strictEqual((yield* storedOf(spare, userId)).mine, 0)
        for (let i = 2; i <= 10; i++) assert.strictEqual((yield* paced.pick(formId)).type, 9, `paced start ${i}`)
        const eleventh = yield* paced.pick(formId)
        assert.isBelow(Date.now() - startedAt, 50_000, "the 11 starts were within a minute")
        slowedDown(eleventh)
        // Others are not held back.
        const calm = member(signer, { userId: "100000000000000312", username: "calm" })
        assert.strictEqual((yield* calm.pick(formId)).type, 9)
        assert.strictEqual((yield* calm.pick(spare)).type, 9)
      }), 60_000)
  })
}
