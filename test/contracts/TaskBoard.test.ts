/**
 * The TaskBoard contract on every layer: the live Trello client against the sandbox twin served on
 * a loopback port, and the memory layer over the same seed (the twin's own store). Both add one stale pairing (S3 with a
 * team the board does not know) to the sandbox's.
 */
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { TaskBoardTrello } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { S1_ID, S2_ID, S3_ID, S4_ID } from "../../src/sandbox/Seed.ts"
import { sandboxTaskBoardSeed, taskBoardMemoryWithStore } from "../layers/TaskBoardMemory.ts"
import { taskBoardContract, type TaskBoardFixture } from "./TaskBoard.contract.ts"

const STALE_TEAM = "no-such-team"

// The sandbox team's boards, written out: the closed "Archived Board" is never listed.
const fixture = {
  paired: {
    serverId: S1_ID,
    boards: [
      { id: "5f1a0000000000000000b001", name: "Sandbox Roadmap" },
      { id: "5f1a0000000000000000b002", name: "Sandbox Applications" }
    ]
  },
  stalePairing: S3_ID,
  unpaired: [S2_ID, S4_ID, "399999999999999999"]
} satisfies Omit<TaskBoardFixture, "deleteBoard">

/** The live client pointed at a sandbox of its own, on a free loopback port. */
const Trello = Layer.unwrap(Effect.gen(function*() {
  const sandbox = yield* SandboxServer
  return TaskBoardTrello.layer({
    ...SandboxMode.taskBoardOptions(sandbox.url, "5 seconds"),
    pairings: (serverId) =>
      serverId === S3_ID
        ? Effect.succeed({ teamId: STALE_TEAM, key: Redacted.make("sandbox"), token: Redacted.make("sandbox") })
        : SandboxMode.pairings(serverId)
  })
})).pipe(Layer.provideMerge(Layer.mergeAll(SandboxServer.layer(), FetchHttpClient.layer)))

taskBoardContract("TaskBoardTrello against the sandbox twin", Trello, {
  ...fixture,
  // The twin's control route: the board's Trello routes answer 404 from then on.
  deleteBoard: (boardId: string) =>
    Effect.gen(function*() {
      const sandbox = yield* SandboxServer
      const client = yield* HttpClient.HttpClient
      yield* Effect.orDie(client.execute(HttpClientRequest.delete(`${sandbox.url}/sandbox/taskboard/boards/${boardId}`)))
    })
})

const memory = taskBoardMemoryWithStore({ ...sandboxTaskBoardSeed, pairings: new Map([...sandboxTaskBoardSeed.pairings, [S3_ID, STALE_TEAM]]) })
taskBoardContract("TaskBoardMemory", memory.layer, {
  ...fixture,
  deleteBoard: (boardId: string) => Effect.sync(() => void memory.store.boards.delete(boardId))
})
