/**
 * The rules of a form that need the server (decisions.md "Forms"): its channels, roles and task
 * board. Structural rules live in the FormInput schema. Every problem is reported, each with the
 * path of the field (`fwd_channel_ids[1]`), so a client can fix them all at once.
 */
import type { Problem } from "../domain/Errors.ts"
import { BOARD_DISABLED, BOARD_NO_TEAM } from "../domain/Form.ts"
import type { Board, FormInput } from "../domain/Form.ts"
import type { PlatformChannel, PlatformRole } from "./ChatPlatform.ts"

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

const problem = (path: string, message: string): Problem => ({ message, additionalProperties: { path } })

/** Whether a body's `workflow_id` names the form of the path (null or absent names no form). */
const sameId = (value: unknown, formId: number): boolean =>
  value === undefined || value === null || value === formId || (typeof value === "string" && value === String(formId))

const checkChannel = (channels: ReadonlyArray<PlatformChannel>, path: string, id: string): Array<Problem> => {
  const channel = channels.find((c) => c.id === id)
  if (channel === undefined) return [problem(path, `Channel ${id} is not a channel of this server.`)]
  return POSTABLE_CHANNEL_TYPES.has(channel.type)
    ? []
    : [problem(path, `Channel ${id} (#${channel.name}) is not a text or news channel.`)]
}

const checkRoles = (roles: ReadonlyArray<PlatformRole>, field: string, ids: ReadonlyArray<string>): Array<Problem> =>
  ids.flatMap((id, i) =>
    roles.some((r) => r.id === id) ? [] : [problem(`${field}[${i}]`, `Role ${id} is not a role of this server.`)]
  )

const checkBoard = (input: FormInput, boards: ReadonlyArray<Board> | undefined): Array<Problem> => {
  const board = input.taskboard_board
  const real = boards ?? []
  const isReal = board !== undefined && real.some((b) => b.id === board)
  if (input.taskboard_integration === true) {
    if (boards === undefined) {
      return [problem("taskboard_board", "taskboard_integration needs a paired task-board team; this server has none.")]
    }
    return isReal
      ? []
      : [problem("taskboard_board", "With taskboard_integration on, taskboard_board must be one of the server's task boards (see taskboardBoards, other than 0).")]
  }
  if (board === undefined || board === BOARD_DISABLED.id || board === BOARD_NO_TEAM.id || isReal) return []
  return [problem("taskboard_board", `Task board ${board} is not a task board of this server's paired team.`)]
}

/** Every problem of the form against the server; empty when the form may be written. */
export const validateForm = (input: FormInput, context: FormContext): ReadonlyArray<Problem> => [
  ...(context.formId !== undefined && !sameId(input.workflow_id, context.formId)
    ? [problem("workflow_id", `workflow_id does not match the form of the path (${context.formId}).`)]
    : []),
  ...(input.channel_id === undefined || input.channel_id === null
    ? []
    : checkChannel(context.channels, "channel_id", input.channel_id)),
  ...(input.fwd_channel_ids ?? []).flatMap((id, i) => checkChannel(context.channels, `fwd_channel_ids[${i}]`, id)),
  ...checkRoles(context.roles, "role_mentions", input.role_mentions ?? []),
  ...checkRoles(context.roles, "public_mentions", input.public_mentions ?? []),
  ...checkBoard(input, context.boards)
]
