/** Interactions over SQL: keys from the bots registry (kept a while), answers (ids recorded in `interactions_seen`) from the forms runtime. */
import { Effect, Layer } from "effect"
import { BotApplications } from "../../services/submissions/BotApplications.ts"
import { Interactions } from "../../services/submissions/Interactions.ts"
import { cachedApplications } from "./CachedBotApplications.ts"
import { makeFormRuntime } from "./FormRuntime.ts"

export const InteractionsLive = Layer.effect(Interactions, Effect.gen(function*() {
  const apps = yield* BotApplications
  const cached = yield* cachedApplications(apps)
  // The runtime reads the bot of the same application the route just verified: from the same cache.
  const handle = yield* makeFormRuntime.pipe(Effect.provideService(BotApplications, BotApplications.of({ ...apps, byApplication: cached.byApplication })))
  return Interactions.of({
    publicKeyOf: (applicationId, fresh = false) =>
      Effect.map((fresh ? cached.fresh : cached.byApplication)(applicationId), (a) => a?.publicKey),
    handle
  })
}))
