/**
 * Review in the authorization channel (forms-runtime.md §4) and hostile input, through signed
 * interactions over HTTP: two reviewers at once (one wins), Drop's reason and the DM (reviewer
 * named or not), closed DMs, a channel that refuses (403/404), a review job run again after its
 * post (posted once); answers over the limits, other members' drafts, unknown components. The
 * platform is the sandbox's, mounted in the app: interactions signed with BOT1's own key, messages,
 * edits, DMs and the attached file read back over HTTP, refusals and closed DMs set as its faults.
 */
import { assert, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BOT1_TOKEN, CHANNEL_INDEX, channelId } from "../../src/sandbox/seed/Ids.ts"
import { makeReviewDecision } from "../../src/layers/submissions/ReviewDecision.ts"
import { DmQueue, EditQueue, jobId, makeSubmissionJobs } from "../../src/layers/submissions/SubmissionJobs.ts"
import { shareJobId, ShareQueue } from "../../src/layers/submissions/ShareJobs.ts"
import { JobEngine, JobEngineError, JobEngineUnavailable } from "../../src/services/jobs/JobEngine.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp } from "../utils/TestApp.ts"
import { alice, bob, carol, createForm, member, mod, REVIEW_CHANNEL } from "./FlowHelpers.ts"
import type { As } from "./InteractionClient.ts"
import { inputsOf, waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import type { SandboxBody } from "./PlayerFixtures.ts"
import { callsTo, eventuallyEffect, messages, post, reviewMessage, twoSteps } from "./PlayerFixtures.ts"
import { channelFault, reviewPosted } from "./ShareHelpers.ts"

/** `as` fills the one-page form: the submission's id. */
const fill = (as: As, formId: number) =>
  Effect.gen(function*() {
    const m = member(signer, as)
    const modal = yield* m.pick(formId)
    const [name, team] = inputsOf(modal).map((i) => i.input.custom_id!)
    const done = yield* m.submit(modal, { [name!]: as.username, [team!]: ["0"] })
    assert.include(done.data?.content, "Submitted")
    const repo = yield* SubmissionsRepo
    const { submissions } = yield* repo.list(formId, { offset: 0, limit: 50 })
    return submissions.find((s) => s.userId === as.userId)!.id
  })

const buttons = (m: { body: SandboxBody }) =>
  new Map((m.body.components as ReadonlyArray<{ components: ReadonlyArray<{ label: string; custom_id: string }> }>)[0]!.components.map((b) => [b.label, b.custom_id]))
/** The direct messages the bot sent `userId`, oldest first. */
const dmsTo = (userId: string) => messages(`dms?user_id=${userId}`)
/** The messages a channel holds of submission `id`. */
const postedOf = (channel: string, id: string) =>
  Effect.map(messages(`messages?channel_id=${channel}`), (ms) => ms.filter((m) => JSON.stringify(m.body.embeds ?? []).includes(`Submission ${id}`)))
/** Until the submission's DM is settled (sent, or the member's DMs closed). */
const dmSettled = (id: string) =>
  Effect.flatMap(SubmissionsRepo, (repo) => eventuallyEffect(Effect.map(repo.get(id), (s) => (s?.dm != null ? s : undefined))))
const POSTS = "POST /channels/{id}/messages"
/** Whether the job of `queue` with `id` was sent (queued, running or done). */
const jobSent = (queue: typeof DmQueue | typeof EditQueue | typeof ShareQueue, id: string) =>
  Effect.flatMap(JobEngine, (engine) => Effect.map(engine.job(queue as typeof DmQueue, id), Option.isSome))
/** The audit entries of submission `id`'s review, as their event strings. */
const auditedOf = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ e: string }>`SELECT event_string AS e FROM audit_entries WHERE module_name = 'forms' AND event_type = 'PATCH' AND event_string LIKE ${`submission ${id} %`}`,
      (r) => r.map((x) => x.e)
    ))

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(
    `review and hostile input, on ${kind}`,
    (it) => {
      it.effect("two reviewers at once: exactly one decides, the other is told who did", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Race", steps: twoSteps })
          const id = yield* fill(bob, formId)
          const message = yield* reviewMessage(id)
          const b = buttons(message)
          const [one, two] = yield* Effect.all([
            member(signer, mod).click(b.get("Pass — low")!, message.id),
            member(signer, alice).click(b.get("Pass — high")!, message.id)
          ], { concurrency: 2 })
          const answers = [one, two]
          const winner = answers.filter((a) => a.type === 7)
          const loser = answers.filter((a) => a.type === 4)
          assert.strictEqual(winner.length, 1)
          assert.strictEqual(loser.length, 1)
          const s = yield* (yield* SubmissionsRepo).get(id)
          assert.strictEqual(loser[0]!.data?.content, `Already reviewed by ${s!.reviewerName}.`)
          assert.strictEqual(winner[0]!.data?.content, `Passed by ${s!.reviewerName} — priority ${s!.priority}`)
          const late = yield* member(signer, mod).click(b.get("Drop")!, message.id)
          assert.strictEqual(late.data?.content, `Already reviewed by ${s!.reviewerName}.`)
          // One DM, of the one decision.
          yield* dmSettled(id)
          const dms = (yield* dmsTo(bob.userId)).filter((d) => d.body.content?.startsWith("Race on "))
          assert.deepStrictEqual(dms.map((d) => d.body.content), ["Race on Sandbox One: accepted"])
          // Its job has the submission's id (one per submission, whoever sends it); the button's answer
          // edited the message, so no edit job; one audit entry.
          assert.isTrue(yield* jobSent(DmQueue, jobId("dm", id)))
          assert.isFalse(yield* jobSent(EditQueue, jobId("edit", id)), "a button's answer edits the message itself")
          assert.deepStrictEqual(yield* auditedOf(id), [`submission ${id} passed`])
        }))

      it.effect("Drop asks a reason, the DM names it and the reviewer; closed DMs are recorded, not an error", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Drops", steps: twoSteps, disable_priorities: true, disable_mentions: true })
          const id = yield* fill(carol, formId)
          const message = yield* reviewMessage(id)
          assert.deepStrictEqual([...buttons(message).keys()], ["Pass", "Drop"])
          assert.strictEqual(message.body.content, undefined)
          assert.deepStrictEqual(message.body.allowed_mentions, { parse: [], roles: [] })
          assert.strictEqual((yield* post("/sandbox/faults", { kind: "dm_closed", user_id: carol.userId })).status, 200)
          const asMod = member(signer, mod)
          const modal = yield* asMod.click(buttons(message).get("Drop")!, message.id)
          assert.strictEqual(modal.type, 9)
          const tooLong = yield* asMod.submitRaw(modal.data!.custom_id!, [{ type: 18, component: { type: 4, custom_id: "reason", value: "x".repeat(1001) } }])
          assert.strictEqual(tooLong.data?.content, "The reason must be at most 1,000 characters.")
          const dropped = yield* asMod.submitRaw(modal.data!.custom_id!, [{ type: 18, component: { type: 4, custom_id: "reason", value: "Not now" } }])
          assert.strictEqual(dropped.type, 7)
          assert.strictEqual(dropped.data?.content, "Dropped by mod")
          const settled = yield* dmSettled(id)
          assert.strictEqual(settled.status, "denied")
          assert.strictEqual(settled.reason, "Not now")
          assert.strictEqual(settled.dm, "closed")
          assert.deepStrictEqual(settled.effects.find((e) => e.kind === "dm")?.state, "done")
          // The platform refused it: no DM reached carol.
          assert.deepStrictEqual((yield* dmsTo(carol.userId)).filter((d) => d.body.content?.startsWith("Drops")), [])
          yield* raw({ method: "DELETE" }, "/sandbox/faults")
          assert.deepStrictEqual(yield* auditedOf(id), [`submission ${id} dropped`])
          assert.isFalse(yield* jobSent(ShareQueue, shareJobId(id)), "a drop shares nothing")
        }))

      it.effect("the DM of a drop names the reviewer unless anonymize_rejection", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          for (const anonymize of [false, true]) {
            const formId = yield* createForm({ title: `Anon ${anonymize}`, steps: twoSteps, anonymize_rejection: anonymize })
            const id = yield* fill(alice, formId)
            const message = yield* reviewMessage(id)
            const modal = yield* member(signer, mod).click(buttons(message).get("Drop")!, message.id)
            yield* member(signer, mod).submitRaw(modal.data!.custom_id!, [{ type: 18, component: { type: 4, custom_id: "reason", value: "Full" } }])
            const dm = yield* eventuallyEffect(Effect.map(dmsTo(alice.userId), (ds) => ds.find((d) => d.body.content?.startsWith(`Anon ${anonymize}`))))
            const content = dm.body.content!
            assert.include(content, "denied")
            assert.include(content, "Reason: Full")
            if (anonymize) assert.notInclude(content, "mod")
            else assert.include(content, "Reviewed by mod")
          }
        }))

      it.effect("a channel that refuses (403, 404): the effect failed with its reason, the submission kept", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const repo = yield* SubmissionsRepo
          for (const [status, user] of [[403, carol], [404, bob]] as const) {
            const channel = channelId(1, status === 403 ? CHANNEL_INDEX.text2 : CHANNEL_INDEX.news)
            yield* channelFault(channel, String(status))
            const formId = yield* createForm({ title: `Refused ${status}`, steps: twoSteps, channel_id: channel })
            const id = yield* fill(user, formId)
            const effect = yield* Effect.gen(function*() {
              for (let i = 0; i < 200; i++) {
                const s = yield* repo.get(id)
                const e = s?.effects.find((x) => x.kind === "review_message")
                if (e !== undefined && e.state !== "pending") return { s: s!, e }
                yield* Effect.sleep("50 millis")
              }
              throw new Error("never settled")
            })
            assert.strictEqual(effect.e.state, "failed")
            const refusal = status === 403 ? "403 50001): Missing Access" : "404 10003): Unknown Channel"
            assert.strictEqual(effect.e.reason, `The platform refused the review message in channel ${channel} (${refusal}`)
            assert.strictEqual(effect.e.channel_id, channel)
            assert.strictEqual(effect.s.status, "pending")
            assert.deepStrictEqual(yield* postedOf(channel, id), [])
            yield* raw({ method: "DELETE" }, "/sandbox/faults")
          }
        }))

      it.effect("a review job run again after its post (its worker killed before recording it) posts nothing twice", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Once", steps: twoSteps })
          const id = yield* fill(mod, formId)
          const message = yield* reviewMessage(id)
          // Recorded by the worker first: the test's reset is not overwritten by it.
          yield* reviewPosted(id)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE submission_effects SET state = 'pending', message_id = NULL WHERE submission_id = ${id}`
          const jobs = yield* makeSubmissionJobs
          const posts = yield* callsTo(POSTS)
          yield* jobs.postReview(id)
          yield* jobs.postReview(id)
          // Posted again once (with its nonce: the platform answered the first message), then found done.
          assert.strictEqual(yield* callsTo(POSTS), posts + 1)
          assert.deepStrictEqual((yield* postedOf(REVIEW_CHANNEL, id)).map((m) => m.id), [message.id])
          const s = yield* (yield* SubmissionsRepo).get(id)
          assert.strictEqual(s?.effects.find((e) => e.kind === "review_message")?.message_id, message.id)
        }))

      it.effect("a review from the panel: one decides, the message is edited by a job, a later click is told who reviewed", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Panel", steps: twoSteps })
          const id = yield* fill(bob, formId)
          const message = yield* reviewMessage(id)
          const decide = yield* makeReviewDecision
          const review = { decision: "pass", priority: "medium", reason: null, reviewerId: "100000000000000001", reviewerName: "alice", reviewerAvatar: null } as const
          const [first, second] = yield* Effect.all([decide(id, review, { editMessage: true }), decide(id, { ...review, reviewerName: "other" }, { editMessage: true })], { concurrency: 2 })
          assert.deepStrictEqual([first._tag, second._tag].sort(), ["AlreadyReviewed", "Decided"])
          const winner = first._tag === "Decided" ? "alice" : "other"
          const edited = yield* eventuallyEffect(Effect.map(postedOf(REVIEW_CHANNEL, id), ([m]) => (m?.body.components?.length === 0 ? m : undefined)))
          assert.strictEqual(edited.id, message.id)
          assert.strictEqual(edited.body.content, `Passed by ${winner} — priority medium`)
          assert.strictEqual(edited.edits.length, 1)
          // A member whose screen still shows the buttons clicks one.
          const late = yield* member(signer, mod).click(buttons(edited.edits[0]!).get("Drop")!, message.id)
          assert.strictEqual(late.data?.content, `Already reviewed by ${winner}.`)
          yield* eventuallyEffect(Effect.map(dmsTo(bob.userId), (ds) => ds.find((d) => d.body.content === "Panel on Sandbox One: accepted")))
          assert.isTrue(yield* jobSent(EditQueue, jobId("edit", id)), "the edit's job has the submission's id")
        }))

      it.effect("the job queue cannot take a review's jobs: 503 to the reviewer, nothing decided, nothing audited", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Queue down", steps: twoSteps })
          const id = yield* fill(bob, formId)
          yield* reviewMessage(id)
          const engine = yield* JobEngine
          const down = new JobEngineError({ reason: new JobEngineUnavailable({ operation: "send", message: "connection refused" }) })
          // Every send but the DM's goes through: whichever job fails, the decision is undone.
          const failing = JobEngine.of({ ...engine, send: (queue, payload, o) => queue.name === DmQueue.name ? Effect.fail(down) : engine.send(queue, payload, o) })
          const decide = yield* makeReviewDecision.pipe(Effect.provideService(JobEngine, failing))
          const review = { decision: "drop", priority: null, reason: "no", reviewerId: "100000000000000001", reviewerName: "alice", reviewerAvatar: null } as const
          const exit = yield* Effect.exit(decide(id, review, { editMessage: true }))
          assert.isTrue(Exit.isFailure(exit))
          const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
          assert.strictEqual(error?._tag, "ServiceUnavailable")
          assert.deepStrictEqual(error?._tag === "ServiceUnavailable" ? error.problems.map((p) => p.message) : [], ["The job queue cannot take the review now."])
          const s = yield* (yield* SubmissionsRepo).get(id)
          assert.deepInclude(s, { status: "pending", reviewerName: null, reason: null })
          assert.deepStrictEqual(s!.effects.map((e) => e.kind), ["review_message"], "no DM recorded")
          assert.deepStrictEqual(yield* auditedOf(id), [])
          // The queue back: the same review goes through.
          assert.strictEqual((yield* (yield* makeReviewDecision)(id, review, { editMessage: true }))._tag, "Decided")
        }))

      it.effect("an answer cut to 1,024 in the embed: the whole submission attached as a text file", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Long", steps: [{ type: "message", string: "Essay?", char_limit: [1, 2000] }] })
          const m = member(signer, carol)
          const modal = yield* m.pick(formId)
          const essay = "word ".repeat(300).trim()
          yield* m.submit(modal, { [inputsOf(modal)[0]!.input.custom_id!]: essay })
          const repo = yield* SubmissionsRepo
          const id = (yield* repo.list(formId, { offset: 0, limit: 1 })).submissions[0]!.id
          const message = yield* reviewMessage(id)
          const field = (message.body.embeds as ReadonlyArray<{ fields: ReadonlyArray<{ value: string }> }>)[0]!.fields[0]!
          assert.strictEqual([...field.value].length, 1024)
          assert.isTrue(field.value.endsWith("…"))
          assert.deepStrictEqual(message.body.attachments, [`submission-${id}.txt`])
          // The file as a member opens it: the message read as the bot, its attachment's url fetched.
          const read = yield* raw({ headers: { authorization: `Bot ${BOT1_TOKEN}` } }, `/sandbox/discord/api/v10/channels/${REVIEW_CHANNEL}/messages/${message.id}`)
          const [attachment] = (yield* json(read)).attachments as ReadonlyArray<{ filename: string; url: string }>
          assert.strictEqual(attachment?.filename, `submission-${id}.txt`)
          const file = yield* Effect.promise(() => fetch(attachment!.url).then((r) => r.text()))
          assert.include(file, essay)
        }))

      it.effect("hostile input: answers over the limits, other members' drafts, no draft, unknown components — refused, nothing stored", () =>
        Effect.gen(function*() {
          yield* waitForKeys(signer)
          const formId = yield* createForm({ title: "Hostile", steps: twoSteps })
          const asBob = member(signer, bob)
          const modal = yield* asBob.pick(formId)
          const [name, team] = inputsOf(modal).map((i) => i.input.custom_id!)
          const draftModal = modal.data!.custom_id!
          const refusals = [
            yield* asBob.submit(modal, { [name!]: "x".repeat(21), [team!]: ["0"] }),
            yield* asBob.submit(modal, { [name!]: "", [team!]: ["0"] }),
            yield* asBob.submit(modal, { [name!]: "ok", [team!]: ["7"] }),
            yield* asBob.submit(modal, { [name!]: "ok", [team!]: ["0", "1"] }),
            yield* asBob.submitRaw(draftModal, [{ type: 18, component: { type: 4, custom_id: name, value: "ok" } }]),
            yield* asBob.submitRaw(draftModal, [{ type: 99, component: {} }, { type: 18, component: { type: 3, custom_id: team, values: ["0"] } }]),
            yield* asBob.submitRaw(draftModal, [
              { type: 18, component: { type: 4, custom_id: name, value: "ok" } },
              { type: 18, component: { type: 3, custom_id: team, values: ["0"] } },
              { type: 18, component: { type: 4, custom_id: "s999", value: "extra" } }
            ])
          ]
          for (const r of refusals) {
            assert.strictEqual(r.type, 4)
            assert.match(r.data?.content ?? "", /^These answers cannot be taken: .+ Nothing was saved\.$/)
          }
          // Another member's draft, by its Continue/Fix id or its modal: refused.
          const draftId = draftModal.split(":")[2]!
          const asCarol = member(signer, carol)
          assert.include((yield* asCarol.click(`f:open:${draftId}`)).data?.content, "started by someone else")
          assert.include((yield* asCarol.submit(modal, { [name!]: "mine", [team!]: ["0"] })).data?.content, "started by someone else")
          assert.strictEqual((yield* asCarol.click("f:open:AAAAAAAAAAAAAAAAAAAAAA")).data?.content, "This form expired — start again.")
          assert.strictEqual((yield* asCarol.click("anything:else")).data?.content, "This button is not known.")
          const repo = yield* SubmissionsRepo
          const draft = yield* repo.draft(draftId)
          assert.deepStrictEqual(draft?.answers, {})
          assert.strictEqual(draft?.page, 0)
          assert.strictEqual((yield* repo.list(formId, { offset: 0, limit: 5 })).total, 0)
          // The member's own answers, within the limits, still go through.
          const ok = yield* asBob.submit(modal, { [name!]: "x".repeat(20), [team!]: ["1"] })
          assert.include(ok.data?.content, "Submitted")
          const taken = (yield* repo.list(formId, { offset: 0, limit: 5 })).submissions
          assert.strictEqual(taken.length, 1)
          const posted = yield* reviewMessage(taken[0]!.id)
          assert.deepStrictEqual(posted.body.embeds![0].fields.map((f: { value: string }) => f.value), ["x".repeat(20), "Blue"])
        }))
    }
  )
}
