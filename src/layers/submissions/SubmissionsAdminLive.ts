/**
 * The submissions and publications routes' service (forms-runtime.md §2, §6) over SQL, the chat
 * platform and the job engine. Publishing is an API call, not an interaction: the start message is
 * posted inline and a platform refusal answered in the envelope. A panel review is the buttons'
 * decision (ReviewDecision.ts) with the review message's edit queued.
 */
import { Effect, Layer, Option, Result } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound } from "../../domain/infra/Errors.ts"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { RequestTimeout, Unauthorized } from "../../domain/infra/Errors.ts"
import { JobEngine } from "../../services/jobs/JobEngine.ts"
import type { Problem } from "../../domain/infra/Errors.ts"
import { isStorableFormId } from "../../domain/infra/Ids.ts"
import type { StoredForm } from "../../domain/forms/Form.ts"
import { AuditLog } from "../../services/audit/AuditLog.ts"
import { pageMax, parseAuditQuery } from "../../services/audit/AuditQuery.ts"
import { FormsRepo } from "../../services/forms/FormsRepo.ts"
import { ChatPlatform, PlatformRejected, rejectedToApiError } from "../../services/platform/ChatPlatform.ts"
import type { PlatformError } from "../../services/platform/ChatPlatform.ts"
import type { ServerAccess } from "../../services/platform/Directory.ts"
import { PublicationsRepo } from "../../services/submissions/Publications.ts"
import { checkReview } from "../../services/submissions/ReviewRequest.ts"
import { PUBLISHABLE_CHANNEL_TYPES, startMessage } from "../../services/submissions/StartMessage.ts"
import { SubmissionsAdmin } from "../../services/submissions/SubmissionsAdmin.ts"
import { SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import type { SubmissionStatus } from "../../services/submissions/SubmissionsRepo.ts"
import { toDetail, toSummary } from "../../services/submissions/SubmissionView.ts"
import { makeReviewDecision } from "./ReviewDecision.ts"
import { DmQueue, EditQueue } from "./SubmissionJobs.ts"

const STATUSES: ReadonlyArray<SubmissionStatus> = ["pending", "accepted", "denied"]
const problem = (path: string, message: string): Problem => ({ message, additionalProperties: { path } })

/** A platform refusal of a bot's call as the API answers it; a 403 says what the bot may not do. */
const refusal = (what: string, doing: string) => (e: PlatformError): Effect.Effect<never, NotFound | Forbidden | Unauthorized | RequestTimeout | ServiceUnavailable> =>
  e instanceof PlatformRejected
    ? Effect.fail(e.status === 403 ? Forbidden.of(`The bot may not ${doing} on the chat platform (${e.message}).`) : rejectedToApiError(e, what, "bot"))
    : Effect.fail(e)

export const SubmissionsAdminLive = Layer.effect(SubmissionsAdmin, Effect.gen(function*() {
  const forms = yield* FormsRepo
  const repo = yield* SubmissionsRepo
  const publications = yield* PublicationsRepo
  const chat = yield* ChatPlatform
  const audit = yield* AuditLog
  const decide = yield* makeReviewDecision
  const jobs = yield* JobEngine
  // The review's jobs are queued inside its transaction, where a queue cannot be declared: an
  // API-only process (ROLE=api) declares them first, once.
  let declared = false
  const declareQueues = Effect.suspend(() =>
    declared ? Effect.void : Effect.forEach([DmQueue, EditQueue], (q) => jobs.declare(q), { discard: true }).pipe(
      Effect.tap(() => Effect.sync(() => { declared = true })),
      Effect.mapError(() => ServiceUnavailable.of("The job queue cannot take the review now.", 5))
    ))

  const formOf = (access: ServerAccess, formId: number) =>
    Effect.flatMap(
      isStorableFormId(formId) ? forms.find({ botId: access.botId, serverId: access.serverId }, formId) : Effect.succeed(Option.none<StoredForm>()),
      (form) => (Option.isNone(form) ? Effect.fail(NotFound.of(`Form ${formId} does not exist on this server.`)) : Effect.succeed(form.value))
    )

  const channelName = (access: ServerAccess, channelId: string) => access.channels.find((c) => c.id === channelId)?.name ?? channelId

  const record = (access: ServerAccess, form: StoredForm, eventString: string) =>
    audit.append({
      botId: access.botId,
      serverId: access.serverId,
      actor: access.actor,
      module: "forms",
      itemIdentifier: form.workflow_id,
      eventType: "PATCH",
      eventString
    })

  /** The submission of this form on this server, else 404 (ids of other forms or servers name nothing here). */
  const submissionOf = (access: ServerAccess, formId: number, submissionId: string) =>
    Effect.gen(function*() {
      const missing = NotFound.of(`Submission ${submissionId} does not exist on form ${formId}.`)
      const form = yield* formOf(access, formId)
      const s = /^[1-9][0-9]{0,17}$/.test(submissionId) ? yield* repo.get(submissionId) : undefined
      if (s === undefined || s.workflowId !== form.workflow_id || s.botId !== access.botId || s.serverId !== access.serverId) return yield* missing
      return s
    })

  return SubmissionsAdmin.of({
    publish: Effect.fn("SubmissionsAdmin.publish")(function*(access, formId, input) {
      const form = yield* formOf(access, formId)
      const problems: Array<Problem> = []
      const channel = access.channels.find((c) => c.id === input.channel_id)
      if (channel === undefined) problems.push(problem("channel_id", `Channel ${input.channel_id} is not a channel of this server.`))
      else if (!PUBLISHABLE_CHANNEL_TYPES.includes(channel.type)) problems.push(problem("channel_id", `#${channel.name} is not a text or news channel.`))
      if (form.steps.length === 0) problems.push(problem("form.steps", "The form has no steps: add a question before publishing it."))
      if (form.channel_id === null) problems.push(problem("form.channel_id", "The form has no authorization channel (channel_id): set one before publishing it."))
      if (problems.length > 0) return yield* BadRequest.many(problems)
      const messageId = yield* chat.createMessage(access.botToken, input.channel_id, startMessage(form)).pipe(
        Effect.catch(refusal(`Channel ${input.channel_id}`, `post in #${channelName(access, input.channel_id)}`))
      )
      yield* publications.add(
        { workflowId: form.workflow_id, channelId: input.channel_id, messageId },
        record(access, form, `form published in #${channelName(access, input.channel_id)}`)
      ).pipe(
        // Not recorded (the database failed): the message would be listed nowhere, so it goes again.
        Effect.onError(() => Effect.ignore(chat.deleteMessage(access.botToken, input.channel_id, messageId)))
      )
      return { channel_id: input.channel_id, message_id: messageId }
    }),
    publications: Effect.fn("SubmissionsAdmin.publications")(function*(access, formId) {
      const form = yield* formOf(access, formId)
      const list = yield* publications.list(form.workflow_id)
      return { publications: list.map((p) => ({ channel_id: p.channelId, message_id: p.messageId, created_at: p.createdAt.toISOString() })) }
    }),
    unpublish: Effect.fn("SubmissionsAdmin.unpublish")(function*(access, formId, messageId) {
      const form = yield* formOf(access, formId)
      const p = yield* publications.find(form.workflow_id, messageId)
      if (p === undefined) return yield* NotFound.of(`Form ${formId} has no publication with message ${messageId}.`)
      // A message already gone on the platform (deleted by hand, its channel gone) still leaves the list.
      yield* chat.deleteMessage(access.botToken, p.channelId, p.messageId).pipe(
        Effect.catchIf((e): e is PlatformRejected => e instanceof PlatformRejected && e.status === 404, () => Effect.void),
        Effect.catch(refusal(`Message ${messageId}`, `delete the start message in #${channelName(access, p.channelId)}`))
      )
      yield* publications.remove(form.workflow_id, messageId, record(access, form, `form unpublished from #${channelName(access, p.channelId)}`))
      return { success: true }
    }),
    list: Effect.fn("SubmissionsAdmin.list")(function*(access, formId, query) {
      const problems: Array<Problem> = []
      const status = query.status === undefined ? undefined : STATUSES.find((s) => s === query.status)
      if (query.status !== undefined && status === undefined) problems.push(problem("status", `status must be one of ${STATUSES.join(", ")}`))
      const paging = parseAuditQuery({
        ...(query.page === undefined ? {} : { page: query.page }),
        ...(query.page_size === undefined ? {} : { page_size: query.page_size })
      })
      if (Result.isFailure(paging)) problems.push(...paging.failure.problems)
      const form = yield* formOf(access, formId)
      if (problems.length > 0 || Result.isFailure(paging)) return yield* BadRequest.many(problems)
      const { page, pageSize } = paging.success
      // Past the last page: an empty page (a huge page number never reaches the database as such).
      const offset = Math.min((page - 1) * pageSize, Number.MAX_SAFE_INTEGER)
      const read = yield* repo.list(form.workflow_id, { ...(status === undefined ? {} : { status }), offset, limit: pageSize })
      return { submissions: read.submissions.map(toSummary), page, page_size: pageSize, page_max: pageMax(read.total, pageSize) }
    }),
    get: Effect.fn("SubmissionsAdmin.get")(function*(access, formId, submissionId) {
      return toDetail(yield* submissionOf(access, formId, submissionId))
    }),
    review: Effect.fn("SubmissionsAdmin.review")(function*(access, formId, submissionId, input) {
      const s = yield* submissionOf(access, formId, submissionId)
      const checked = checkReview(input, s.snapshot)
      if (Result.isFailure(checked)) return yield* checked.failure
      const already = (name: string) => Conflict.of(`Submission ${s.id} was already reviewed by ${name}.`, { reviewer_name: name })
      if (s.status !== "pending") return yield* already(s.reviewerName ?? "someone")
      yield* declareQueues
      const outcome = yield* decide(s.id, {
        ...checked.success,
        reviewerId: access.actor.userId,
        reviewerName: access.actor.userName,
        reviewerAvatar: access.actor.avatar
      }, { editMessage: true })
      if (outcome._tag === "NotFound") return yield* NotFound.of(`Submission ${submissionId} does not exist on form ${formId}.`)
      if (outcome._tag === "AlreadyReviewed") return yield* already(outcome.reviewerName)
      return toDetail((yield* repo.get(s.id)) ?? outcome.submission)
    })
  })
}))
