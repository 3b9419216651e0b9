/**
 * The task board a server may be paired with (a Trello workspace). `boards` lists the team's real
 * boards, or `undefined` when the server has no paired team; the forms routes add the special
 * boards `0` and `-1` as the contract says. The writes a shared submission needs (forms-runtime.md
 * §5): a board's open lists and its labels, creating a list, a label, a card and a URL attachment,
 * through the server's pairing. They fail with `TaskBoardError`, which says whether trying again
 * can help (`retryable`): a board deleted or credentials refused will not heal; an outage may.
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"
import type { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { Board } from "../../domain/forms/Form.ts"

export interface TaskList { readonly id: string; readonly name: string }
export interface TaskLabel { readonly id: string; readonly name: string; readonly color: string | null }
export interface TaskCard {
  readonly id: string
  readonly name: string
  readonly idList: string
  readonly idLabels: ReadonlyArray<string>
  readonly url: string
  readonly shortUrl: string
}
/** A card as listed on its board, with its description (to recognise a card already made). */
export interface TaskCardListed extends TaskCard { readonly desc: string }
export interface NewCard {
  readonly idList: string
  readonly name: string
  readonly desc: string
  readonly idLabels: ReadonlyArray<string>
}
export interface TaskAttachment { readonly id: string; readonly url: string }

/**
 * Why a board call failed. Permanent: `unpaired` (no pairing), `refused` (401/403: the credentials
 * or the board's permissions), `not_found` (404: the board, list or card is gone), `invalid` (400:
 * the board refused the values). Retryable: `unavailable` (5xx, unreachable, rate limited past the
 * wait the client allows), `timeout`.
 */
export const TaskBoardFailure = Schema.Literals(["unpaired", "refused", "not_found", "invalid", "unavailable", "timeout"])
export type TaskBoardFailure = typeof TaskBoardFailure.Type

export class TaskBoardError extends Schema.TaggedError<TaskBoardError>()("TaskBoardError", {
  reason: TaskBoardFailure,
  /** Whether the same call may succeed later (the job retries it) or never will (kept on the submission). */
  retryable: Schema.Boolean,
  /** The board's HTTP status, when it answered. */
  status: Schema.optionalKey(Schema.Number),
  /** Seconds to wait before retrying, when known. */
  retryAfterSeconds: Schema.optionalKey(Schema.Number),
  message: Schema.String
}) {}

export class TaskBoard extends Context.Service<TaskBoard, {
  readonly boards: (serverId: string) => Effect.Effect<ReadonlyArray<Board> | undefined, RequestTimeout | ServiceUnavailable>
  /** The board's open lists, in the board's order. */
  readonly lists: (serverId: string, boardId: string) => Effect.Effect<ReadonlyArray<TaskList>, TaskBoardError>
  /** The board's labels (unnamed colour labels included, as `""`). */
  readonly labels: (serverId: string, boardId: string) => Effect.Effect<ReadonlyArray<TaskLabel>, TaskBoardError>
  /** A new open list, placed last. */
  readonly createList: (serverId: string, boardId: string, name: string) => Effect.Effect<TaskList, TaskBoardError>
  /** A new label without colour. */
  readonly createLabel: (serverId: string, boardId: string, name: string) => Effect.Effect<TaskLabel, TaskBoardError>
  readonly createCard: (serverId: string, card: NewCard) => Effect.Effect<TaskCard, TaskBoardError>
  /**
   * The board's cards, oldest first: after a create whose answer was lost (a time-out, a 5xx, a
   * worker stopped before recording it) the caller looks here before creating again.
   */
  readonly cards: (serverId: string, boardId: string) => Effect.Effect<ReadonlyArray<TaskCardListed>, TaskBoardError>
  readonly attachUrl: (serverId: string, cardId: string, url: string) => Effect.Effect<TaskAttachment, TaskBoardError>
}>()("gateway/TaskBoard") {}
