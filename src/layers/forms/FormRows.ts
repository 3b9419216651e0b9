/**
 * A form as `forms_read` and the other forms functions answer it (its steps as jsonb), and the
 * StoredForm made of it: shared by the forms repository and the forms runtime's own reads.
 */
import { FORM_FLAGS } from "../../domain/forms/Form.ts"
import type { FormFlag, StoredForm } from "../../domain/forms/Form.ts"

export interface FormRow {
  readonly workflow_id: bigint | number | string | null
  readonly title: string
  readonly color_hex: string
  readonly channel_id: string | null
  readonly fwd_channel_ids: ReadonlyArray<string>
  readonly role_mentions: ReadonlyArray<string>
  readonly public_mentions: ReadonlyArray<string>
  readonly flags: Partial<Record<FormFlag, boolean>>
  readonly taskboard_board: string
  readonly created_at: Date
  readonly steps: ReadonlyArray<StepRow>
}

export interface StepRow {
  readonly step_id: number
  readonly type: "message" | "reaction"
  readonly string: string
  readonly answers_validation: ReadonlyArray<string>
  readonly char_limit_min: number
  readonly char_limit_max: number
  readonly alias: string | null
  readonly taskboard_mapping: string | null
}

const toFlags = (flags: Partial<Record<FormFlag, boolean>>): Record<FormFlag, boolean> => {
  const out = {} as Record<FormFlag, boolean>
  for (const f of FORM_FLAGS) out[f] = flags[f] === true
  return out
}

export const toStored = (row: FormRow, steps: ReadonlyArray<StepRow>): StoredForm => ({
  workflow_id: Number(row.workflow_id),
  timestamp_created: row.created_at.toISOString(),
  title: row.title,
  color_hex: row.color_hex,
  channel_id: row.channel_id,
  fwd_channel_ids: row.fwd_channel_ids,
  role_mentions: row.role_mentions,
  public_mentions: row.public_mentions,
  taskboard_board: row.taskboard_board,
  ...toFlags(row.flags),
  steps: steps.map((s) => ({
    step_id: s.step_id,
    type: s.type,
    string: s.string,
    answers_validation: s.answers_validation,
    char_limit: [s.char_limit_min, s.char_limit_max] as const,
    // Rows written before "" meant unset may hold NULL: the contract's Strings are never null.
    alias: s.alias ?? "",
    taskboard_mapping: s.taskboard_mapping ?? ""
  }))
})
