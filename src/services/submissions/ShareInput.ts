/**
 * A stored submission as the share rules read it (services/submissions/Share.ts): the snapshot's
 * steps with their mapping (an unknown mapping is none), the answers by step id, the member with
 * their avatar's URL, the votes and the card link.
 */
import type { ShareInput, ShareMapping } from "./Share.ts"
import type { Submission } from "./SubmissionsRepo.ts"

const MAPPINGS: ReadonlyArray<ShareMapping> = ["Title", "Description", "List", "Label", "Attachment", "Private"]

const mappingOf = (m: string): ShareMapping => (MAPPINGS as ReadonlyArray<string>).includes(m) ? m as ShareMapping : ""

export const shareInputOf = (s: Submission): ShareInput => ({
  submission_id: s.id,
  form: {
    title: s.snapshot.title,
    color_hex: s.snapshot.color_hex,
    taskboard_integration: s.snapshot.taskboard_integration,
    anonymize: s.snapshot.anonymize,
    highlight_attachments: s.snapshot.highlight_attachments,
    extended_embed: s.snapshot.extended_embed,
    disable_upvote: s.snapshot.disable_upvote,
    disable_downvote: s.snapshot.disable_downvote,
    public_mentions: s.snapshot.public_mentions,
    steps: s.snapshot.steps.map((step) => ({
      step_id: String(step.step_id),
      string: step.string,
      alias: step.alias,
      taskboard_mapping: mappingOf(step.taskboard_mapping)
    }))
  },
  answers: s.answers,
  member: {
    id: s.userId,
    name: s.userName,
    avatar_url: s.userAvatar === null ? null : `https://cdn.discordapp.com/avatars/${s.userId}/${s.userAvatar}.png`
  },
  priority: s.priority,
  card_url: s.cardUrl,
  votes: s.votes
})

/** Whether a form shares to a task board: the integration on and a real board (not `-1` / `0`). */
export const sharesToBoard = (s: Pick<Submission, "snapshot">) =>
  s.snapshot.taskboard_integration && /^[0-9a-f]{24}$/.test(s.snapshot.taskboard_board)
