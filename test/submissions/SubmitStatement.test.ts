/**
 * A submission is one durable statement (forms-runtime.md §4, bench S11): the submission, its
 * draft's end, its pending review message and its audit entry are written together or not at all,
 * and its review job is queued after it. A process that dies between the two leaves a pending
 * review message without a job; the minute's sweep (SubmissionJobs.ts) queues it, and the message is
 * posted once. On PGlite and PostgreSQL, with the app's worker running.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { BOT1_ID, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { jobId, makeSubmissionJobs, ReviewQueue, SWEEP_AFTER_SECONDS } from "../../src/layers/submissions/SubmissionJobs.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import type { JobQueue } from "../../src/services/jobs/JobEngine.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, carol, createForm, member, REVIEW_CHANNEL } from "./FlowHelpers.ts"
import { inputsOf, waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import { callsTo, eventuallyEffect, messages, reviewMessage, twoSteps } from "./PlayerFixtures.ts"

const POSTS = "POST /channels/{id}/messages"

/** carol's audit entry of a submission of form `formId`. */
const entryOf = (formId: number) => (id: string) => ({
  botId: BOT1_ID,
  serverId: S1_ID,
  actor: { userId: carol.userId, userName: "carol", avatar: null },
  module: "forms",
  itemIdentifier: formId,
  eventType: "PUSH" as const,
  eventString: `submission ${id} received`
})

/** A member's new draft of the form (its snapshot as a member's start takes it); carol's by default. */
const draftOf = (formId: number, userId = carol.userId) =>
  Effect.gen(function*() {
    const form = yield* (yield* FormsRepo).find({ botId: BOT1_ID, serverId: S1_ID }, formId)
    return yield* (yield* SubmissionsRepo).startDraft({
      id: randomBytes(16).toString("base64url"),
      workflowId: formId,
      userId,
      snapshot: Option.getOrThrow(form),
      answers: {},
      page: 0,
      expiresAt: new Date(Date.now() + 60_000)
    })
  })

/** What the database holds of a submission's statement: the submission, the draft, the review effect, the audit entry. */
const written = (formId: number, draftId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ submissions: number; drafts: number; effects: number; entries: number }>`SELECT
      (SELECT count(*)::int FROM form_submissions WHERE workflow_id = ${formId} AND user_id = ${carol.userId}) AS submissions,
      (SELECT count(*)::int FROM form_drafts WHERE id = ${draftId}) AS drafts,
      (SELECT count(*)::int FROM submission_effects e JOIN form_submissions s ON s.id = e.submission_id
        WHERE s.workflow_id = ${formId} AND e.kind = 'review_message') AS effects,
      (SELECT count(*)::int FROM audit_entries WHERE item_identifier = ${formId} AND user_id = ${carol.userId}) AS entries`
    return row!
  })

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(
    `a submission's statement and the sweep, on ${kind}`,
    (it) => {
      it.effect("a member's last page: the submission, its review message and its audit entry, the draft gone", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "One statement", steps: twoSteps })
          const m = member(signer, bob)
          const modal = yield* m.pick(formId)
          const [name, team] = inputsOf(modal).map((i) => i.input.custom_id!)
          const done = yield* m.submit(modal, { [name!]: "bob", [team!]: ["0"] })
          assert.include(done.data?.content, "Submitted")
          const sql = yield* SqlClient.SqlClient
          const [s] = yield* sql<{ id: string }>`SELECT id::text FROM form_submissions WHERE workflow_id = ${formId}`
          const entries = yield* sql<{ user_id: string; module_name: string; event_type: string; item_identifier: string }>`SELECT user_id, module_name,
            event_type, item_identifier::text FROM audit_entries
            WHERE event_string = ${`submission ${s!.id} received for form One statement (${formId})`}`
          assert.deepStrictEqual(entries, [{ user_id: bob.userId, module_name: "forms", event_type: "PUSH", item_identifier: String(formId) }])
          const drafts = yield* sql`SELECT 1 FROM form_drafts WHERE workflow_id = ${formId} AND user_id = ${bob.userId}`
          assert.strictEqual(drafts.length, 0)
          yield* reviewMessage(s!.id)
        }))

      it.effect("a member with a pending submission: nothing is written, the draft is kept; two at once store one", () =>
        Effect.gen(function*() {
          const formId = yield* createForm({ title: "Pending", steps: twoSteps })
          const repo = yield* SubmissionsRepo
          const draft = yield* draftOf(formId)
          const submission = { draft, botId: BOT1_ID, serverId: S1_ID, userName: "carol", userAvatar: null, answers: { a: "1" } }
          // Two submits of the same draft at once (a double click): one is stored, the other is told.
          const ids = yield* Effect.all([repo.submit(submission, entryOf(formId)), repo.submit(submission, entryOf(formId))], { concurrency: 2 })
          assert.strictEqual(ids.filter((id) => id === undefined).length, 1)
          assert.deepStrictEqual(yield* written(formId, draft.id), { submissions: 1, drafts: 0, effects: 1, entries: 1 })
          // A new draft while that one is pending: its submit writes nothing and keeps the draft.
          const again = yield* draftOf(formId)
          assert.strictEqual(yield* repo.submit({ ...submission, draft: again }, entryOf(formId)), undefined)
          assert.deepStrictEqual(yield* written(formId, again.id), { submissions: 1, drafts: 1, effects: 1, entries: 1 })
        }))

      it.effect("submissions stored without their job (their process died): the sweep queues them after a minute, page by page, each posted once", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Swept", steps: twoSteps })
          const repo = yield* SubmissionsRepo
          const sql = yield* SqlClient.SqlClient
          const orphan = (userId: string) =>
            Effect.flatMap(draftOf(formId, userId), (draft) =>
              Effect.map(repo.submit({ draft, botId: BOT1_ID, serverId: S1_ID, userName: userId, userAvatar: null, answers: { a: "1" } }, entryOf(formId)), (id) => id!))
          const [first, second] = [yield* orphan(carol.userId), yield* orphan(bob.userId)]
          const jobs = yield* makeSubmissionJobs
          // Under a minute old: its job may still be on its way; the sweep leaves it.
          assert.deepStrictEqual(yield* repo.unqueuedReviews(SWEEP_AFTER_SECONDS, 500, "0"), [])
          yield* jobs.sweep(1)
          const posts = yield* callsTo(POSTS)
          yield* sql`UPDATE submission_effects SET updated_at = now() - interval '2 minutes' WHERE submission_id IN (${first}, ${second})`
          // Pages by submission id.
          assert.deepStrictEqual(yield* repo.unqueuedReviews(SWEEP_AFTER_SECONDS, 1, "0"), [first])
          assert.deepStrictEqual(yield* repo.unqueuedReviews(SWEEP_AFTER_SECONDS, 1, first), [second])
          assert.deepStrictEqual(yield* repo.unqueuedReviews(SWEEP_AFTER_SECONDS, 1, second), [])
          // One a page: both are queued, each under its submission's job id (a job that exists is not queued twice).
          yield* jobs.sweep(1)
          const engine = yield* JobEngine
          for (const id of [first, second]) {
            assert.isTrue(Option.isSome(yield* engine.job(ReviewQueue as JobQueue<unknown>, jobId("review", id))), `the review job of ${id}`)
          }
          for (const id of [first, second]) {
            const message = yield* reviewMessage(id)
            const settled = yield* eventuallyEffect(Effect.map(repo.get(id), (s) => {
              const e = s?.effects.find((x) => x.kind === "review_message")
              return e?.state === "done" ? e : undefined
            }))
            assert.strictEqual(settled.message_id, message.id)
          }
          assert.deepStrictEqual(yield* repo.unqueuedReviews(SWEEP_AFTER_SECONDS, 500, "0"), [])
          // Swept again (their jobs done): nothing more is posted.
          yield* jobs.sweep()
          yield* Effect.sleep("300 millis")
          assert.strictEqual(yield* callsTo(POSTS), posts + 2)
          for (const id of [first, second]) {
            const ofSubmission = (yield* messages(`messages?channel_id=${REVIEW_CHANNEL}`))
              .filter((m) => JSON.stringify(m.body.embeds ?? []).includes(`Submission ${id}`))
            assert.strictEqual(ofSubmission.length, 1)
          }
        }))
    }
  )
}
