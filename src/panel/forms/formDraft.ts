/**
 * A form as its editor holds it (text fields as typed, answers one a line, the length limits as
 * text) and the FormInput body made from it.
 */
import type { Form, FormFlag } from "../../http/client.ts"
import { FORM_FLAGS } from "../../http/client.ts"

export interface DraftStep {
  readonly key: number
  readonly type: "message" | "reaction"
  readonly string: string
  readonly answers: string
  readonly min: string
  readonly max: string
  readonly alias: string
  readonly taskboard_mapping: string
}

export interface Draft {
  readonly title: string
  readonly color_hex: string
  readonly channel_id: string
  readonly fwd_channel_ids: ReadonlyArray<string>
  readonly role_mentions: ReadonlyArray<string>
  readonly public_mentions: ReadonlyArray<string>
  readonly taskboard_board: string
  readonly flags: Readonly<Record<FormFlag, boolean>>
  readonly steps: ReadonlyArray<DraftStep>
}

let nextKey = 1
export const draftOf = (form: Form): Draft => ({
  title: form.workflow_id === null ? "" : form.title,
  color_hex: form.color_hex,
  channel_id: form.channel_id ?? "",
  fwd_channel_ids: form.fwd_channel_ids,
  role_mentions: form.role_mentions,
  public_mentions: form.public_mentions,
  taskboard_board: form.taskboard_board,
  flags: Object.fromEntries(FORM_FLAGS.map((f) => [f, form[f]])) as Record<FormFlag, boolean>,
  steps: form.steps.map((s) => ({
    key: nextKey++,
    type: s.type,
    string: s.string,
    answers: s.answers_validation.join("\n"),
    min: String(s.char_limit[0]),
    max: String(s.char_limit[1]),
    alias: s.alias,
    taskboard_mapping: s.taskboard_mapping
  }))
})

export const newStep = (): DraftStep => ({ key: nextKey++, type: "message", string: "", answers: "", min: "1", max: "2000", alias: "", taskboard_mapping: "" })

const number = (s: string) => (s.trim() === "" ? Number.NaN : Number(s))

/** The body of POST and PATCH (FormInput) from the draft. */
export const bodyOf = (d: Draft) => ({
  title: d.title,
  color_hex: d.color_hex,
  channel_id: d.channel_id === "" ? null : d.channel_id,
  fwd_channel_ids: d.fwd_channel_ids,
  role_mentions: d.role_mentions,
  public_mentions: d.public_mentions,
  taskboard_board: d.taskboard_board,
  ...d.flags,
  steps: d.steps.map((s) => ({
    type: s.type,
    string: s.string,
    answers_validation: s.answers.split("\n").map((a) => a.trim()).filter((a) => a !== ""),
    char_limit: [number(s.min), number(s.max)],
    alias: s.alias,
    taskboard_mapping: s.taskboard_mapping
  }))
})

export const FLAG_LABELS: Record<FormFlag, string> = {
  workflow_live: "Live (members can submit it)",
  taskboard_integration: "Send submissions to the task board",
  anonymize: "Anonymize submissions",
  disable_downvote: "Disable down-votes",
  disable_upvote: "Disable up-votes",
  extended_embed: "Extended embed",
  highlight_attachments: "Highlight attachments",
  anonymize_rejection: "Anonymize rejections",
  disable_mentions: "Disable mentions",
  disable_priorities: "Disable priorities"
}
