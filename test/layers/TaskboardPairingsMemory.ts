/** In-memory task-board pairings, one per server, holding the given ones; writes last for the layer's lifetime. */
import { Effect, Layer } from "effect"
import { TaskboardPairings } from "../../src/services/taskboard/TaskboardPairings.ts"
import type { Pairing } from "../../src/services/taskboard/TaskboardPairings.ts"

export const TaskboardPairingsMemory = (initial: ReadonlyArray<readonly [serverId: string, pairing: Pairing]> = []) =>
  Layer.sync(TaskboardPairings, () => {
    const pairings = new Map(initial)
    return TaskboardPairings.of({
      get: (serverId) => Effect.sync(() => pairings.get(serverId)),
      pair: (serverId, pairing) => Effect.sync(() => void pairings.set(serverId, pairing)),
      unpair: (serverId) => Effect.sync(() => pairings.delete(serverId))
    })
  })
