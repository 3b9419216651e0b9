/**
 * A member filling a form through interactions (forms-runtime.md §2–§3): `/submit`'s list, the
 * start, the Continue / Fix buttons and the pages' submits. Each interaction's first statement also
 * records its id (SubmissionsRepo `open*`): a replay is told so and changes nothing. Then at most
 * one write: the draft (one statement, committed without waiting for the disk), or the submission
 * with its audit entry (one durable statement); its review job is queued beside the answer. A page
 * is two round trips, Continue one, the last page three.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { JobEngine } from "../../services/jobs/JobEngine.ts"
import { buttonRow, ephemeral } from "../../services/submissions/Interaction.ts"
import type { Interaction, InteractionAnswer, InteractionMember } from "../../services/submissions/Interaction.ts"
import { failureMessage, readPage, validationFailures } from "../../services/submissions/ModalAnswers.ts"
import { cut, layoutPages, pageModal } from "../../services/submissions/Pages.ts"
import { REPLAYED, SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import type { Draft, Replayed } from "../../services/submissions/SubmissionsRepo.ts"
import { StartLimit } from "../../services/submissions/StartLimit.ts"
import { SubmissionsSettings } from "../../services/submissions/SubmissionsSettings.ts"
import { jobId, ReviewQueue } from "./SubmissionJobs.ts"

const say = ephemeral
/** The answer to an interaction id handled before. */
export const ALREADY_HANDLED = say("This interaction was already handled.")
const EXPIRED = "This form expired — start again."
const CLOSED = "This form is closed."
const GONE = "This form no longer exists."
const PENDING = "You already have a submission of this form awaiting review."
const DRAFT_ID = /^[A-Za-z0-9_-]{22}$/

/** One verified interaction in a server, its bot known. */
export interface Ctx {
  readonly i: Interaction
  readonly botId: string
  readonly serverId: string
  readonly member: InteractionMember
  readonly name: string
}

/** Answers `answer`, or ALREADY_HANDLED for a replay. */
const unlessReplayed = <A>(opened: A | Replayed, answer: (a: A) => Effect.Effect<InteractionAnswer, ServiceUnavailable>) =>
  opened === REPLAYED ? Effect.succeed(ALREADY_HANDLED) : answer(opened)

/** `firstSeen`: records an interaction id on its own (for the paths that read nothing with it). */
export const makeFormFilling = (firstSeen: (id: string) => Effect.Effect<boolean, ServiceUnavailable>) =>
  Effect.gen(function*() {
    const repo = yield* SubmissionsRepo
    const jobs = yield* JobEngine
    const starts = yield* StartLimit
    const { draftTtlMinutes } = yield* SubmissionsSettings
    const ttl = () => new Date(Date.now() + draftTtlMinutes * 60_000)
    const scopeOf = (c: Ctx) => ({ botId: c.botId, serverId: c.serverId })

    const openPage = (draft: Draft): InteractionAnswer => ({
      type: 9,
      data: pageModal(draft.snapshot, draft.page, `f:page:${draft.id}:${draft.page}`, draft.answers)
    })

    const list = (c: Ctx) =>
      Effect.flatMap(repo.openList(c.i.id, scopeOf(c)), (opened) =>
        unlessReplayed(opened, (forms) => {
          // One collation whatever the process's locale: every instance lists the same 25.
          const live = [...forms].sort((a, b) => a.title.localeCompare(b.title, "en")).slice(0, 25)
          if (live.length === 0) return Effect.succeed(say("This server has no open forms."))
          return Effect.succeed(say("Which form?", [{
            type: 1,
            components: [{
              type: 3,
              custom_id: "f:pick",
              placeholder: "Choose a form",
              options: live.map((f) => ({ label: cut(f.title, 100), value: String(f.workflowId) }))
            }]
          }]))
        }))

    const start = (c: Ctx, workflowId: number) =>
      // The form, a pending submission and the member's draft, read with the id's record.
      Effect.flatMap(repo.openForm(c.i.id, scopeOf(c), workflowId, c.member.user.id), (opened) =>
        unlessReplayed(opened, ({ form, pending, draft: existing }) =>
          Effect.gen(function*() {
            const allowed = yield* starts.admit(`form-starts:${c.botId}:${c.member.user.id}`)
            if (!allowed) return say("Slow down: you started too many forms this minute; try again in a minute.")
            if (form === undefined) return say(GONE)
            if (!form.workflow_live) return say(CLOSED)
            if (form.steps.length === 0) return say("This form has no questions yet.")
            if (pending) return say(PENDING)
            if (existing !== undefined && existing.expiresAt.getTime() > Date.now()) return openPage(existing)
            const draft = yield* repo.startDraft({
              id: randomBytes(16).toString("base64url"),
              workflowId,
              userId: c.member.user.id,
              snapshot: form,
              answers: {},
              page: 0,
              expiresAt: ttl()
            })
            return openPage(draft)
          })))

    /** The member's own, unexpired draft of a live form (read with the id's record); else what they are told. */
    const ownDraft = (c: Ctx, draftId: string): Effect.Effect<Draft | string | Replayed, ServiceUnavailable> => {
      if (!DRAFT_ID.test(draftId)) return Effect.map(firstSeen(c.i.id), (first) => (first ? EXPIRED : REPLAYED))
      return Effect.flatMap(repo.openDraft(c.i.id, draftId, scopeOf(c)), (opened): Effect.Effect<Draft | string | Replayed, ServiceUnavailable> => {
        if (opened === REPLAYED) return Effect.succeed(REPLAYED)
        const { draft, form } = opened
        if (draft === undefined) return Effect.succeed(EXPIRED)
        if (draft.userId !== c.member.user.id) return Effect.succeed("This form was started by someone else: use /submit to start your own.")
        if (draft.expiresAt.getTime() <= Date.now()) return Effect.as(repo.removeDraft(draft.id), EXPIRED)
        if (form !== "live") return Effect.succeed(form === "gone" ? GONE : CLOSED)
        return Effect.succeed(draft)
      })
    }

    const withDraft = (c: Ctx, draftId: string, answer: (draft: Draft) => Effect.Effect<InteractionAnswer, ServiceUnavailable>) =>
      Effect.flatMap(ownDraft(c, draftId), (d) =>
        unlessReplayed(d, (draft) => (typeof draft === "string" ? Effect.succeed(say(draft)) : answer(draft))))

    const open = (c: Ctx, draftId: string) => withDraft(c, draftId, (draft) => Effect.succeed(openPage(draft)))

    const submitPage = (c: Ctx, draftId: string, page: number, components: ReadonlyArray<unknown>) =>
      withDraft(c, draftId, (draft) =>
        Effect.gen(function*() {
          const pages = layoutPages(draft.snapshot.steps)
          const continueRow = [buttonRow([{ label: "Continue", custom_id: `f:open:${draft.id}`, style: 1 }])]
          if (page !== draft.page) return say("This page was already saved; continue where you are.", continueRow)
          const read = readPage(pages[page] ?? [], components)
          if (read._tag === "Refused") return say(`These answers cannot be taken: ${read.reason}. Nothing was saved.`)
          const answers = { ...draft.answers, ...read.answers }
          const failed = validationFailures(pages[page]!, read.answers)
          if (failed.length > 0) {
            // Kept for the Fix button (the page reopens filled); the page itself is not saved, so
            // the draft's expiry stays where its last saved page put it.
            yield* repo.saveDraft(draft.id, answers, page, draft.expiresAt)
            return say(failureMessage(failed), [buttonRow([{ label: "Fix", custom_id: `f:open:${draft.id}`, style: 1 }])])
          }
          if (page + 1 < pages.length) {
            yield* repo.saveDraft(draft.id, answers, page + 1, ttl())
            return say(`Page ${page + 1} of ${pages.length} saved.`, continueRow)
          }
          const id = yield* repo.submit({
            draft,
            botId: c.botId,
            serverId: c.serverId,
            userName: c.name,
            userAvatar: c.member.user.avatar ?? null,
            answers
          }, (id) => ({
            botId: c.botId,
            serverId: c.serverId,
            // The audit log names accounts by username (decisions.md), not as the server shows them.
            actor: { userId: c.member.user.id, userName: c.member.user.username, avatar: c.member.user.avatar ?? null },
            module: "forms",
            itemIdentifier: draft.workflowId,
            eventType: "PUSH",
            eventString: `submission ${id} received for form ${draft.snapshot.title} (${draft.workflowId})`
          }))
          if (id === undefined) return say(PENDING)
          // Stored: the member is told so now, while the job is queued beside the answer. A job the
          // queue cannot take (or a process that stops first) is queued by the sweep
          // (SubmissionJobs.ts) once its review message has waited a minute.
          yield* Effect.forkDetach(jobs.send(ReviewQueue, { submission_id: id }, { id: jobId("review", id) }).pipe(
            Effect.catch((error) => Effect.logWarning("the review job could not be queued; the sweep will queue it", { submission: id, error }))
          ))
          return say("Submitted — you will get a direct message when it is reviewed")
        }))

    return { list, start, open, submitPage }
  })
