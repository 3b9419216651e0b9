/**
 * A click on a public summary's ▲ / ▼ button (forms-runtime.md §5), from any member: their one vote
 * on the submission cast, moved or taken back (one statement, ShareStoreSql.ts), then the message
 * answered with UPDATE_MESSAGE (7) showing the counts, rendered by the same rule that posted it,
 * and a `submission-votes` job queued that edits every summary of the submission (the other
 * forwarding channels' too) with the counts it reads (ShareJobs.ts). A queue that is down loses
 * only that round of edits: the vote is stored and the clicked message shows it.
 * A direction the form turned off is refused (ephemeral) and nothing is stored.
 */
import { Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { ephemeral } from "../../services/submissions/Interaction.ts"
import type { InteractionAnswer } from "../../services/submissions/Interaction.ts"
import { summaryMessage } from "../../services/submissions/Share.ts"
import type { VoteDirection } from "../../services/submissions/Share.ts"
import { shareInputOf } from "../../services/submissions/ShareInput.ts"
import { JobEngine } from "../../services/jobs/JobEngine.ts"
import { SubmissionsRepo } from "../../services/submissions/SubmissionsRepo.ts"
import { VotesQueue } from "./ShareJobs.ts"
import { makeShareStore } from "./ShareStoreSql.ts"

export interface Voter {
  readonly botId: string
  readonly serverId: string
  readonly userId: string
}

export const makeShareVotes = Effect.gen(function*() {
  const repo = yield* SubmissionsRepo
  const store = yield* makeShareStore
  const jobs = yield* JobEngine
  return (voter: Voter, vote: { readonly direction: VoteDirection; readonly submissionId: string }): Effect.Effect<InteractionAnswer, ServiceUnavailable> =>
    Effect.gen(function*() {
      const s = yield* repo.get(vote.submissionId)
      if (s === undefined || s.botId !== voter.botId || s.serverId !== voter.serverId) return ephemeral("This submission no longer exists.")
      if (s.status !== "accepted") return ephemeral("Only accepted submissions take votes.")
      if (vote.direction === "up" ? s.snapshot.disable_upvote : s.snapshot.disable_downvote) {
        return ephemeral(`${vote.direction === "up" ? "Upvotes" : "Downvotes"} are turned off for this form.`)
      }
      yield* store.vote(s.id, voter.userId, vote.direction)
      const votes = yield* store.votes(s.id)
      yield* jobs.send(VotesQueue, { submission_id: s.id }, { singletonKey: s.id }).pipe(
        Effect.catch((error) => Effect.logWarning("the other summaries' vote counts will not be updated this time", { submission: s.id, error: error.message }))
      )
      const body = summaryMessage(shareInputOf({ ...s, votes }))
      return { type: 7, data: body } satisfies InteractionAnswer
    })
})
