/**
 * A member fills a form and staff review it, through signed interactions over HTTP (forms-runtime.md
 * §2–§4): a 7-step form on two pages with a validation word fixed, the review message posted by a
 * job, a Pass, the member's DM; a dismissed modal resumed; a closed, an edited and a deleted form.
 * The platform is the sandbox's, mounted in the app: interactions signed with BOT1's own key, the
 * review message and the DM read back from its inboxes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ALICE_ID, BOB_ID } from "../../src/sandbox/seed/Ids.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { alice, bob, carol, createForm, deleteForm, FORMS, member, mod, MODERATORS, REVIEW_CHANNEL, updateForm } from "./FlowHelpers.ts"
import { buttonsOf, inputsOf, waitForKeys } from "./InteractionClient.ts"
import type { Answer } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import { eventuallyEffect, messages, reviewMessage } from "./PlayerFixtures.ts"

const ids = (modal: Answer) => inputsOf(modal).map((i) => i.input.custom_id!)

/** Page 1's answers of the seven-step form, the third one given. */
const page1 = (modal: Answer, third: string) => {
  const [a, b, c, d, e] = ids(modal)
  return { [a!]: "Bob", [b!]: "33", [c!]: third, [d!]: "UTC", [e!]: "I like forms a lot" }
}

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(
    `a form that runs, on ${kind}`,
    (it) => {
      it.effect("a 7-step form on two pages: a validation word fixed, submitted, posted for review, passed, the member told", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm()
          // Bob and the moderator have server nicknames: shown in messages, the audit log names the accounts.
          const asBob = member(signer, { ...bob, nick: "Bobby" })
          const list = yield* asBob.command()
          assert.strictEqual(list.type, 4)
          assert.strictEqual(list.data?.flags, 64)
          const select = list.data?.components?.[0]?.components?.[0]
          assert.strictEqual(select?.type, 3)
          assert.include(select?.options?.map((o) => o.value) ?? [], String(formId))

          const first = yield* asBob.pick(formId)
          assert.strictEqual(first.type, 9)
          assert.strictEqual(first.data?.title, "Staff application (1/2)")
          assert.strictEqual(first.data?.components?.length, 5)
          assert.deepStrictEqual(inputsOf(first).map((i) => [i.label, i.input.type, i.input.style]), [
            ["Your name?", 4, 1], ["Your age?", 4, 1], ["Do you accept the rules?", 4, 1], ["Your timezone?", 4, 1], ["Motivation", 4, 2]
          ])
          assert.strictEqual(inputsOf(first)[4]!.description, "Why do you want to join?")

          // The validation word is missing: nothing saved, the question named, Fix reopens page 1 filled.
          const sql = yield* SqlClient.SqlClient
          const expiry = Effect.map(
            sql<{ at: Date }>`SELECT expires_at AS at FROM form_drafts WHERE workflow_id = ${formId}`,
            (rows) => new Date(rows[0]!.at).getTime()
          )
          const startedExpiry = yield* expiry
          const refused = yield* asBob.submit(first, page1(first, "maybe"))
          assert.strictEqual(yield* expiry, startedExpiry, "a refused page does not push the draft's expiry")
          assert.include(refused.data?.content, "Do you accept the rules?")
          assert.include(refused.data?.content, `"yes"`)
          const fix = yield* asBob.click(buttonsOf(refused).get("Fix")!)
          assert.strictEqual(fix.type, 9)
          assert.deepStrictEqual(inputsOf(fix).map((i) => i.input.value), ["Bob", "33", "maybe", "UTC", "I like forms a lot"])
          const saved = yield* asBob.submit(fix, page1(fix, "Yes, I AGREE"))
          assert.strictEqual(saved.data?.content, "Page 1 of 2 saved.")
          assert.strictEqual(saved.data?.flags, 64)

          const second = yield* asBob.click(buttonsOf(saved).get("Continue")!)
          assert.strictEqual(second.data?.title, "Staff application (2/2)")
          // The long question: a Text Display with its whole text before its Label (two of five).
          assert.deepStrictEqual(second.data?.components?.map((c) => c.type), [18, 10, 18])
          const [colour, project] = ids(second)
          assert.deepStrictEqual(inputsOf(second)[0]!.input.options?.map((o) => o.label), ["Red", "Blue"])
          const done = yield* asBob.submit(second, { [colour!]: ["1"], [project!]: "A bot gateway" })
          assert.strictEqual(done.data?.content, "Submitted — you will get a direct message when it is reviewed")

          // The review message, posted by a job.
          const repo = yield* SubmissionsRepo
          const { submissions } = yield* repo.list(formId, { offset: 0, limit: 10 })
          assert.strictEqual(submissions.length, 1)
          const s = submissions[0]!
          assert.strictEqual(s.answers[String(s.snapshot.steps[5]!.step_id)], "Blue")
          const message = yield* reviewMessage(s.id)
          assert.strictEqual(message.channel_id, REVIEW_CHANNEL)
          assert.strictEqual(message.body.content, `<@&${MODERATORS}>`)
          assert.deepStrictEqual(message.body.allowed_mentions, { parse: [], roles: [MODERATORS] })
          const embed = (message.body.embeds as ReadonlyArray<{ title: string; fields: ReadonlyArray<{ name: string; value: string }> }>)[0]!
          assert.strictEqual(embed.title, "Staff application")
          assert.deepStrictEqual(embed.fields.slice(0, 3).map((f) => f.value), ["Bob", "33", "Yes, I AGREE"])
          const buttons = (message.body.components as ReadonlyArray<{ components: ReadonlyArray<{ label: string; custom_id: string }> }>)[0]!.components
          assert.deepStrictEqual(buttons.map((b) => b.label), ["Pass — low", "Pass — medium", "Pass — high", "Drop"])

          // Bob may not review; a moderator passes it, and the message says so without buttons.
          const notYou = yield* asBob.click(buttons[2]!.custom_id, message.id)
          assert.strictEqual(notYou.data?.content, "You may not review this form's submissions.")
          const passed = yield* member(signer, { ...mod, nick: "Max" }).click(buttons[2]!.custom_id, message.id)
          assert.strictEqual(passed.type, 7)
          assert.strictEqual(passed.data?.content, "Passed by Max — priority high")
          assert.deepStrictEqual(passed.data?.components, [])
          const dm = yield* eventuallyEffect(Effect.map(messages(`dms?user_id=${BOB_ID}`), (ms) => ms[0]))
          assert.deepStrictEqual(dm.body, { content: "Staff application on Sandbox One: accepted", allowed_mentions: { parse: [] } })
          assert.strictEqual((yield* messages(`dms?user_id=${BOB_ID}`)).length, 1)
          const after = yield* repo.get(s.id)
          assert.strictEqual(after?.status, "accepted")
          assert.strictEqual(after?.priority, "high")
          assert.strictEqual(after?.reviewerName, "Max")

          // Audited: received (PUSH, by bob), reviewed (PATCH, by the moderator), by their usernames.
          const audit = yield* sql<{ event_type: string; user_id: string; user_name: string; event_string: string }>`
            SELECT event_type, user_id, user_name, event_string FROM audit_entries WHERE event_string LIKE ${`submission ${s.id} %`} ORDER BY id`
          assert.deepStrictEqual(audit.map((a) => [a.event_type, a.user_id, a.user_name]), [["PUSH", BOB_ID, "bob"], ["PATCH", mod.userId, "mod"]])
          // The submission's detail route shows what bob typed, step by step, from the snapshot.
          const token = yield* tokenOf(ALICE_ID)
          const detail = yield* json(yield* raw({ token }, `${FORMS}/${formId}/submissions/${s.id}`))
          assert.deepStrictEqual(
            (detail.answers as ReadonlyArray<{ question: string; answer: string }>).map((a) => a.answer),
            ["Bob", "33", "Yes, I AGREE", "UTC", "I like forms a lot", "Blue", "A bot gateway"]
          )
          assert.strictEqual(detail.status, "accepted")
          // The answers are not stored in clear.
          const stored = yield* sql<{ answers_enc: string }>`SELECT answers_enc FROM form_submissions WHERE id = ${s.id}`
          assert.notInclude(stored[0]!.answers_enc, "A bot gateway")
        }))

      it.effect("a dismissed modal is resumed at its page; a second submission waits for the first's review", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Resume" })
          const asCarol = member(signer, carol)
          const first = yield* asCarol.pick(formId)
          // Dismissed: the platform says nothing. Starting again opens the same page 1.
          const again = yield* asCarol.pick(formId)
          assert.strictEqual(again.data?.custom_id, first.data?.custom_id)
          const saved = yield* asCarol.submit(first, page1(first, "yes"))
          assert.strictEqual(saved.data?.content, "Page 1 of 2 saved.")
          // Page 2 dismissed; starting from the form's select resumes at page 2, filled answers kept.
          const resumed = yield* asCarol.pick(formId)
          assert.strictEqual(resumed.data?.title, "Resume (2/2)")
          const [colour, project] = ids(resumed)
          yield* asCarol.submit(resumed, { [colour!]: ["0"], [project!]: "x" })
          const refused = yield* asCarol.pick(formId)
          assert.strictEqual(refused.data?.content, "You already have a submission of this form awaiting review.")
        }))

      it.effect("a closed form, and a form deleted while a member is filling it", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const closed = yield* createForm({ title: "Closed", workflow_live: false })
          const asBob = member(signer, bob)
          assert.strictEqual((yield* asBob.pick(closed)).data?.content, "This form is closed.")
          assert.strictEqual((yield* asBob.click(`f:start:${closed}`)).data?.content, "This form is closed.")
          const list = yield* asBob.command()
          assert.notInclude(JSON.stringify(list), "Closed")

          const doomed = yield* createForm({ title: "Doomed" })
          const first = yield* asBob.pick(doomed)
          const saved = yield* asBob.submit(first, page1(first, "yes"))
          yield* deleteForm(doomed)
          const gone = yield* asBob.click(buttonsOf(saved).get("Continue")!)
          assert.strictEqual(gone.data?.content, "This form expired — start again.")
          assert.strictEqual((yield* asBob.pick(doomed)).data?.content, "This form no longer exists.")
        }))

      it.effect("a form edited while a member is on page 2: the draft and the submission keep the snapshot", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Edited" })
          const asAlice = member(signer, alice)
          const first = yield* asAlice.pick(formId)
          const saved = yield* asAlice.submit(first, page1(first, "yes"))
          yield* updateForm(formId, { title: "Edited later", steps: [{ type: "message", string: "Only question now", char_limit: [1, 10] }] })
          const second = yield* asAlice.click(buttonsOf(saved).get("Continue")!)
          assert.strictEqual(second.data?.title, "Edited (2/2)")
          const [colour, project] = ids(second)
          const done = yield* asAlice.submit(second, { [colour!]: ["0"], [project!]: "kept" })
          assert.include(done.data?.content, "Submitted")
          const repo = yield* SubmissionsRepo
          const { submissions } = yield* repo.list(formId, { offset: 0, limit: 10 })
          assert.strictEqual(submissions[0]!.snapshot.title, "Edited")
          assert.strictEqual(submissions[0]!.snapshot.steps.length, 7)
        }))

      it.effect("an expired draft: its buttons say so, and starting again begins afresh", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Expiring" })
          const asBob = member(signer, bob)
          const first = yield* asBob.pick(formId)
          const saved = yield* asBob.submit(first, page1(first, "yes"))
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE form_drafts SET expires_at = now() - interval '1 second' WHERE workflow_id = ${formId}`
          const expired = yield* asBob.click(buttonsOf(saved).get("Continue")!)
          assert.strictEqual(expired.data?.content, "This form expired — start again.")
          const again = yield* asBob.pick(formId)
          assert.strictEqual(again.data?.title, "Expiring (1/2)")
          assert.notStrictEqual(again.data?.custom_id, first.data?.custom_id)
          assert.deepStrictEqual(inputsOf(again).map((i) => i.input.value), [undefined, undefined, undefined, undefined, undefined])
        }))

      it.effect("more than 10 starts by one member in a minute: Slow down", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Busy" })
          const someone = member(signer, { userId: "100000000000000077", username: "eager" })
          for (let i = 0; i < 10; i++) assert.strictEqual((yield* someone.pick(formId)).type, 9)
          const slow = yield* someone.pick(formId)
          assert.strictEqual(slow.type, 4)
          assert.match(slow.data?.content ?? "", /^Slow down/)
          // Others are not held back.
          assert.strictEqual((yield* member(signer, carol).click(`f:start:${formId}`)).type, 9)
        }))
    }
  )
}
