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

/**
 * The largest `cap` with Σ min(length, cap) ≤ `budget` (Infinity when every length fits): texts
 * longer than it are cut to it, shorter ones kept whole, so a long answer takes what short ones leave.
 */
export const fairCap = (lengths: ReadonlyArray<number>, budget: number): number => {
  const sorted = [...lengths].sort((a, b) => a - b)
  let left = budget
  // Stryker disable next-line EqualityOperator: equivalent, one more pass past the end adds NaN and returns Infinity, as the end does
  for (let i = 0; i < sorted.length; i++) {
    const others = sorted.length - i
    if (sorted[i]! * others > left) return Math.max(1, Math.floor(left / others))
    left -= sorted[i]!
  }
  return Infinity
}

const PRIVATE_MARK = " (private)"

/** The message, and whether an answer was cut (then the whole submission belongs in a file). */
export const reviewMessage = (s: ReviewInput): { readonly body: PlatformMessageBody; readonly cut: boolean } => {
  const title = cut(s.form.title, 256)
  const footer = `Submission ${s.id}`
  const author = cut(s.userName, 256)
  // What the fields may take of the embed's 6,000. The names get what the values leave, and at
  // least half when both cannot fit (the answers are what a reviewer reads; the file has the rest);
  // then the values get what the names leave. Every text is cut no more than that needs.
  const budget = EMBED_TOTAL_MAX - length(title) - length(footer) - length(author)
  const steps = s.form.steps.map((step) => {
    const mark = step.taskboard_mapping === "Private" ? PRIVATE_MARK : ""
    const base = step.alias !== "" ? step.alias : step.string
    return { step, mark, base, answer: s.answers[String(step.step_id)] ?? "" }
  })
  const wanted = steps.map((x) => Math.min(FIELD_NAME_MAX, length(x.base) + length(x.mark)))
  const valuesWanted = steps.reduce((n, x) => n + (x.answer === "" ? 1 : Math.min(FIELD_VALUE_MAX, length(x.answer))), 0)
  const nameCap = fairCap(wanted, Math.max(budget - valuesWanted, Math.floor(budget / 2)))
  // The mark is kept whole: it is what says a Private-mapped answer is in this message.
  const names = steps.map((x, i) => cut(x.base, Math.min(wanted[i]!, nameCap) - length(x.mark)) + x.mark)
  const valueCap = fairCap(
    steps.map((x) => (x.answer === "" ? 1 : Math.min(FIELD_VALUE_MAX, length(x.answer)))),
    budget - names.reduce((n, x) => n + length(x), 0)
  )
  let wasCut = false
  const fields = steps.map((x, i) => {
    const value = x.answer === "" ? "—" : cut(x.answer, Math.min(FIELD_VALUE_MAX, valueCap))
    if (value !== x.answer && x.answer !== "") wasCut = true
    return { name: names[i]!, value, inline: false }
  })
  const roles = s.form.disable_mentions ? [] : s.form.role_mentions
  const embed = {
    title,
    color: parseInt(s.form.color_hex.slice(1), 16),
    author: {
      name: author,
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
