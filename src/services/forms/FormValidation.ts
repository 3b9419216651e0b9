/**
 * Every rule of a form body (decisions.md "Forms" and "Errors"), all run on every write so one 400
 * lists every problem: the field schemas (FormInput), the rules across fields (a live form needs
 * `channel_id`; the integration needs a step mapped to `Title`) and the rules against the server
 * (its channels, roles and task board). A field that fails its schema is left out of the other
 * checks; every well-formed field still takes part. Each problem has the field's path
 * (`fwd_channel_ids[1]`) and a message that names it.
 */
import { Result, Schema } from "effect"
import type { Problem } from "../../domain/infra/Errors.ts"
import { BOARD_DISABLED, BOARD_NO_TEAM, FormInput } from "../../domain/forms/Form.ts"
import type { Board } from "../../domain/forms/Form.ts"
import { SNOWFLAKE } from "../../domain/infra/Ids.ts"
import { formProblem as problem, issueProblems } from "../../domain/forms/FormProblems.ts"
import type { PlatformChannel, PlatformRole } from "../platform/ChatPlatform.ts"

/** Chat-platform channel types a form may post to: text (0) and news (5). */
const POSTABLE_CHANNEL_TYPES: ReadonlySet<number> = new Set([0, 5])

export interface FormContext {
  readonly channels: ReadonlyArray<PlatformChannel>
  readonly roles: ReadonlyArray<PlatformRole>
  /** The real boards of the server's paired team; `undefined` when no team is paired. */
  readonly boards: ReadonlyArray<Board> | undefined
  /** The `:formId` of a PATCH, which a `workflow_id` in the body must match. */
  readonly formId?: number
}

/** The lists of ids the server judges element by element. */
const ID_LISTS = ["fwd_channel_ids", "role_mentions", "public_mentions"] as const
type IdList = typeof ID_LISTS[number]

/**
 * The fields of a body that passed their schema (any subset). A list of ids that failed as a whole
 * keeps its well-formed elements at their index (`undefined` for the others), so that each element
 * is still judged against the server.
 */
export type FormParts =
  & Omit<Partial<FormInput>, IdList>
  & { readonly [K in IdList]?: ReadonlyArray<string | undefined> }


const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

// ---------------------------------------------------------------------------------------------
// Field schemas
// ---------------------------------------------------------------------------------------------

const decodeForm = Schema.decodeUnknownResult(FormInput)

/** One decoder per field: a field is well-formed when it decodes on its own. */
const fieldDecoders = Object.entries(FormInput.fields).map(([key, field]) =>
  [key, Schema.decodeUnknownResult(Schema.Struct({ [key]: field }))] as const
)

/** The fields of `body` that pass their schema, decoded. */
const wellFormedParts = (body: Readonly<Record<string, unknown>>): FormParts => {
  const parts: Record<string, unknown> = {}
  for (const [key, decode] of fieldDecoders) {
    if (!(key in body)) continue
    const r = decode({ [key]: body[key] })
    if (Result.isSuccess(r)) parts[key] = (r.success as Record<string, unknown>)[key]
  }
  for (const key of ID_LISTS) {
    const raw = body[key]
    if (!(key in parts) && Array.isArray(raw)) {
      parts[key] = raw.map((id: unknown) => (typeof id === "string" && SNOWFLAKE.test(id) ? id : undefined))
    }
  }
  return parts as FormParts
}

// ---------------------------------------------------------------------------------------------
// Rules across fields
// ---------------------------------------------------------------------------------------------

const crossFieldProblems = (body: Readonly<Record<string, unknown>>, parts: FormParts): Array<Problem> => {
  const problems: Array<Problem> = []
  // A malformed channel_id already has its own problem; an absent or null one is this rule's.
  if (parts.workflow_live === true && (body["channel_id"] === undefined || body["channel_id"] === null)) {
    problems.push(problem("channel_id", "is required when workflow_live is true (a text or news channel of the server)"))
  }
  // Judged on the raw steps, so that another problem in the Title step does not hide this one.
  const steps = body["steps"]
  if (parts.taskboard_integration === true && (steps === undefined || Array.isArray(steps))) {
    // Stryker disable next-line ArrayDeclaration: a string element is no record, so it maps no Title either: same as []
    const mapsTitle = (steps ?? []).some((s: unknown) => isRecord(s) && s["taskboard_mapping"] === "Title")
    if (!mapsTitle) problems.push(problem("steps", "with taskboard_integration on, one step must have taskboard_mapping Title"))
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// Rules against the server
// ---------------------------------------------------------------------------------------------

/** Whether a body's `workflow_id` names the form of the path (null or absent names no form). */
const sameId = (value: unknown, formId: number): boolean =>
  value === undefined || value === null || value === formId || (typeof value === "string" && value === String(formId))

const checkChannel = (channels: ReadonlyArray<PlatformChannel>, path: string, id: string): Array<Problem> => {
  const channel = channels.find((c) => c.id === id)
  if (channel === undefined) return [problem(path, `channel ${id} is not a channel of this server.`)]
  return POSTABLE_CHANNEL_TYPES.has(channel.type)
    ? []
    : [problem(path, `channel ${id} (#${channel.name}) is not a text or news channel.`)]
}

const checkRoles = (roles: ReadonlyArray<PlatformRole>, field: string, ids: ReadonlyArray<string | undefined>): Array<Problem> =>
  ids.flatMap((id, i) =>
    id === undefined || roles.some((r) => r.id === id)
      ? []
      : [problem(`${field}[${i}]`, `role ${id} is not a role of this server.`)]
  )

const checkBoard = (parts: FormParts, boards: ReadonlyArray<Board> | undefined): Array<Problem> => {
  const board = parts.taskboard_board
  // Stryker disable next-line ArrayDeclaration: a string element has no id equal to a board id (a string): same as []
  const real = boards ?? []
  const isReal = board !== undefined && real.some((b) => b.id === board)
  if (parts.taskboard_integration === true) {
    if (boards === undefined) {
      return [problem("taskboard_board", "taskboard_integration needs a paired task-board team; this server has none.")]
    }
    return isReal
      ? []
      : [problem("taskboard_board", "with taskboard_integration on, expected one of the server's task boards (see taskboardBoards, other than 0).")]
  }
  if (board === undefined || board === BOARD_NO_TEAM.id || isReal) return []
  // Board 0 ("integration off") exists only on a server with a paired team (decisions.md "Forms").
  if (board === BOARD_DISABLED.id) {
    return boards === undefined
      ? [problem("taskboard_board", "board 0 exists only on a server with a paired task-board team; this server has none: use -1.")]
      : []
  }
  return [problem("taskboard_board", `task board ${board} is not a task board of this server's paired team (see taskboardBoards).`)]
}

/** Every problem of the (well-formed parts of the) form against the server; empty when none. */
export const validateForm = (parts: FormParts, context: FormContext): ReadonlyArray<Problem> => [
  ...(context.formId !== undefined && !sameId(parts.workflow_id, context.formId)
    ? [problem("workflow_id", `does not match the form of the path (${context.formId}); omit it or send ${context.formId}.`)]
    : []),
  ...(parts.channel_id === undefined || parts.channel_id === null
    ? []
    : checkChannel(context.channels, "channel_id", parts.channel_id)),
  ...(parts.fwd_channel_ids ?? []).flatMap((id, i) =>
    id === undefined ? [] : checkChannel(context.channels, `fwd_channel_ids[${i}]`, id)),
  ...checkRoles(context.roles, "role_mentions", parts.role_mentions ?? []),
  ...checkRoles(context.roles, "public_mentions", parts.public_mentions ?? []),
  ...checkBoard(parts, context.boards)
]

/**
 * A form body checked by every rule at once: the decoded form, or every problem (field schemas,
 * rules across fields, rules against the server) in one list.
 */
export const checkFormBody = (body: unknown, context: FormContext): Result.Result<FormInput, ReadonlyArray<Problem>> => {
  if (!isRecord(body)) {
    return Result.fail([{ message: "The body must be a JSON object: the form (GET …/forms/new shows one)." }])
  }
  const decoded = decodeForm(body, { errors: "all" })
  const parts = Result.isSuccess(decoded) ? decoded.success : wellFormedParts(body)
  const problems = [
    ...(Result.isFailure(decoded) ? issueProblems(decoded.failure.issue) : []),
    ...crossFieldProblems(body, parts),
    ...validateForm(parts, context)
  ]
  return problems.length === 0 && Result.isSuccess(decoded) ? Result.succeed(decoded.success) : Result.fail(problems)
}
