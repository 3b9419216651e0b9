/**
 * The task board a server may be paired with (a Trello workspace). `boards` lists the team's real
 * boards, or `undefined` when the server has no paired team; the forms routes add the special
 * boards `0` and `-1` as the contract says.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { Board } from "../../domain/forms/Form.ts"

export class TaskBoard extends Context.Service<TaskBoard, {
  readonly boards: (serverId: string) => Effect.Effect<ReadonlyArray<Board> | undefined, RequestTimeout | ServiceUnavailable>
}>()("gateway/TaskBoard") {}
