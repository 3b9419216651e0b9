/**
 * The task board in memory: servers paired with teams, teams with their boards (closed ones are
 * never listed, as Trello's `filter=open`). A server paired with a team the board does not know is
 * unpaired, as the live layer treats a pairing Trello refuses. Default: the sandbox's seed (S1
 * paired with the sandbox team). Held to the live layer's suite: test/contracts/TaskBoard.contract.ts.
 */
import { Effect, Layer } from "effect"
import { SEED } from "../../src/sandbox/Seed.ts"
import type { TrelloBoard } from "../../src/sandbox/sources/Seed.ts"
import { TASKBOARD_BOARDS, TASKBOARD_TEAM } from "../../src/sandbox/sources/Seed.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"

export interface TaskBoardSeed {
  /** Server id → team id. */
  readonly pairings: ReadonlyMap<string, string>
  /** Team id → its boards, open and closed. */
  readonly teams: ReadonlyMap<string, ReadonlyArray<TrelloBoard>>
}

/** The sandbox's pairings (from the guilds' `taskboardTeam`) and its one team. */
export const sandboxTaskBoardSeed: TaskBoardSeed = {
  pairings: new Map(SEED.guilds.flatMap((g) => g.taskboardTeam === null ? [] : [[g.id, g.taskboardTeam] as const])),
  teams: new Map([[TASKBOARD_TEAM, TASKBOARD_BOARDS]])
}

export const taskBoardMemory = (seed: TaskBoardSeed): Layer.Layer<TaskBoard> =>
  Layer.succeed(TaskBoard, TaskBoard.of({
    boards: (serverId) =>
      Effect.sync(() => {
        const team = seed.pairings.get(serverId)
        const boards = team === undefined ? undefined : seed.teams.get(team)
        return boards?.filter((b) => !b.closed).map((b) => ({ id: b.id, name: b.name }))
      })
  }))

export const TaskBoardMemory = taskBoardMemory(sandboxTaskBoardSeed)
