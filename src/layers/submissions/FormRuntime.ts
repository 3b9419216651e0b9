/**
 * The forms runtime's answers to interactions (forms-runtime.md §2–§4): `/submit`, the form picker,
 * Start, Continue and Fix buttons, the pages' modal submits, and the review buttons. Every answer is
 * read and written in the database only: what calls the platform (the review message, the DM) is a
 * job recorded in the same transaction (layers/submissions/SubmissionJobs.ts).
 */
import { Duration, Effect, Option, Schema } from "effect"
import { RateLimiter } from "effect/persistence"
import { randomBytes } from "node:crypto"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { StoredForm } from "../../domain/forms/Form.ts"
import { AuditLog } from "../../services/audit/AuditLog.ts"
import { FormsRepo } from "../../services/forms/FormsRepo.ts"
import { JobEngine } from "../../services/jobs/JobEngine.ts"
import { BotApplications } from "../../services/submissions/BotApplications.ts"
import { actorOf, buttonRow, CommandData, ComponentData, displayName, ephemeral, InteractionType, ModalData } from "../../services/submissions/Interaction.ts"
import type { Interaction, InteractionAnswer, InteractionMember } from "../../services/submissions/Interaction.ts"
import { failureMessage, readPage, validationFailures } from "../../services/submissions/ModalAnswers.ts"
import { cut, layoutPages, pageModal } from "../../services/submissions/Pages.ts"
import { decidedLine, mayReview, passPriority } from "../../services/submissions/ReviewRules.ts"
import { SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import type { Draft } from "../../services/submissions/SubmissionsRepo.ts"
import { SubmissionsSettings } from "../../services/submissions/SubmissionsSettings.ts"
import { parseVoteCustomId } from "../../services/submissions/Share.ts"
import { makeReviewDecision } from "./ReviewDecision.ts"
import { makeShareVotes } from "./ShareVotes.ts"
import { jobId, ReviewQueue } from "./SubmissionJobs.ts"

const say = ephemeral
const EXPIRED = "This form expired — start again."
const CLOSED = "This form is closed."
const GONE = "This form no longer exists."
const PENDING = "You already have a submission of this form awaiting review."
const MAX_START_PER_MINUTE = 10
const queueDown = Effect.mapError(() => ServiceUnavailable.of("The job queue cannot take the submission now.", 5))

const decode = <S extends Schema.Top>(schema: S) => Schema.decodeUnknownOption(schema as unknown as Schema.Codec<S["Type"], unknown>)
const command = decode(CommandData)
const component = decode(ComponentData)
const modal = decode(ModalData)

export const makeFormRuntime = Effect.gen(function*() {
  const repo = yield* SubmissionsRepo
  const forms = yield* FormsRepo
  const audit = yield* AuditLog
  const jobs = yield* JobEngine
  const apps = yield* BotApplications
  const limiter = yield* RateLimiter.RateLimiter
  const decide = yield* makeReviewDecision
  const vote = yield* makeShareVotes
  const { draftTtlMinutes } = yield* SubmissionsSettings
  const ttl = () => new Date(Date.now() + draftTtlMinutes * 60_000)

  interface Ctx {
    readonly i: Interaction
    readonly botId: string
    readonly serverId: string
    readonly member: InteractionMember
    readonly name: string
  }

  const liveForm = (c: Ctx, workflowId: number) =>
    Effect.map(forms.find({ botId: c.botId, serverId: c.serverId }, workflowId), (o) =>
      Option.isNone(o) ? GONE : !o.value.workflow_live ? CLOSED : o.value)

  const openPage = (draft: Draft) =>
    Effect.succeed<InteractionAnswer>({ type: 9, data: pageModal(draft.snapshot, draft.page, `f:page:${draft.id}:${draft.page}`, draft.answers) })

  const start = (c: Ctx, workflowId: number) =>
    Effect.gen(function*() {
      const allowed = yield* limiter.consume({
        algorithm: "fixed-window",
        onExceeded: "fail",
        window: Duration.minutes(1),
        limit: MAX_START_PER_MINUTE,
        key: `form-starts:${c.botId}:${c.member.user.id}`
      }).pipe(Effect.as(true), Effect.catch(() => Effect.succeed(false)))
      if (!allowed) return say("Slow down: you started too many forms this minute; try again in a minute.")
      // Read at once, not one after the other: each waits for a connection of the pool.
      const [form, pending, existing] = yield* Effect.all([
        liveForm(c, workflowId),
        repo.hasPending(workflowId, c.member.user.id),
        repo.draftOf(workflowId, c.member.user.id)
      ], { concurrency: "unbounded" })
      if (typeof form === "string") return say(form)
      if (form.steps.length === 0) return say("This form has no questions yet.")
      if (pending) return say(PENDING)
      if (existing !== undefined && existing.expiresAt.getTime() > Date.now()) return yield* openPage(existing)
      const draft = yield* repo.startDraft({
        id: randomBytes(16).toString("base64url"),
        workflowId,
        userId: c.member.user.id,
        snapshot: form,
        answers: {},
        page: 0,
        expiresAt: ttl()
      })
      return yield* openPage(draft)
    })

  /** The member's own, unexpired draft of a live form; else what they are told. */
  const ownDraft = (c: Ctx, draftId: string) =>
    Effect.gen(function*() {
      const draft = /^[A-Za-z0-9_-]{22}$/.test(draftId) ? yield* repo.draft(draftId) : undefined
      if (draft === undefined) return EXPIRED
      if (draft.userId !== c.member.user.id) return "This form was started by someone else: use /submit to start your own."
      if (draft.expiresAt.getTime() <= Date.now()) {
        yield* repo.removeDraft(draft.id)
        return EXPIRED
      }
      const form = yield* liveForm(c, draft.workflowId)
      return typeof form === "string" ? form : draft
    })

  const submitPage = (c: Ctx, draftId: string, page: number, components: ReadonlyArray<unknown>) =>
    Effect.gen(function*() {
      const draft = yield* ownDraft(c, draftId)
      if (typeof draft === "string") return say(draft)
      const pages = layoutPages(draft.snapshot.steps)
      const continueRow = [buttonRow([{ label: "Continue", custom_id: `f:open:${draft.id}`, style: 1 }])]
      if (page !== draft.page) return say("This page was already saved; continue where you are.", continueRow)
      const read = readPage(pages[page] ?? [], components)
      if (read._tag === "Refused") return say(`These answers cannot be taken: ${read.reason}. Nothing was saved.`)
      const answers = { ...draft.answers, ...read.answers }
      const failed = validationFailures(pages[page]!, read.answers)
      if (failed.length > 0) {
        // Kept for the Fix button (the page reopens filled); the page itself is not saved.
        yield* repo.saveDraft(draft.id, answers, page, ttl())
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
      }, (id) =>
        Effect.gen(function*() {
          // In the transaction: the job exists exactly when the submission does.
          yield* jobs.send(ReviewQueue, { submission_id: id }, { id: jobId("review", id) }).pipe(queueDown)
          // Last: the audit entry's insert locks its server's month counter (audit_counts_add) until
          // the commit, so every other submission of the server waits from here to our commit only.
          yield* audit.append({
            botId: c.botId,
            serverId: c.serverId,
            actor: { userId: c.member.user.id, userName: c.name, avatar: c.member.user.avatar ?? null },
            module: "forms",
            itemIdentifier: draft.workflowId,
            eventType: "PUSH",
            eventString: `submission ${id} received for form ${draft.snapshot.title} (${draft.workflowId})`
          })
        }))
      if (id === undefined) return say(PENDING)
      return say("Submitted — you will get a direct message when it is reviewed")
    })

  const review = (c: Ctx, submissionId: string, decision: "pass" | "drop", priorityText: string | undefined, reason: string | null) =>
    Effect.gen(function*() {
      const s = yield* repo.get(submissionId)
      if (s === undefined || s.botId !== c.botId || s.serverId !== c.serverId) return say("This submission no longer exists.")
      if (!mayReview(c.member, s.snapshot)) return say("You may not review this form's submissions.")
      if (s.status !== "pending") return say(`Already reviewed by ${s.reviewerName ?? "someone"}.`)
      const priority = decision === "pass" ? passPriority(s.snapshot, priorityText) : null
      if (priority === undefined) return say("This button is not known.")
      if (decision === "drop" && reason === null) {
        return {
          type: 9,
          data: {
            custom_id: `r:dropm:${s.id}`,
            title: "Drop this submission",
            components: [{
              type: 18,
              label: "Reason (optional)",
              description: "Sent to the member with the decision.",
              component: { type: 4, custom_id: "reason", style: 2, required: false, max_length: 1000 }
            }]
          }
        } satisfies InteractionAnswer
      }
      const outcome = yield* decide(s.id, {
        decision,
        priority,
        reason: reason === "" ? null : reason,
        reviewerId: c.member.user.id,
        reviewerName: c.name,
        reviewerAvatar: c.member.user.avatar ?? null
      }, { editMessage: false })
      if (outcome._tag === "NotFound") return say("This submission no longer exists.")
      if (outcome._tag === "AlreadyReviewed") return say(`Already reviewed by ${outcome.reviewerName}.`)
      // The review message itself, edited in the answer: its buttons gone, the decision said.
      return {
        type: 7,
        data: { content: decidedLine(decision, c.name, priority), components: [], allowed_mentions: { parse: [] } }
      } satisfies InteractionAnswer
    })

  const dropReason = (components: ReadonlyArray<unknown>): string | undefined => {
    const top = components[0] as { type?: unknown; component?: { custom_id?: unknown; value?: unknown } } | undefined
    if (components.length !== 1 || top?.type !== 18 || top.component?.custom_id !== "reason") return undefined
    const value = top.component.value
    if (value === undefined || value === null) return ""
    return typeof value === "string" && [...value].length <= 1000 ? value : undefined
  }

  const pickList = (c: Ctx) =>
    Effect.map(forms.list({ botId: c.botId, serverId: c.serverId }), (list) => {
      const live = list.filter((f) => f.workflow_live).sort((a, b) => a.title.localeCompare(b.title)).slice(0, 25)
      if (live.length === 0) return say("This server has no open forms.")
      return say("Which form?", [{
        type: 1,
        components: [{
          type: 3,
          custom_id: "f:pick",
          placeholder: "Choose a form",
          options: live.map((f) => ({ label: cut(f.title, 100), value: String(f.workflow_id) }))
        }]
      }])
    })

  const FORM_ID = /^[1-9][0-9]{0,15}$/
  const dispatch = (c: Ctx): Effect.Effect<InteractionAnswer, ServiceUnavailable> => {
    const { i } = c
    if (i.type === InteractionType.COMMAND) {
      const data = command(i.data)
      return Option.isSome(data) && data.value.name === "submit" ? pickList(c) : Effect.succeed(say("This command is not known."))
    }
    if (i.type === InteractionType.COMPONENT) {
      const data = component(i.data)
      if (Option.isNone(data)) return Effect.succeed(say("This component is not known."))
      const parts = data.value.custom_id.split(":")
      const [scope, verb, id, extra] = parts
      if (data.value.custom_id === "f:pick" && data.value.component_type === 3) {
        const value = data.value.values?.length === 1 ? data.value.values[0]! : ""
        return FORM_ID.test(value) ? start(c, Number(value)) : Effect.succeed(say("Choose one of the forms."))
      }
      if (data.value.component_type !== 2) return Effect.succeed(say("This component is not known."))
      if (scope === "f" && verb === "start" && id !== undefined && FORM_ID.test(id) && parts.length === 3) return start(c, Number(id))
      if (scope === "f" && verb === "open" && id !== undefined && parts.length === 3) {
        return Effect.flatMap(ownDraft(c, id), (d) => (typeof d === "string" ? Effect.succeed(say(d)) : openPage(d)))
      }
      if (scope === "r" && verb === "pass" && id !== undefined && parts.length <= 4) return review(c, id, "pass", extra, null)
      if (scope === "r" && verb === "drop" && id !== undefined && parts.length === 3) return review(c, id, "drop", undefined, null)
      const voted = parseVoteCustomId(data.value.custom_id)
      if (voted !== undefined) return vote({ botId: c.botId, serverId: c.serverId, userId: c.member.user.id }, voted)
      return Effect.succeed(say("This button is not known."))
    }
    if (i.type === InteractionType.MODAL_SUBMIT) {
      const data = modal(i.data)
      if (Option.isNone(data)) return Effect.succeed(say("These answers cannot be taken: the form's fields are missing. Nothing was saved."))
      const parts = data.value.custom_id.split(":")
      const [scope, verb, id, page] = parts
      if (scope === "f" && verb === "page" && id !== undefined && page !== undefined && /^[0-9]{1,2}$/.test(page) && parts.length === 4) {
        return submitPage(c, id, Number(page), data.value.components)
      }
      if (scope === "r" && verb === "dropm" && id !== undefined && parts.length === 3) {
        const reason = dropReason(data.value.components)
        return reason === undefined ? Effect.succeed(say("The reason must be at most 1,000 characters.")) : review(c, id, "drop", undefined, reason)
      }
      return Effect.succeed(say("This form is not known."))
    }
    return Effect.succeed(say("This kind of interaction is not handled here."))
  }

  return (i: Interaction) =>
    Effect.gen(function*() {
      const app = yield* apps.byApplication(i.application_id)
      const user = actorOf(i)
      if (app === undefined || user === undefined) return say("This bot is not set up for forms.")
      if (i.guild_id === undefined || i.member === undefined) return say("Forms are filled in a server: use /submit there.")
      const name = displayName(i.member.user, i.member.nick)
      return yield* dispatch({ i, botId: app.botId, serverId: i.guild_id, member: i.member, name })
    })
})

export type FormRuntime = Effect.Success<typeof makeFormRuntime>
export type { StoredForm }
