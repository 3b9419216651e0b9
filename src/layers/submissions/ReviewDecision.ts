/**
 * A review decided (forms-runtime.md §4, §6), by a button or from the panel: exactly one review
 * wins (the repository's conditional UPDATE); in its transaction the member's DM is recorded and
 * queued, the audit entry written, and — for a review from the panel, whose answer cannot edit the
 * message as a button's does — the review message's edit queued. For the submissions routes too.
 */
import { Effect } from "effect"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { AuditLog } from "../../services/audit/AuditLog.ts"
import { JobEngine } from "../../services/jobs/JobEngine.ts"
import { SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import type { Review } from "../../services/submissions/SubmissionsRepo.ts"
import { shareEffects, shareJobId, ShareQueue } from "./ShareJobs.ts"
import { DmQueue, EditQueue, jobId } from "./SubmissionJobs.ts"

const queueDown = Effect.mapError(() => ServiceUnavailable.of("The job queue cannot take the review now.", 5))

export const makeReviewDecision = Effect.gen(function*() {
  const repo = yield* SubmissionsRepo
  const jobs = yield* JobEngine
  const audit = yield* AuditLog
  return (
    submissionId: string,
    review: Review & {
      readonly reviewerAvatar: string | null
      /** The reviewer's account username, for the audit entry (decisions.md); `reviewerName` when absent. */
      readonly reviewerUsername?: string
    },
    options: { readonly editMessage: boolean }
  ) =>
    repo.review(submissionId, review, (decided) =>
      Effect.gen(function*() {
        yield* repo.addEffect(decided.id, "dm", "", null)
        yield* jobs.send(DmQueue, { submission_id: decided.id }, { id: jobId("dm", decided.id) }).pipe(queueDown)
        // A Pass shares (forms-runtime.md §5): its summaries and card recorded here, sent by one job.
        const share = review.decision === "pass" ? shareEffects(decided) : []
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: `discard` only drops the results, which nothing reads
        yield* Effect.forEach(share, (e) => repo.addEffect(decided.id, e.kind, e.target, e.channelId), { discard: true })
        if (share.length > 0) yield* jobs.send(ShareQueue, { submission_id: decided.id }, { id: shareJobId(decided.id) }).pipe(queueDown)
        if (options.editMessage) {
          yield* jobs.send(EditQueue, { submission_id: decided.id }, { id: jobId("edit", decided.id) }).pipe(queueDown)
        }
        yield* audit.append({
          botId: decided.botId,
          serverId: decided.serverId,
          actor: { userId: review.reviewerId, userName: review.reviewerUsername ?? review.reviewerName, avatar: review.reviewerAvatar },
          module: "forms",
          itemIdentifier: decided.workflowId,
          eventType: "PATCH",
          eventString: `submission ${decided.id} ${review.decision === "pass" ? "passed" : "dropped"}`
        })
      }))
})
