/**
 * The last attempt of a submission's jobs (forms-runtime.md §5, last bullet), through the real job
 * engine and the sandbox's platform over HTTP: a review message, a DM or a panel review's edit that
 * the platform answers with a 5xx on every attempt is kept `failed` with its reason once the job has
 * given up (never left pending, never queued again by the sweep), the submission kept as it was;
 * an answer lost after the platform posted is not posted twice, even when only the last attempt
 * gets through; a refused edit is kept on the review message's effect. The jobs are sent with the
 * queue's retry limit but 1 s between attempts (no backoff), so seven attempts take seconds.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { makeReviewDecision } from "../../src/layers/submissions/ReviewDecision.ts"
import { DmQueue, EditQueue, jobId, makeSubmissionJobs, RETRY_LIMIT, ReviewQueue } from "../../src/layers/submissions/SubmissionJobs.ts"
import { ALICE_ID, CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import type { JobQueue, SendOptions } from "../../src/services/jobs/JobEngine.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import type { Review } from "../../src/services/submissions/SubmissionsRepo.ts"
import { storeSubmission } from "../api/SubmissionsHttpFixtures.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { alice, bob, carol, createForm, FORMS, mod, REVIEW_CHANNEL } from "./FlowHelpers.ts"
import type { As } from "./InteractionClient.ts"
import { waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner } from "./InteractionSigner.ts"
import { callsTo, eventuallyEffect, messages } from "./PlayerFixtures.ts"
import { channelFault, fault, fillText, reviewPosted } from "./ShareHelpers.ts"

const ATTEMPTS = RETRY_LIMIT + 1
/** The queue's retry limit, 1 s apart: the last attempt in seconds, not the backoff's minutes. */
const FAST: SendOptions = { retryDelay: "1 second", retryBackoff: false }
const POSTS = "POST /channels/{id}/messages"
const EDITS = "PATCH /channels/{id}/messages/{message_id}"
const OPEN_DM = "POST /users/@me/channels"
const oneStep = [{ type: "message", string: "Name?", char_limit: [1, 20] }]
const OUTAGE = /The chat platform is unavailable \(HTTP 500/

/** The submission route's answer (what the panel shows), as alice. */
const detail = (formId: number, id: string) =>
  Effect.gen(function*() {
    const res = yield* raw({ token: yield* tokenOf(ALICE_ID) }, `${FORMS}/${formId}/submissions/${id}`)
    assert.strictEqual(res.status, 200)
    return (yield* json(res)) as {
      status: string
      effects: Array<{ kind: string; state: string; reason: string | null; channel_id: string | null; message_id: string | null }>
    }
  })

/** The job once the engine is done with it (completed, or failed for good). */
const finished = (queue: JobQueue<unknown>, id: string) =>
  Effect.gen(function*() {
    const engine = yield* JobEngine
    for (let i = 0; i < 900; i++) {
      const job = Option.getOrUndefined(yield* engine.job(queue, id))
      if (job !== undefined && (job.state === "completed" || job.state === "failed" || job.state === "cancelled")) return job
      yield* Effect.sleep("100 millis")
    }
    throw new Error(`the job ${id} of ${queue.name} never finished`)
  })

/** A submission stored as the runtime stores it, its job not yet sent; the member's name its first answer. */
const stored = (formId: number, as: As) => storeSubmission(formId, { id: as.userId, name: as.username }, [as.username])

/** A review from the panel (ReviewDecision itself), its jobs sent with FAST retries. */
const decideFast = (id: string, review: Review) =>
  Effect.gen(function*() {
    const engine = yield* JobEngine
    const fast = JobEngine.of({ ...engine, send: (queue, payload, o) => engine.send(queue, payload, { ...o, ...FAST }) })
    const decide = yield* makeReviewDecision.pipe(Effect.provideService(JobEngine, fast))
    const outcome = yield* decide(id, { ...review, reviewerAvatar: null }, { editMessage: true })
    assert.strictEqual(outcome._tag, "Decided")
  })

const PASS: Review = { decision: "pass", priority: "low", reason: null, reviewerId: mod.userId, reviewerName: "mod" }

/** The messages of submission `id` in a channel. */
const postedOf = (channel: string, id: string) =>
  Effect.map(messages(`messages?channel_id=${channel}`), (ms) => ms.filter((m) => JSON.stringify(m.body.embeds ?? []).includes(`Submission ${id}`)))

/** Until the submission's DM effect is settled (no job of the test left running into the next). */
const dmSettled = (id: string) =>
  Effect.flatMap(SubmissionsRepo, (repo) =>
    eventuallyEffect(Effect.map(repo.get(id), (s) => {
      const dm = s?.effects.find((e) => e.kind === "dm")
      return dm !== undefined && dm.state !== "pending" ? dm : undefined
    })))

/** A form of one question filled by `as` through signed interactions, its review message posted: the form, the submission, that message. */
const filledAndPosted = (title: string, as: As, answer: string) =>
  Effect.gen(function*() {
    yield* waitForKeys(sandboxSigner)
    const formId = yield* createForm({ title, steps: oneStep })
    const id = yield* fillText(as, formId, [answer])
    yield* reviewPosted(id)
    const [message] = yield* postedOf(REVIEW_CHANNEL, id)
    return { formId, id, message: message! }
  })

const clearFaults = raw({ method: "DELETE" }, "/sandbox/faults")

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true, timeout: 120_000 })(
    `a submission's jobs at their last attempt, on ${kind}`,
    (it) => {
      it.effect("the review message: a 5xx on every attempt is kept failed with its reason, the submission kept, nothing posted, the sweep leaves it", () =>
        Effect.gen(function*() {
          const channel = channelId(1, CHANNEL_INDEX.text2)
          const formId = yield* createForm({ title: `Review down ${kind}`, steps: oneStep, channel_id: channel })
          const id = yield* stored(formId, bob)
          yield* channelFault(channel, "500", ATTEMPTS)
          const before = yield* callsTo(POSTS)
          yield* (yield* JobEngine).send(ReviewQueue, { submission_id: id }, { id: jobId("review", id), ...FAST })
          // The last attempt settles the effect: the job completes, after every retry was taken.
          assert.deepInclude(yield* finished(ReviewQueue, jobId("review", id)), { state: "completed", retryCount: RETRY_LIMIT })
          assert.strictEqual((yield* callsTo(POSTS)) - before, ATTEMPTS, "one post per attempt")

          const shown = yield* detail(formId, id)
          assert.strictEqual(shown.status, "pending")
          const effect = shown.effects.find((e) => e.kind === "review_message")
          assert.deepInclude(effect, { state: "failed", channel_id: channel, message_id: null })
          assert.match(effect?.reason ?? "", new RegExp(`^The platform kept failing for the review message in channel ${channel}: ${OUTAGE.source}`))
          assert.deepStrictEqual(yield* postedOf(channel, id), [])

          // Not pending: the sweep does not find it, and a run of the job again sends nothing.
          const repo = yield* SubmissionsRepo
          assert.notInclude(yield* repo.unqueuedReviews(0, 10_000, "0"), id)
          yield* (yield* makeSubmissionJobs).postReview(id, true)
          assert.strictEqual((yield* callsTo(POSTS)) - before, ATTEMPTS)
          yield* clearFaults
        }), 120_000)

      it.effect("the review message posted but its answer lost, then 5xx until the last attempt: posted once, done with that message", () =>
        Effect.gen(function*() {
          const channel = channelId(1, CHANNEL_INDEX.text2)
          const formId = yield* createForm({ title: `Review lost ${kind}`, steps: oneStep, channel_id: channel })
          const id = yield* stored(formId, carol)
          // The first attempt posts and loses the answer; the next ones get 500; the last gets through.
          yield* channelFault(channel, "cut-after", 1)
          yield* channelFault(channel, "500", RETRY_LIMIT - 1)
          const before = yield* callsTo(POSTS)
          yield* (yield* JobEngine).send(ReviewQueue, { submission_id: id }, { id: jobId("review", id), ...FAST })
          assert.deepInclude(yield* finished(ReviewQueue, jobId("review", id)), { state: "completed", retryCount: RETRY_LIMIT })
          assert.strictEqual((yield* callsTo(POSTS)) - before, ATTEMPTS)
          const posted = yield* postedOf(channel, id)
          assert.strictEqual(posted.length, 1, "the platform answered the last attempt with the first message (its nonce)")
          const effect = (yield* detail(formId, id)).effects.find((e) => e.kind === "review_message")
          assert.deepInclude(effect, { state: "done", reason: null, message_id: posted[0]!.id })
          yield* clearFaults
        }), 120_000)

      it.effect("the DM: a 5xx on every attempt is kept failed with its reason, the review kept, no DM sent", () =>
        Effect.gen(function*() {
          const { formId, id } = yield* filledAndPosted(`DM down ${kind}`, carol, "Carol")
          yield* fault(OPEN_DM, "500", ATTEMPTS)
          const before = yield* callsTo(OPEN_DM)
          yield* decideFast(id, { decision: "drop", priority: null, reason: "Not now", reviewerId: mod.userId, reviewerName: "mod" })
          assert.deepInclude(yield* finished(DmQueue, jobId("dm", id)), { state: "completed", retryCount: RETRY_LIMIT })
          assert.strictEqual((yield* callsTo(OPEN_DM)) - before, ATTEMPTS)

          const shown = yield* detail(formId, id)
          assert.strictEqual(shown.status, "denied")
          const dm = shown.effects.find((e) => e.kind === "dm")
          assert.deepInclude(dm, { state: "failed", message_id: null })
          assert.match(dm?.reason ?? "", new RegExp(`^The platform kept failing for the direct message: ${OUTAGE.source}`))
          assert.strictEqual((yield* (yield* SubmissionsRepo).get(id))?.dm, null)
          const dms = yield* messages(`dms?user_id=${carol.userId}`)
          assert.deepStrictEqual(dms.filter((m) => m.body.content?.includes(`DM down ${kind}`)), [])
          // The edit went through: the review message says who dropped it.
          yield* finished(EditQueue, jobId("edit", id))
          yield* clearFaults
        }), 120_000)

      it.effect("a panel review's edit refused (403): kept on the review message's effect with its reason, not retried", () =>
        Effect.gen(function*() {
          const { formId, id, message } = yield* filledAndPosted(`Edit refused ${kind}`, bob, "Bob")
          yield* fault(EDITS, "403", 1)
          const before = yield* callsTo(EDITS)
          const decide = yield* makeReviewDecision
          assert.strictEqual((yield* decide(id, { ...PASS, reviewerAvatar: null }, { editMessage: true }))._tag, "Decided")
          assert.deepInclude(yield* finished(EditQueue, jobId("edit", id)), { state: "completed", retryCount: 0 })
          assert.strictEqual((yield* callsTo(EDITS)) - before, 1)

          const shown = yield* detail(formId, id)
          assert.strictEqual(shown.status, "accepted")
          assert.deepInclude(shown.effects.find((e) => e.kind === "review_message"), {
            state: "failed",
            reason: `The platform refused the edit of the review message in channel ${REVIEW_CHANNEL} (403 50001): Missing Access`,
            channel_id: REVIEW_CHANNEL,
            message_id: message.id
          })
          // The message still shows its buttons; the rest of the review went on.
          assert.deepStrictEqual((yield* postedOf(REVIEW_CHANNEL, id))[0]?.edits, [])
          assert.deepInclude(yield* dmSettled(id), { state: "done", reason: null })
          yield* clearFaults
        }), 120_000)

      it.effect("a panel review's edit: a 5xx on every attempt is kept on the review message's effect, the message not edited", () =>
        Effect.gen(function*() {
          const { formId, id, message } = yield* filledAndPosted(`Edit down ${kind}`, alice, "Alice")
          yield* fault(EDITS, "500", ATTEMPTS)
          const before = yield* callsTo(EDITS)
          yield* decideFast(id, PASS)
          assert.deepInclude(yield* finished(EditQueue, jobId("edit", id)), { state: "completed", retryCount: RETRY_LIMIT })
          assert.strictEqual((yield* callsTo(EDITS)) - before, ATTEMPTS)

          const shown = yield* detail(formId, id)
          assert.strictEqual(shown.status, "accepted")
          const effect = shown.effects.find((e) => e.kind === "review_message")
          assert.deepInclude(effect, { state: "failed", message_id: message.id })
          assert.match(effect?.reason ?? "", new RegExp(`^The platform kept failing for the edit of the review message in channel ${REVIEW_CHANNEL}: ${OUTAGE.source}`))
          assert.deepStrictEqual((yield* postedOf(REVIEW_CHANNEL, id))[0]?.edits, [])
          assert.deepInclude(yield* dmSettled(id), { state: "done", reason: null })
          yield* clearFaults
        }), 120_000)
    }
  )
}
