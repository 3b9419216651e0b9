/**
 * The TaskBoard contract on every layer: the live Trello client against the sandbox twin served on
 * a loopback port, and the memory layer over the same seed. Both add one stale pairing (S3 with a
 * team the board does not know) to the sandbox's.
 */
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { TaskBoardTrello } from "../../src/layers/taskboard/TaskBoardTrello.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { S1_ID, S2_ID, S3_ID, S4_ID } from "../../src/sandbox/Seed.ts"
import { taskBoardMemory, sandboxTaskBoardSeed } from "../layers/TaskBoardMemory.ts"
import { taskBoardContract, type TaskBoardFixture } from "./TaskBoard.contract.ts"

const STALE_TEAM = "no-such-team"

// The sandbox team's boards, written out: the closed "Archived Board" is never listed.
const fixture: TaskBoardFixture = {
  paired: {
    serverId: S1_ID,
    boards: [
      { id: "5f1a0000000000000000b001", name: "Sandbox Roadmap" },
      { id: "5f1a0000000000000000b002", name: "Sandbox Applications" }
    ]
  },
  stalePairing: S3_ID,
  unpaired: [S2_ID, S4_ID, "399999999999999999"]
}

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
})).pipe(Layer.provide(Layer.mergeAll(SandboxServer.layer(), FetchHttpClient.layer)))

taskBoardContract("TaskBoardTrello against the sandbox twin", Trello, fixture)

taskBoardContract(
  "TaskBoardMemory",
  taskBoardMemory({ ...sandboxTaskBoardSeed, pairings: new Map([...sandboxTaskBoardSeed.pairings, [S3_ID, STALE_TEAM]]) }),
  fixture
)
