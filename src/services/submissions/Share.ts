/**
 * What an accepted submission shares (forms-runtime.md §5), as pure rules: the public summary's
 * message body (Discord) and the task-board card to create. Privacy rides on them: a
 * Private-mapped answer is read by neither, so it cannot reach a channel or the board. Input is a
 * plain JSON-shaped snapshot (the runtime adapts its own records to it).
 */
import { codePointLength, truncate } from "../delivery/render/Text.ts"

/** A step's task-board mapping; `""` is unset. */
export type ShareMapping = "Title" | "Description" | "List" | "Label" | "Attachment" | "Private" | ""

export interface ShareStep {
  readonly step_id: string
  /** The question. */
  readonly string: string
  /** `""` when unset (the question names it then). */
  readonly alias: string
  readonly taskboard_mapping: ShareMapping
}

export interface ShareForm {
  readonly title: string
  /** `#rrggbb`. */
  readonly color_hex: string
  readonly taskboard_integration: boolean
  readonly anonymize: boolean
  readonly highlight_attachments: boolean
  readonly extended_embed: boolean
  readonly disable_upvote: boolean
  readonly disable_downvote: boolean
  /** Role ids mentioned in the summary. */
  readonly public_mentions: ReadonlyArray<string>
  readonly steps: ReadonlyArray<ShareStep>
}

export interface ShareMember {
  readonly id: string
  readonly name: string
  readonly avatar_url: string | null
}

/** An answer: a text, or a select's choices. */
export type ShareAnswer = string | ReadonlyArray<string>

export interface ShareInput {
  readonly submission_id: string
  readonly form: ShareForm
  /** By step id; a step without an answer is left out. */
  readonly answers: Readonly<Record<string, ShareAnswer>>
  readonly member: ShareMember
  readonly priority: string | null
  readonly card_url: string | null
  readonly votes: { readonly up: number; readonly down: number }
}

/** Discord's embed limits (characters are code points). */
export const EMBED_LIMITS = { title: 256, description: 4096, fields: 25, fieldName: 256, fieldValue: 1024, authorName: 256, total: 6000 }
/** Trello's card limits. */
export const CARD_LIMITS = { name: 16384, desc: 16384 }

export interface EmbedField { readonly name: string; readonly value: string; readonly inline: boolean }

export interface SummaryEmbed {
  readonly title: string
  readonly color: number
  readonly url?: string
  readonly description?: string
  readonly author?: { readonly name: string; readonly icon_url?: string }
  readonly fields: ReadonlyArray<EmbedField>
}

export interface VoteButton { readonly type: 2; readonly style: 2; readonly label: string; readonly custom_id: string }

export interface SummaryMessage {
  readonly content: string
  readonly allowed_mentions: { readonly parse: ReadonlyArray<never>; readonly roles: ReadonlyArray<string> }
  readonly embeds: ReadonlyArray<SummaryEmbed>
  readonly components: ReadonlyArray<{ readonly type: 1; readonly components: ReadonlyArray<VoteButton> }>
}

export interface CardPlan {
  readonly name: string
  /** `{Alias}: {Text}` lines. */
  readonly desc: string
  /** The list to put it in; null: the board's first open list. */
  readonly list_name: string | null
  readonly label_names: ReadonlyArray<string>
  readonly attachment_urls: ReadonlyArray<string>
}

export type VoteDirection = "up" | "down"

/** A vote button's custom id, and back (undefined for any other custom id). */
export const voteCustomId = (direction: VoteDirection, submissionId: string) => `share:vote:${direction}:${submissionId}`
export const parseVoteCustomId = (customId: string): { readonly direction: VoteDirection; readonly submissionId: string } | undefined => {
  const m = /^share:vote:(up|down):(.+)$/.exec(customId)
  return m === null ? undefined : { direction: m[1] as VoteDirection, submissionId: m[2]! }
}

const textOf = (answer: ShareAnswer): string => (typeof answer === "string" ? answer : answer.join(", ")).trim()
const valuesOf = (answer: ShareAnswer): ReadonlyArray<string> =>
  (typeof answer === "string" ? [answer] : answer).map((v) => v.trim()).filter((v) => v !== "")

/** The answered steps of a mapping, in the form's order; Private ones are never returned (not even by asking). */
const answered = (input: ShareInput, keep: (mapping: ShareMapping) => boolean) =>
  input.form.steps.flatMap((step) => {
    const answer = input.answers[step.step_id]
    return step.taskboard_mapping !== "Private" && keep(step.taskboard_mapping) && answer !== undefined && textOf(answer) !== ""
      ? [{ step, answer }]
      : []
  })

const isUrl = (s: string) => /^https?:\/\/[^\s<>]+$/i.test(s)
const nameOf = (step: ShareStep) => (step.alias.trim() === "" ? step.string : step.alias)

/** The URLs among an Attachment answer's words (an upload step may hold several). */
const urlsOf = (answer: ShareAnswer) =>
  // Stryker disable next-line ArrayDeclaration: valuesOf keeps only values with a non-space character, so match is never null.
  valuesOf(answer).flatMap((v) => v.match(/\S+/g) ?? []).filter(isUrl)

/** The card to create on the board (task-board mode). */
export const cardPlan = (input: ShareInput): CardPlan => {
  const first = (mapping: ShareMapping) => answered(input, (m) => m === mapping)[0]
  const title = first("Title")
  const list = first("List")
  const labels = answered(input, (m) => m === "Label").flatMap(({ answer }) => valuesOf(answer))
  const priority = input.priority === null ? [] : [`Priority: ${input.priority}`]
  return {
    name: truncate(title === undefined ? input.form.title : textOf(title.answer), CARD_LIMITS.name),
    desc: truncate(
      answered(input, (m) => m === "Description").map(({ answer, step }) => `${nameOf(step)}: ${textOf(answer)}`).join("\n"),
      CARD_LIMITS.desc
    ),
    list_name: list === undefined ? null : textOf(list.answer),
    label_names: [...new Set([...labels, ...priority])],
    attachment_urls: [...new Set(answered(input, (m) => m === "Attachment").flatMap(({ answer }) => urlsOf(answer)))]
  }
}

const fieldOf = (name: string, value: string): EmbedField => ({
  name: truncate(name, EMBED_LIMITS.fieldName),
  value: truncate(value, EMBED_LIMITS.fieldValue),
  inline: false
})

/** The `Attachments` field: each Attachment answer's URLs as links named by the step; an answer without a URL as its text. */
const attachmentsField = (input: ShareInput): ReadonlyArray<EmbedField> => {
  const lines = answered(input, (m) => m === "Attachment").flatMap(({ answer, step }) => {
    const urls = urlsOf(answer)
    return urls.length === 0 ? [textOf(answer)] : urls.map((url) => `[${nameOf(step)}](${url})`)
  })
  return lines.length === 0 ? [] : [fieldOf("Attachments", lines.join("\n"))]
}

const size = (f: EmbedField) => codePointLength(f.name) + codePointLength(f.value)

/** The first fields that fit in `max` fields and in the embed's total after `used` characters. */
const withinLimits = (fields: ReadonlyArray<EmbedField>, used: number, max: number): ReadonlyArray<EmbedField> => {
  const kept: Array<EmbedField> = []
  let total = used
  for (const field of fields) {
    if (kept.length === max || total + size(field) > EMBED_LIMITS.total) break
    kept.push(field)
    total += size(field)
  }
  return kept
}

const colorOf = (hex: string) => (/^#[0-9a-f]{6}$/i.test(hex) ? parseInt(hex.slice(1), 16) : 0)

/** The summary's one embed: the whole of it, or (task-board mode without extended_embed) the title and card link. */
const embedOf = (input: ShareInput): SummaryEmbed => {
  const { form } = input
  const title = truncate(form.title, EMBED_LIMITS.title)
  const link = form.taskboard_integration && input.card_url !== null ? { url: input.card_url, description: `[View the card](${input.card_url})` } : {}
  const base = { title, color: colorOf(form.color_hex), ...link }
  if (form.taskboard_integration && !form.extended_embed) return { ...base, fields: [] }
  const author = form.anonymize
    ? {}
    : { author: { name: truncate(input.member.name, EMBED_LIMITS.authorName), ...(input.member.avatar_url === null ? {} : { icon_url: input.member.avatar_url }) } }
  const answers = answered(input, () => true).map(({ answer, step }) => fieldOf(step.string, textOf(answer)))
  const extra = form.highlight_attachments ? attachmentsField(input) : []
  const used = codePointLength(title) + codePointLength(base.description ?? "") + ("author" in author ? codePointLength(author.author.name) : 0)
  // Room for the Attachments field is kept first: answers past the limits are left out, never it.
  const reserved = extra.reduce((n, f) => n + size(f), used)
  return { ...base, ...author, fields: [...withinLimits(answers, reserved, EMBED_LIMITS.fields - extra.length), ...extra] }
}

/** The public summary posted in each forwarding channel. */
export const summaryMessage = (input: ShareInput): SummaryMessage => {
  const { form } = input
  const buttons: Array<VoteButton> = []
  if (!form.disable_upvote) buttons.push({ type: 2, style: 2, label: `▲ ${input.votes.up}`, custom_id: voteCustomId("up", input.submission_id) })
  if (!form.disable_downvote) buttons.push({ type: 2, style: 2, label: `▼ ${input.votes.down}`, custom_id: voteCustomId("down", input.submission_id) })
  return {
    content: form.public_mentions.map((role) => `<@&${role}>`).join(" "),
    allowed_mentions: { parse: [], roles: [...form.public_mentions] },
    embeds: [embedOf(input)],
    components: buttons.length === 0 ? [] : [{ type: 1, components: buttons }]
  }
}
