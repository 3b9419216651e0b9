/**
 * A stored submission as the submissions routes show it (forms-runtime.md §6), pure: the summary of
 * the list, and the detail with the answers read against the form's snapshot (the steps as they
 * were when the member started), the review's reason, the votes and the effects.
 */
import type { SubmissionDetail, SubmissionSummary } from "../../domain/submissions/Submission.ts"
import type { Submission } from "./SubmissionsRepo.ts"

const iso = (d: Date | null) => (d === null ? null : d.toISOString())

export const toSummary = (s: Submission): SubmissionSummary => ({
  id: s.id,
  user_id: s.userId,
  user_name: s.userName,
  status: s.status,
  priority: s.priority,
  created_at: s.createdAt.toISOString(),
  reviewed_at: iso(s.reviewedAt),
  reviewer_name: s.reviewerName
})

/** The submission as the detail route answers it: its votes and card as the repository counts and keeps them (§5). */
export const toDetail = (s: Submission): SubmissionDetail => ({
  ...toSummary(s),
  answers: s.snapshot.steps.map((step) => ({
    step_id: step.step_id,
    question: step.string,
    alias: step.alias === "" ? null : step.alias,
    // Keyed by step id, as ModalAnswers stores them (a modal input's custom id is `s<step_id>`).
    answer: s.answers[String(step.step_id)] ?? "",
    private: step.taskboard_mapping === "Private"
  })),
  reason: s.reason,
  votes: s.votes,
  card_url: s.cardUrl,
  effects: s.effects.map((e) => ({ kind: e.kind, state: e.state, reason: e.reason, channel_id: e.channel_id, message_id: e.message_id }))
})
