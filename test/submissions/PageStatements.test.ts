/**
 * An interaction's reads are one statement with its id's record (SubmissionsRepo `open*`,
 * forms-runtime.md §1, §3), through signed HTTP: every step of a form sent twice with the same id —
 * the second is "already handled" and changes nothing; a page's submit refused for another member's
 * draft, another server, a closed form and an expired draft (the draft unchanged, or ended when expired).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BOT1_ID, S1_ID, S2_ID } from "../../src/sandbox/seed/Ids.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, carol, createForm, member, updateForm } from "./FlowHelpers.ts"
import { buttonsOf, filled, inputsOf, interaction, send, waitForKeys } from "./InteractionClient.ts"
import type { Answer, As } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import type { Signer } from "./InteractionSigner.ts"

const ALREADY = "This interaction was already handled."

/** Page 1 of the seven-step form (FlowHelpers.sevenSteps), its validation word given. */
const page1 = (modal: Answer) => {
  const [a, b, c, d, e] = inputsOf(modal).map((i) => i.input.custom_id!)
  return { [a!]: "Bob", [b!]: "33", [c!]: "yes", [d!]: "UTC", [e!]: "I like forms a lot" }
}
const page2 = (modal: Answer) => {
  const [colour, project] = inputsOf(modal).map((i) => i.input.custom_id!)
  return { [colour!]: ["0"], [project!]: "A gateway" }
}

/** Sends one interaction twice with the same id: the first answer; the second must be "already handled". */
const twice = (signer: Signer, as: As, type: number, data: unknown, extra: Record<string, unknown> = {}, guild = S1_ID) =>
  Effect.gen(function*() {
    const body = interaction(BOT1_ID, guild, as, type, data, extra)
    const first = yield* send(BOT1_ID, body, { signer })
    const again = yield* send(BOT1_ID, body, { signer })
    assert.strictEqual(first.status, 200)
    assert.strictEqual(again.status, 200)
    assert.strictEqual(again.body.data?.content, ALREADY)
    assert.strictEqual(again.body.data?.flags, 64)
    return first.body
  })

const draftsOf = (formId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; user_id: string; page: number }>`SELECT id, user_id, page FROM form_drafts WHERE workflow_id = ${formId} ORDER BY id`)

const draftIdOf = (modal: Answer) => modal.data!.custom_id!.split(":")[2]!

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(
    `an interaction's reads in one statement, on ${kind}`,
    (it) => {
      it.effect("every step sent twice with its id: the second is already handled and changes nothing", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Replayed" })
          const repo = yield* SubmissionsRepo
          const list = yield* twice(signer, bob, 2, { id: "1", name: "submit", type: 1 })
          assert.include(JSON.stringify(list), String(formId))

          const modal = yield* twice(signer, bob, 3, { custom_id: "f:pick", component_type: 3, values: [String(formId)] }, { message: { id: "1" } })
          assert.strictEqual(modal.data?.title, "Replayed (1/2)")
          // One draft, the one the first start made: the replay did not start another.
          assert.deepStrictEqual((yield* draftsOf(formId)).map((d) => [d.id, d.page]), [[draftIdOf(modal), 0]])

          const saved = yield* twice(signer, bob, 5, { custom_id: modal.data!.custom_id, components: filled(modal, page1(modal)) })
          assert.strictEqual(saved.data?.content, "Page 1 of 2 saved.")
          const afterPage1 = yield* repo.draft(draftIdOf(modal))
          assert.strictEqual(afterPage1?.page, 1)
          assert.deepStrictEqual(Object.values(afterPage1?.answers ?? {}), Object.values(page1(modal)))

          const second = yield* twice(signer, bob, 3, { custom_id: buttonsOf(saved).get("Continue"), component_type: 2 }, { message: { id: "2" } })
          assert.strictEqual(second.data?.title, "Replayed (2/2)")
          assert.strictEqual((yield* repo.draft(draftIdOf(modal)))?.page, 1)

          const done = yield* twice(signer, bob, 5, { custom_id: second.data!.custom_id, components: filled(second, page2(second)) })
          assert.include(done.data?.content, "Submitted")
          const { submissions, total } = yield* repo.list(formId, { offset: 0, limit: 10 })
          assert.strictEqual(total, 1)
          const effects = (yield* repo.get(submissions[0]!.id))!.effects
          assert.deepStrictEqual(effects.map((e) => e.kind), ["review_message"])
          assert.deepStrictEqual(yield* draftsOf(formId), [])
        }))

      it.effect("a page's submit refused: another member's draft, another server, a closed form; an expired draft ends", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Guarded" })
          const repo = yield* SubmissionsRepo
          const asBob = member(signer, bob)
          const modal = yield* asBob.pick(formId)
          const draftId = draftIdOf(modal)
          const unchanged = Effect.gen(function*() {
            const draft = yield* repo.draft(draftId)
            assert.strictEqual(draft?.page, 0)
            assert.deepStrictEqual(draft?.answers, {})
            assert.strictEqual(draft?.userId, bob.userId)
          })

          const foreign = yield* member(signer, carol).submit(modal, page1(modal))
          assert.strictEqual(foreign.data?.content, "This form was started by someone else: use /submit to start your own.")
          yield* unchanged

          // The draft's form is not this server's: as if it were gone.
          const elsewhere = yield* twice(signer, bob, 5, { custom_id: modal.data!.custom_id, components: filled(modal, page1(modal)) }, {}, S2_ID)
          assert.strictEqual(elsewhere.data?.content, "This form no longer exists.")
          yield* unchanged

          yield* updateForm(formId, { title: "Guarded", workflow_live: false })
          const closed = yield* asBob.submit(modal, page1(modal))
          assert.strictEqual(closed.data?.content, "This form is closed.")
          yield* unchanged
          yield* updateForm(formId, { title: "Guarded", workflow_live: true })
          const saved = yield* asBob.submit(modal, page1(modal))
          assert.strictEqual(saved.data?.content, "Page 1 of 2 saved.")

          const second = yield* asBob.click(buttonsOf(saved).get("Continue")!)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE form_drafts SET expires_at = now() - interval '1 second' WHERE id = ${draftId}`
          const expired = yield* asBob.submit(second, page2(second))
          assert.strictEqual(expired.data?.content, "This form expired — start again.")
          assert.deepStrictEqual(yield* draftsOf(formId), [])
          assert.strictEqual((yield* repo.list(formId, { offset: 0, limit: 10 })).total, 0)
        }))
    }
  )
}
