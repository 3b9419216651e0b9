/**
 * The review message of a submission in the form's authorization channel (forms-runtime.md §4),
 * pure: an embed (title, colour, the member as author, one field per step — name the alias or the
 * question cut to 256, value the answer cut to 1,024 with `…`, Private-mapped steps marked —, footer
 * "Submission <id>"), the roles of `role_mentions` mentioned unless `disable_mentions` with
 * `allowed_mentions` naming exactly them, and the review buttons.
 */
import type { StoredForm } from "../../domain/forms/Form.ts"
import type { PlatformMessageBody } from "../platform/ChatPlatform.ts"
import { buttonRow } from "./Interaction.ts"
import { cut } from "./Pages.ts"
import type { Answers } from "./SubmissionsRepo.ts"

/** The platform's embed limits (all of an embed's text together at most 6,000 characters). */
const FIELD_NAME_MAX = 256
const FIELD_VALUE_MAX = 1024
const EMBED_TOTAL_MAX = 6000

export const PRIORITIES = ["low", "medium", "high"] as const

export interface ReviewInput {
  readonly id: string
  readonly form: StoredForm
  readonly answers: Answers
  readonly userId: string
  readonly userName: string
  readonly userAvatar: string | null
}

const length = (s: string) => [...s].length

/** The review buttons: Pass — low/medium/high and Drop, or Pass and Drop with `disable_priorities`. */
export const reviewButtons = (id: string, form: Pick<StoredForm, "disable_priorities">) =>
  buttonRow([
    ...(form.disable_priorities
      ? [{ label: "Pass", custom_id: `r:pass:${id}`, style: 3 as const }]
      : PRIORITIES.map((p) => ({ label: `Pass — ${p}`, custom_id: `r:pass:${id}:${p}`, style: 3 as const }))),
    { label: "Drop", custom_id: `r:drop:${id}`, style: 4 }
  ])

/** The message, and whether an answer was cut (then the whole submission belongs in a file). */
export const reviewMessage = (s: ReviewInput): { readonly body: PlatformMessageBody; readonly cut: boolean } => {
  const title = cut(s.form.title, 256)
  const footer = `Submission ${s.id}`
  const names = s.form.steps.map((step) => {
    const name = step.alias !== "" ? step.alias : step.string
    return step.taskboard_mapping === "Private" ? cut(`${name} (private)`, FIELD_NAME_MAX) : cut(name, FIELD_NAME_MAX)
  })
  const fixed = length(title) + length(footer) + length(s.userName) + names.reduce((n, x) => n + length(x), 0)
  // Each value's share of what the embed has left, never more than a field holds.
  const share = Math.max(1, Math.min(FIELD_VALUE_MAX, Math.floor((EMBED_TOTAL_MAX - fixed) / Math.max(1, names.length))))
  let wasCut = false
  const fields = s.form.steps.map((step, i) => {
    const answer = s.answers[String(step.step_id)] ?? ""
    const value = answer === "" ? "—" : cut(answer, share)
    if (value !== answer && answer !== "") wasCut = true
    return { name: names[i]!, value, inline: false }
  })
  const roles = s.form.disable_mentions ? [] : s.form.role_mentions
  const embed = {
    title,
    color: parseInt(s.form.color_hex.slice(1), 16),
    author: {
      name: cut(s.userName, 256),
      ...(s.userAvatar === null ? {} : { icon_url: `https://cdn.discordapp.com/avatars/${s.userId}/${s.userAvatar}.png` })
    },
    fields,
    footer: { text: footer }
  }
  return {
    body: {
      ...(roles.length > 0 ? { content: roles.map((r) => `<@&${r}>`).join(" ") } : {}),
      embeds: [embed],
      components: [reviewButtons(s.id, s.form)],
      allowed_mentions: { parse: [], roles }
    },
    cut: wasCut
  }
}

/** The whole submission as text (the file attached when an answer was cut). */
export const submissionText = (s: ReviewInput) =>
  [`${s.form.title} — submission ${s.id} by ${s.userName}`, "", ...s.form.steps.flatMap((step) => [
    `## ${step.alias !== "" ? step.alias : step.string}`,
    s.answers[String(step.step_id)] ?? "",
    ""
  ])].join("\n")
