/**
 * Forms (workflows of questions). Structural rules of the contract and decisions.md live in these
 * schemas, each failure at its own path; rules that need the server's channels, roles or task board
 * live in services/forms/FormValidation.ts.
 */
import { Schema } from "effect"
import { SNOWFLAKE } from "../infra/Ids.ts"
import { text } from "../infra/Text.ts"

export const TaskboardOption = Schema.Literals(["Description", "Title", "List", "Label", "Attachment", "Private"])
export type TaskboardOption = typeof TaskboardOption.Type
export const TASKBOARD_OPTIONS: ReadonlyArray<TaskboardOption> = TaskboardOption.literals

export const TaskboardOptionsResponse = Schema.Struct({ options: Schema.Array(Schema.String) })

export const Board = Schema.Struct({ id: Schema.String, name: Schema.String }).annotate({ identifier: "TaskboardBoard" })
export type Board = typeof Board.Type
export const TaskboardBoardsResponse = Schema.Struct({ taskboard_boards: Schema.Array(Board) })

/** Special boards: `0` disables the integration, `-1` means no paired task-board team. */
export const BOARD_DISABLED: Board = { id: "0", name: "Disable task-board integration" }
export const BOARD_NO_TEAM: Board = { id: "-1", name: "No task-board team paired" }

export const StepType = Schema.Literals(["message", "reaction"]).annotate({ message: `expected "message" or "reaction"` })

export const HEX_COLOR = /^#[0-9a-fA-F]{6}$/
/** `#rrggbb`; upper-case digits are accepted and stored lower case (decisions.md "Forms"). */
export const ColorHex = Schema.String.annotate({ message: "expected a colour as #rrggbb (six hexadecimal digits)" }).check(
  Schema.isPattern(HEX_COLOR, { message: "expected a colour as #rrggbb (six hexadecimal digits)" })
)

const WholeNumber = Schema.Number.annotate({ message: "expected a whole number" }).check(Schema.isInt({ message: "expected a whole number" }))
export const CharLimit = Schema.Tuple([WholeNumber, WholeNumber]).annotate({
  message: "expected [min, max]: two whole numbers with 0 < min <= max <= 2000"
}).check(
  Schema.makeFilter(([min, max]) =>
    min > 0 && max <= 2000 && max >= min ? undefined : "expected [min, max] with 0 < min <= max <= 2000"
  )
)

const Flag = Schema.Boolean.annotate({ message: "expected true or false" })
const flag = Schema.optionalKey(Flag)

/** A list of at most `max` elements, its messages in words (`what`: "channel ids"). */
const list = <S extends Schema.Top>(element: S, max: number, what: string) =>
  Schema.Array(element).annotate({ message: `expected a list of ${what}` }).check(
    Schema.isMaxLength(max, { message: `expected at most ${max} ${what}` })
  )

/** A chat-platform id of the server's (`what`: "channel"), its messages in words. */
const platformId = (what: string) => {
  const message = `expected a ${what} id (a string of digits)`
  return Schema.String.annotate({ message }).check(Schema.isPattern(SNOWFLAKE, { message }))
}
const ChannelId = platformId("channel")
const RoleId = platformId("role")

/** A step's mapping on input: an option value, or unset (`""`, null or absent: decisions.md "Forms"). */
const mappingMessage = `expected one of ${TASKBOARD_OPTIONS.join(", ")}, or "" (unset)`
const MappingInput = Schema.NullOr(
  Schema.Literals([...TaskboardOption.literals, ""]).annotate({ message: mappingMessage })
).annotate({ message: mappingMessage })

export const StepInput = Schema.Struct({
  step_id: Schema.optionalKey(Schema.Unknown),
  type: StepType,
  string: text(1, 2000),
  answers_validation: Schema.optionalKey(list(text(1, 100), 25, "answers")),
  char_limit: Schema.optionalKey(CharLimit),
  alias: Schema.optionalKey(
    Schema.NullOr(text(0, 256)).annotate({ message: "expected a text of at most 256 characters, or null (unset)" })
  ),
  taskboard_mapping: Schema.optionalKey(MappingInput)
}).annotate({ message: "expected a step: an object with type and string" }).check(
  Schema.makeFilter((step) => {
    const answers = step.answers_validation?.length ?? 0
    return step.type === "reaction" && (answers < 1 || answers > 20)
      ? { path: ["answers_validation"], issue: "a reaction step needs 1 to 20 answers" }
      : undefined
  })
)
export type StepInput = typeof StepInput.Type

/**
 * Body of POST and PATCH: the full form. Read-only fields are accepted and ignored. The rules
 * across fields (a live form needs `channel_id`, the integration needs a `Title` step) and those
 * against the server are services/forms/FormValidation.ts's, which runs all of them even when some
 * fields here fail, so one answer lists every problem.
 */
export const FormInput = Schema.Struct({
  workflow_id: Schema.optionalKey(Schema.NullOr(Schema.Unknown)),
  timestamp_created: Schema.optionalKey(Schema.Unknown),
  taskboard_options: Schema.optionalKey(Schema.Unknown),
  taskboard_boards: Schema.optionalKey(Schema.Unknown),
  channel_id: Schema.optionalKey(
    Schema.NullOr(ChannelId).annotate({ message: "expected a channel id (a string of digits) or null" })
  ),
  fwd_channel_ids: Schema.optionalKey(list(ChannelId, 25, "channel ids")),
  role_mentions: Schema.optionalKey(list(RoleId, 25, "role ids")),
  public_mentions: Schema.optionalKey(list(RoleId, 25, "role ids")),
  workflow_live: flag,
  taskboard_integration: flag,
  anonymize: flag,
  disable_downvote: flag,
  disable_upvote: flag,
  extended_embed: flag,
  taskboard_board: Schema.optionalKey(
    Schema.String.annotate({ message: "expected a board id as a string (see taskboardBoards)" })
  ),
  title: text(1, 256),
  color_hex: Schema.optionalKey(ColorHex),
  highlight_attachments: flag,
  anonymize_rejection: flag,
  disable_mentions: flag,
  disable_priorities: flag,
  steps: Schema.optionalKey(list(StepInput, 25, "steps"))
}).annotate({ identifier: "FormInput", message: "expected a JSON object: the form" })
export type FormInput = typeof FormInput.Type

export const Step = Schema.Struct({
  step_id: Schema.Int,
  type: StepType,
  string: Schema.String,
  answers_validation: Schema.Array(Schema.String),
  char_limit: Schema.Tuple([Schema.Int, Schema.Int]),
  /** `""` when unset; never null (decisions.md "Forms"). */
  alias: Schema.String,
  /** An option value, or `""` when unset; never null. */
  taskboard_mapping: Schema.String
}).annotate({ identifier: "Step" })
export type Step = typeof Step.Type

export const FORM_FLAGS = [
  "workflow_live",
  "taskboard_integration",
  "anonymize",
  "disable_downvote",
  "disable_upvote",
  "extended_embed",
  "highlight_attachments",
  "anonymize_rejection",
  "disable_mentions",
  "disable_priorities"
] as const
export type FormFlag = typeof FORM_FLAGS[number]

export const Form = Schema.Struct({
  workflow_id: Schema.NullOr(Schema.Int),
  channel_id: Schema.NullOr(Schema.String),
  fwd_channel_ids: Schema.Array(Schema.String),
  role_mentions: Schema.Array(Schema.String),
  public_mentions: Schema.Array(Schema.String),
  timestamp_created: Schema.NullOr(Schema.String),
  workflow_live: Schema.Boolean,
  taskboard_integration: Schema.Boolean,
  anonymize: Schema.Boolean,
  disable_downvote: Schema.Boolean,
  disable_upvote: Schema.Boolean,
  extended_embed: Schema.Boolean,
  taskboard_board: Schema.String,
  title: Schema.String,
  color_hex: Schema.String,
  highlight_attachments: Schema.Boolean,
  anonymize_rejection: Schema.Boolean,
  disable_mentions: Schema.Boolean,
  disable_priorities: Schema.Boolean,
  steps: Schema.Array(Step),
  taskboard_options: Schema.Array(Schema.String),
  taskboard_boards: Schema.Array(Board)
}).annotate({ identifier: "Form" })
export type Form = typeof Form.Type

export const FormSummary = Schema.Struct({
  workflow_id: Schema.Int,
  taskboard_integration: Schema.Boolean,
  workflow_live: Schema.Boolean,
  title: Schema.String,
  color_hex: Schema.String
}).annotate({ identifier: "FormSummary" })
export type FormSummary = typeof FormSummary.Type

export const FormsResponse = Schema.Struct({ forms: Schema.Array(FormSummary) })

/** The stored form: what FormsRepo keeps (no boards or options, which come from the TaskBoard). */
export interface StoredForm extends Omit<Form, "workflow_id" | "timestamp_created" | "taskboard_options" | "taskboard_boards"> {
  readonly workflow_id: number
  readonly timestamp_created: string
}

/** The new-form template, exactly the contract's defaults (other flags default to false). */
export const templateDefaults = {
  workflow_id: null,
  channel_id: null,
  fwd_channel_ids: [],
  role_mentions: [],
  public_mentions: [],
  timestamp_created: null,
  taskboard_integration: false,
  taskboard_board: "-1",
  workflow_live: false,
  title: "TITLE_NOT_FOUND",
  color_hex: "#00d084",
  steps: [],
  anonymize: false,
  disable_downvote: false,
  disable_upvote: false,
  extended_embed: false,
  highlight_attachments: false,
  anonymize_rejection: false,
  disable_mentions: false,
  disable_priorities: false
} as const satisfies Omit<Form, "taskboard_options" | "taskboard_boards">
