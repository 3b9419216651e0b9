/** An in-memory bots registry holding the given bots; writes change it for the layer's lifetime. */
import { Effect, Layer } from "effect"
import { Bots } from "../../src/services/platform/Bots.ts"
import type { BotRecord } from "../../src/services/platform/Bots.ts"

export const BotsMemory = (bots: ReadonlyArray<BotRecord>) =>
  Layer.sync(Bots, () => {
    const map = new Map(bots.map((b) => [b.id, b]))
    return Bots.of({
      list: Effect.sync(() => [...map.values()]),
      get: (id) => Effect.sync(() => map.get(id)),
      upsert: (bot) => Effect.sync(() => void map.set(bot.id, bot)),
      remove: (id) => Effect.sync(() => map.delete(id))
    })
  })
