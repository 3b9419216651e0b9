/**
 * The forms runtime and the sandbox's platform together, no test double: the gateway in sandbox mode,
 * members played by `POST /sandbox/discord/interactions` (signed with the bot's key, every answer
 * checked as the platform would: `problems` must stay empty), the bot's messages read back from
 * `GET /sandbox/discord/messages` and `/dms`, faults from `POST /sandbox/faults`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeSubmissionJobs } from "../../src/layers/submissions/SubmissionJobs.ts"
import { ALICE_ID, BOB_ID, BOT1_ID } from "../../src/sandbox/seed/Ids.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { raw, TestApp } from "../utils/TestApp.ts"
import { createForm, deleteForm, REVIEW_CHANNEL, updateForm } from "./FlowHelpers.ts"
import { buttonOf, eventuallyEffect, fill, inputs, messages, play, post, reviewMessage, submissionOf, twoSteps, waitForKeys } from "./PlayerFixtures.ts"

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`forms on the sandbox platform, on ${kind}`, (it) => {
    it.effect("PING; stale, replayed and forged requests: 401 or already handled, nothing stored", () =>
      Effect.gen(function*() {
        const ping = yield* waitForKeys
        assert.deepStrictEqual(ping.response, { type: 1 })
        const formId = yield* createForm({ title: "Signed", steps: twoSteps })
        const stale = yield* play(BOB_ID, { action: "command", name: "submit", timestamp_offset_s: -301 }, true)
        assert.strictEqual(stale.status, 401)
        const list = yield* play(BOB_ID, { action: "command", name: "submit" })
        const again = yield* play(BOB_ID, { action: "select", custom_id: "f:pick", message_id: list.message_id, values: [String(formId)], interaction_id: list.interaction_id })
        assert.strictEqual(again.response?.data?.content, "This interaction was already handled.")
        const forged = yield* raw({
          method: "POST",
          headers: { "content-type": "application/json", "x-signature-ed25519": "00".repeat(64), "x-signature-timestamp": String(Math.floor(Date.now() / 1000)) },
          body: JSON.stringify({ id: "1", application_id: BOT1_ID, type: 1, token: "t", version: 1 })
        }, `/interactions/${BOT1_ID}`)
        assert.strictEqual(forged.status, 401)
        const sql = yield* SqlClient.SqlClient
        assert.strictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM form_drafts WHERE workflow_id = ${formId}`)[0]!.n, 0)
      }))

    it.effect("a 7-step form on two pages through the player: Fix, Continue, submitted; the review message with its buttons; no reviewer refused; Pass edits it; the DM", () =>
      Effect.gen(function*() {
        yield* waitForKeys
        const formId = yield* createForm()
        const list = yield* play(BOB_ID, { action: "command", name: "submit" })
        const first = yield* play(BOB_ID, { action: "select", custom_id: "f:pick", message_id: list.message_id, values: [String(formId)] })
        assert.strictEqual(first.response?.data?.title, "Staff application (1/2)")
        const ids = inputs(first)
        const page1 = (third: string) => Object.fromEntries(ids.map((id, i) => [id, ["Bob", "33", third, "UTC", "I like forms a lot"][i]]))
        const refused = yield* play(BOB_ID, { action: "submit", fields: page1("maybe") })
        assert.include(refused.response?.data?.content, "Do you accept the rules?")
        const fix = yield* play(BOB_ID, { action: "click", custom_id: buttonOf(refused, /^Fix$/), message_id: refused.message_id })
        assert.strictEqual(fix.response?.data?.components?.[2]?.component?.value, "maybe")
        const saved = yield* play(BOB_ID, { action: "submit", fields: page1("Yes, I AGREE") })
        assert.strictEqual(saved.response?.data?.content, "Page 1 of 2 saved.")
        const second = yield* play(BOB_ID, { action: "click", custom_id: buttonOf(saved, /^Continue$/), message_id: saved.message_id })
        assert.strictEqual(second.response?.data?.title, "Staff application (2/2)")
        const [colour, project] = inputs(second)
        const done = yield* play(BOB_ID, { action: "submit", fields: { [colour!]: ["1"], [project!]: "A bot gateway" } })
        assert.include(done.response?.data?.content, "Submitted")

        const id = yield* submissionOf(formId, BOB_ID)
        const message = yield* reviewMessage(id)
        assert.strictEqual(message.body.content, "<@&320000000000000101>")
        assert.deepStrictEqual(message.body.embeds![0].fields.map((f: any) => f.value).slice(0, 3), ["Bob", "33", "Yes, I AGREE"])
        const labels = message.body.components!.flatMap((r: any) => r.components.map((c: any) => c.label))
        assert.deepStrictEqual(labels, ["Pass — low", "Pass — medium", "Pass — high", "Drop"])

        const notReviewer = yield* play(BOB_ID, { action: "click", custom_id: buttonOf(message, /^Pass — high$/), message_id: message.id })
        assert.strictEqual(notReviewer.response?.data?.flags, 64)
        const passed = yield* play(ALICE_ID, { action: "click", custom_id: buttonOf(message, /^Pass — high$/), message_id: message.id })
        assert.strictEqual(passed.response?.type, 7)
        const edited = yield* reviewMessage(id)
        assert.strictEqual(edited.body.content, "Passed by Alice — priority high")
        assert.deepStrictEqual(edited.body.components, [])
        assert.strictEqual(edited.edits.length, 1)
        const dm = yield* eventuallyEffect(Effect.map(messages(`dms?user_id=${BOB_ID}`), (ms) => ms.find((m) => m.body.content?.includes("Staff application"))))
        assert.strictEqual(dm.body.content, "Staff application on Sandbox One: accepted")
      }))

    it.effect("two clicks at once: one decides, the other is told who did", () =>
      Effect.gen(function*() {
        yield* waitForKeys
        // Alice (the owner) fills and reviews: bob's starts this minute are near the limit of 10.
        const id = yield* fill(ALICE_ID, yield* createForm({ title: "Race", steps: twoSteps }))
        const message = yield* reviewMessage(id)
        const [one, two] = yield* Effect.all([
          play(ALICE_ID, { action: "click", custom_id: buttonOf(message, /low/), message_id: message.id }),
          play(ALICE_ID, { action: "click", custom_id: buttonOf(message, /high/), message_id: message.id })
        ], { concurrency: 2 })
        const contents = [one, two].map((p) => p.response?.data?.content as string).sort()
        assert.strictEqual(contents[0], "Already reviewed by Alice.")
        assert.match(contents[1]!, /^Passed by Alice — priority (low|high)$/)
        const s = yield* (yield* SubmissionsRepo).get(id)
        assert.strictEqual(s?.priority, contents[1]!.endsWith("low") ? "low" : "high")
      }))

    it.effect("closed DMs (50007): the outcome kept, dm closed, nothing sent", () =>
      Effect.gen(function*() {
        yield* waitForKeys
        const id = yield* fill(BOB_ID, yield* createForm({ title: "Closed DMs", steps: twoSteps }))
        const message = yield* reviewMessage(id)
        assert.strictEqual((yield* post("/sandbox/faults", { route: "*", kind: "dm_closed", user_id: BOB_ID })).status < 300, true)
        yield* play(ALICE_ID, { action: "click", custom_id: buttonOf(message, /low/), message_id: message.id })
        const repo = yield* SubmissionsRepo
        const s = yield* eventuallyEffect(Effect.map(repo.get(id), (x) => (x?.dm === "closed" ? x : undefined)))
        assert.strictEqual(s.status, "accepted")
        yield* raw({ method: "DELETE" }, "/sandbox/faults")
        const dms = yield* messages(`dms?user_id=${BOB_ID}`)
        assert.isUndefined(dms.find((m) => m.body.content?.startsWith("Closed DMs")))
      }))

    it.effect("a channel that refuses (403, 404): the effect failed with its reason, the submission kept", () =>
      Effect.gen(function*() {
        yield* waitForKeys
        const repo = yield* SubmissionsRepo
        for (const status of ["403", "404"] as const) {
          const formId = yield* createForm({ title: `Refused ${status}`, steps: twoSteps })
          yield* post("/sandbox/faults", { route: "POST /channels/{id}/messages", kind: status, count: 1, path: `/sandbox/discord/api/v10/channels/${REVIEW_CHANNEL}` })
          const id = yield* fill(ALICE_ID, formId)
          const s = yield* eventuallyEffect(Effect.map(repo.get(id), (x) => (x?.effects.some((e) => e.kind === "review_message" && e.state !== "pending") ? x : undefined)))
          const effect = s.effects.find((e) => e.kind === "review_message")!
          assert.strictEqual(effect.state, "failed")
          assert.include(effect.reason, status)
          assert.strictEqual(s.status, "pending")
          yield* raw({ method: "DELETE" }, "/sandbox/faults")
        }
      }))

    it.effect("a review job run again after its post (its worker killed before recording it): posted once", () =>
      Effect.gen(function*() {
        yield* waitForKeys
        const id = yield* fill(ALICE_ID, yield* createForm({ title: "Once", steps: twoSteps }))
        const message = yield* reviewMessage(id)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE submission_effects SET state = 'pending', message_id = NULL WHERE submission_id = ${id}`
        const jobs = yield* makeSubmissionJobs
        yield* jobs.postReview(id)
        yield* jobs.postReview(id)
        const posted = (yield* messages(`messages?channel_id=${REVIEW_CHANNEL}`)).filter((m) => JSON.stringify(m.body.embeds ?? []).includes(`Submission ${id}`))
        assert.deepStrictEqual(posted.map((m) => m.id), [message.id])
        const s = yield* (yield* SubmissionsRepo).get(id)
        assert.strictEqual(s?.effects.find((e) => e.kind === "review_message")?.message_id, message.id)
      }))

    it.effect("a dismissed page 2 resumed by /submit; the form edited meanwhile: the draft and the review keep the snapshot", () =>
      Effect.gen(function*() {
        yield* waitForKeys
        const formId = yield* createForm({ title: "Resume" })
        const list = yield* play(BOB_ID, { action: "command", name: "submit" })
        const first = yield* play(BOB_ID, { action: "select", custom_id: "f:pick", message_id: list.message_id, values: [String(formId)] })
        const answers = ["Bob", "33", "yes", "UTC", "I like forms a lot"]
        const saved = yield* play(BOB_ID, { action: "submit", fields: Object.fromEntries(inputs(first).map((id, i) => [id, answers[i]])) })
        // Page 2 never opened (Continue not clicked): the draft stays; the form changes under it.
        yield* updateForm(formId, { title: "Edited", steps: twoSteps })
        const again = yield* play(BOB_ID, { action: "command", name: "submit" })
        const resumed = yield* play(BOB_ID, { action: "select", custom_id: "f:pick", message_id: again.message_id, values: [String(formId)] })
        assert.strictEqual(resumed.response?.data?.title, "Resume (2/2)")
        // The older Continue still works too (a client showing the earlier message).
        const viaContinue = yield* play(BOB_ID, { action: "click", custom_id: buttonOf(saved, /^Continue$/), message_id: saved.message_id })
        assert.strictEqual(viaContinue.response?.data?.title, "Resume (2/2)")
        const [colour, project] = inputs(viaContinue)
        const done = yield* play(BOB_ID, { action: "submit", fields: { [colour!]: ["0"], [project!]: "kept" } })
        assert.include(done.response?.data?.content, "Submitted")
        const message = yield* reviewMessage(yield* submissionOf(formId, BOB_ID))
        assert.strictEqual(message.body.embeds![0].title, "Resume")
        assert.strictEqual(message.body.embeds![0].fields.length, 7)
      }))

    it.effect("a form closed after the list was shown, and one deleted while a member is on its page: told, nothing stored", () =>
      Effect.gen(function*() {
        yield* waitForKeys
        const closing = yield* createForm({ title: "Closing", steps: twoSteps })
        const deleting = yield* createForm({ title: "Deleting", steps: twoSteps })
        const list = yield* play(BOB_ID, { action: "command", name: "submit" })
        yield* updateForm(closing, { title: "Closing", steps: twoSteps, workflow_live: false })
        const closed = yield* play(BOB_ID, { action: "select", custom_id: "f:pick", message_id: list.message_id, values: [String(closing)] })
        assert.strictEqual(closed.response?.data?.content, "This form is closed.")
        const page = yield* play(BOB_ID, { action: "select", custom_id: "f:pick", message_id: list.message_id, values: [String(deleting)] })
        const [name, team] = inputs(page)
        yield* deleteForm(deleting)
        const gone = yield* play(BOB_ID, { action: "submit", fields: { [name!]: "Bob", [team!]: ["0"] } })
        // Deleting a form ends its drafts (forms-runtime.md §3): the open page is an expired draft's.
        assert.strictEqual(gone.response?.data?.content, "This form expired — start again.")
        const stale = yield* play(BOB_ID, { action: "select", custom_id: "f:pick", message_id: list.message_id, values: [String(deleting)] })
        assert.strictEqual(stale.response?.data?.content, "This form no longer exists.")
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM form_submissions WHERE workflow_id IN (${closing}, ${deleting})`
        assert.strictEqual(rows[0]!.n, 0)
      }))
  })
}
