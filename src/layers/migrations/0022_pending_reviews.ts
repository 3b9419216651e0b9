import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The review messages still to post (forms-runtime.md §4): a submission is stored in one durable
 * statement and its review job queued right after it, outside it, so its audit entry's counter row
 * is not held through a round trip. A process that dies between the two leaves a pending review
 * message with no job; a sweep every minute queues those again (SubmissionJobs.ts), in pages by
 * submission id. This index keeps that sweep off the effects already settled, however many there are.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX submission_effects_pending ON submission_effects (submission_id) WHERE state = 'pending' AND kind = 'review_message'`
})
