/**
 * The jobs of a submission (forms-runtime.md §4): its review message in the form's authorization
 * channel, and the member's direct message once reviewed. Each is recorded (`submission_effects`)
 * with what it belongs to, and its job id is derived from the submission, so it is queued once. The
 * review job is queued right after the submission's statement (FormFilling.ts); a process that died
 * in between leaves a pending review message that the minute's sweep queues. A job that runs again
 * (its worker killed after the platform answered) finds the effect done, or posts with the same
 * `nonce` (`enforce_nonce`: the platform answers with the first message): the message is posted once.
 * A refusal that will not heal (a channel's 403/404) is kept on the effect with its reason; closed
 * DMs (50007) are `dm: "closed"`, not a failure. A failure that might have healed (5xx, time-out)
 * fails the attempt, to be retried; on the last attempt it is kept on the effect instead, as
 * ShareJobs.ts does: an effect is never left pending once its job has given up. A panel review's
 * edit of the review message that fails for good is kept on the review message's effect.
 */
import { Effect, Layer, Schema } from "effect"
import { Bots } from "../../services/platform/Bots.ts"
import { ChatPlatform, PlatformRejected } from "../../services/platform/ChatPlatform.ts"
import { JobEngine, JobQueue } from "../../services/jobs/JobEngine.ts"
import type { JobInfo } from "../../services/jobs/JobEngine.ts"
import { failureText } from "../../services/submissions/FailureText.ts"
import { reviewMessage, submissionText } from "../../services/submissions/ReviewMessage.ts"
import { decidedLine, decisionDm } from "../../services/submissions/ReviewRules.ts"
import { SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"

const Job = Schema.Struct({ submission_id: Schema.String })
/** Retries after the first attempt: the attempt with this `retryCount` is the last. */
export const RETRY_LIMIT = 6
const options = { policy: "standard", retryLimit: RETRY_LIMIT, retryDelay: "5 seconds", retryBackoff: true, retryDelayMax: "5 minutes", expireIn: "2 minutes", heartbeat: "10 seconds", deleteAfter: "1 day" } as const

export const ReviewQueue = JobQueue("submission-review", Job, options)
export const DmQueue = JobQueue("submission-dm", Job, options)
export const EditQueue = JobQueue("submission-edit", Job, options)
/** Every minute: the review messages a process stored but died before queuing (FormFilling.ts). */
export const SweepQueue = JobQueue("submission-sweep", Schema.Struct({}), { policy: "short", retryLimit: 0, expireIn: "5 minutes", deleteAfter: "1 day" })
/** How long a stored review message may wait for its job before the sweep queues it. */
export const SWEEP_AFTER_SECONDS = 60
/** Review messages the sweep reads at a time. */
export const SWEEP_PAGE = 200

/** The job id of a submission's effect: one job per (effect, submission), whoever sends it. */
export const jobId = (kind: "review" | "dm" | "edit", submissionId: string) =>
  `00000000-0000-4000-${({ review: "8", dm: "9", edit: "a" })[kind]}000-${BigInt(submissionId).toString(16).padStart(12, "0")}`

const refusalReason = (e: PlatformRejected, where: string) => `The platform refused ${where} (${e.status}${e.code === undefined ? "" : ` ${e.code}`}): ${e.message}`
/** A refusal of a post or an edit that will not heal: the channel or message gone, no access, a body it will never take. */
const refusedForGood = (e: unknown): e is PlatformRejected => e instanceof PlatformRejected && (e.status === 403 || e.status === 404 || e.status === 400)
/** The reason kept when the last attempt still failed in a way that might have healed (ShareJobs.ts's wording). */
const keptFailing = (e: unknown, where: string) => `The platform kept failing for ${where}: ${failureText(e)}`
/** The job's last attempt: its failure would not be retried. */
const lastAttempt = (job: JobInfo) => job.retryCount >= RETRY_LIMIT

export const makeSubmissionJobs = Effect.gen(function*() {
  const repo = yield* SubmissionsRepo
  const chat = yield* ChatPlatform
  const bots = yield* Bots
  const engine = yield* JobEngine

  /** `last`: the job's last attempt, which keeps a failure that might have healed on the effect instead of failing. */
  const postReview = (id: string, last = false) =>
    Effect.gen(function*() {
      const s = yield* repo.get(id)
      const effect = s === undefined ? undefined : s.effects.find((e) => e.kind === "review_message")
      if (s === undefined || effect === undefined || effect.state !== "pending") return
      const bot = yield* bots.get(s.botId)
      if (bot === undefined || s.snapshot.channel_id === null) {
        return yield* repo.settleEffect(id, "review_message", "", { state: "failed", reason: "The form's bot or authorization channel is gone.", messageId: null })
      }
      const input = { id, form: s.snapshot, answers: s.answers, userId: s.userId, userName: s.userName, userAvatar: s.userAvatar }
      const message = reviewMessage(input)
      const cut = message.cut
      // Decided before it was posted (a panel review): posted as decided, without buttons.
      const body = s.status === "pending"
        ? message.body
        : { ...message.body, content: decidedLine(s.status === "accepted" ? "pass" : "drop", s.reviewerName ?? "", s.priority), components: [] }
      // An answer cut to fit: the whole submission attached as a text file.
      const filename = `submission-${id}.txt`
      const file = cut ? { attachments: [{ id: 0, filename }], files: [{ filename, content: submissionText(input) }] } : {}
      const posted = yield* chat.createMessage(bot.token, s.snapshot.channel_id, { ...body, ...file, nonce: `review-${id}`, enforce_nonce: true }).pipe(
        Effect.map((messageId) => ({ state: "done" as const, reason: null, messageId })),
        Effect.catchIf(refusedForGood, (e) =>
          Effect.succeed({ state: "failed" as const, reason: refusalReason(e, `the review message in channel ${s.snapshot.channel_id}`), messageId: null })),
        Effect.catchIf(() => last, (e) =>
          Effect.succeed({ state: "failed" as const, reason: keptFailing(e, `the review message in channel ${s.snapshot.channel_id}`), messageId: null }))
      )
      yield* repo.settleEffect(id, "review_message", "", posted)
    })

  const sendDm = (id: string, last = false) =>
    Effect.gen(function*() {
      const s = yield* repo.get(id)
      const effect = s === undefined ? undefined : s.effects.find((e) => e.kind === "dm")
      if (s === undefined || effect === undefined || effect.state !== "pending" || s.status === "pending") return
      const bot = yield* bots.get(s.botId)
      if (bot === undefined) return yield* repo.settleEffect(id, "dm", "", { state: "failed", reason: "The form's bot is gone.", messageId: null })
      const serverName = yield* chat.getGuild(bot.token, s.serverId).pipe(Effect.map((g) => g.name), Effect.orElseSucceed(() => "the server"))
      const content = decisionDm({
        formTitle: s.snapshot.title,
        serverName,
        decision: s.status === "accepted" ? "pass" : "drop",
        reason: s.reason,
        reviewerName: s.reviewerName ?? "",
        anonymize: s.snapshot.anonymize_rejection
      })
      const sent = yield* chat.sendDirectMessage(bot.token, s.userId, { content, allowed_mentions: { parse: [] } }).pipe(
        Effect.map((messageId) => ({ dm: "sent" as const, outcome: { state: "done" as const, reason: null, messageId } })),
        Effect.catchIf(
          (e): e is PlatformRejected => e instanceof PlatformRejected && e.status >= 400 && e.status < 500 && e.status !== 429,
          (e) =>
            Effect.succeed(e.code === 50007
              ? { dm: "closed" as const, outcome: { state: "done" as const, reason: "The member takes no direct messages from the bot (50007).", messageId: null } }
              : { dm: undefined, outcome: { state: "failed" as const, reason: refusalReason(e, "the direct message"), messageId: null } })
        ),
        Effect.catchIf(() => last, (e) =>
          Effect.succeed({ dm: undefined, outcome: { state: "failed" as const, reason: keptFailing(e, "the direct message"), messageId: null } }))
      )
      yield* repo.settleDm(id, sent.dm, sent.outcome)
    })

  /**
   * A panel review's edit of the review message: its buttons gone, the decision said. An edit that
   * fails for good (refused, or still failing on the last attempt) is kept on the review message's
   * effect: `failed` with its reason, the message's id kept (it was posted, but still shows its buttons).
   */
  const editReview = (id: string, last = false) =>
    Effect.gen(function*() {
      const s = yield* repo.get(id)
      const posted = s?.effects.find((e) => e.kind === "review_message")
      // Not posted yet: the post job posts it as decided.
      if (s === undefined || s.status === "pending" || posted?.message_id == null || posted.channel_id === null) return
      const where = `the edit of the review message in channel ${posted.channel_id}`
      const bot = yield* bots.get(s.botId)
      const failure = bot === undefined
        ? "The form's bot is gone; the review message was not edited."
        : yield* chat.editMessage(bot.token, posted.channel_id, posted.message_id, {
          content: decidedLine(s.status === "accepted" ? "pass" : "drop", s.reviewerName ?? "", s.priority),
          components: [],
          allowed_mentions: { parse: [] }
        }).pipe(
          Effect.as(undefined),
          Effect.catchIf(refusedForGood, (e) => Effect.succeed(refusalReason(e, where))),
          Effect.catchIf(() => last, (e) => Effect.succeed(keptFailing(e, where)))
        )
      if (failure === undefined) return
      yield* Effect.logWarning("the review message could not be edited", { submission: id, reason: failure })
      yield* repo.settleEffect(id, "review_message", "", { state: "failed", reason: failure, messageId: null })
    })

  /**
   * Queues the review job of every review message pending for over a minute, in pages by submission
   * (those whose job still retries through an outage do not hide the ones after them). One whose job
   * exists (waiting, retrying, or failed and kept) is left alone: the job id is the submission's.
   */
  const sweep = (page = SWEEP_PAGE) => Effect.gen(function*() {
    let queued = 0
    let after = "0"
    for (;;) {
      const ids = yield* repo.unqueuedReviews(SWEEP_AFTER_SECONDS, page, after)
      for (const id of ids) {
        const sent = yield* engine.send(ReviewQueue, { submission_id: id }, { id: jobId("review", id) })
        // Stryker disable next-line all: the count is only logged
        if (sent._tag === "Some") queued++
      }
      if (ids.length < page) break
      after = ids[ids.length - 1]!
    }
    // Stryker disable next-line all: log only
    if (queued > 0) yield* Effect.logWarning("queued review messages a process had stored without their job", { queued })
  })

  return { postReview, sendDm, editReview, sweep }
})

const logFailure = (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.tapError(self, (error) => Effect.logWarning(`${what} failed; the job will be retried`, error))

/** A worker's share of the submissions' jobs. Needs SubmissionsRepo, ChatPlatform, Bots, JobEngine. */
export const SubmissionWorker = Layer.effectDiscard(Effect.gen(function*() {
  const engine = yield* JobEngine
  const run = yield* makeSubmissionJobs
  yield* engine.work(ReviewQueue, ({ submission_id }, job) => run.postReview(submission_id, lastAttempt(job)).pipe(logFailure(`the review message of submission ${submission_id}`)), {
    batchSize: 5,
    localConcurrency: 6,
    burst: true,
    pollingInterval: "0.5 seconds"
  })
  yield* engine.work(EditQueue, ({ submission_id }, job) => run.editReview(submission_id, lastAttempt(job)).pipe(logFailure(`the review message's edit of submission ${submission_id}`)), {
    batchSize: 5,
    pollingInterval: "0.5 seconds"
  })
  yield* engine.work(SweepQueue, () => run.sweep().pipe(logFailure("the sweep of unqueued review messages")))
  yield* engine.schedule(SweepQueue, "* * * * *", {}, { key: "submissions" })
  yield* engine.work(DmQueue, ({ submission_id }, job) => run.sendDm(submission_id, lastAttempt(job)).pipe(logFailure(`the direct message of submission ${submission_id}`)), {
    batchSize: 5,
    pollingInterval: "0.5 seconds"
  })
}))
