/** Interactions over SQL: keys from the bots registry, ids in `interactions_seen`, answers from the forms runtime. */
import { Effect, Layer } from "effect"
import { BotApplications } from "../../services/submissions/BotApplications.ts"
import { Interactions } from "../../services/submissions/Interactions.ts"
import { makeFormRuntime } from "./FormRuntime.ts"
import { makeSeenInteractions } from "./SeenInteractionsSql.ts"

export const InteractionsLive = Layer.effect(Interactions, Effect.gen(function*() {
  const apps = yield* BotApplications
  const firstSeen = yield* makeSeenInteractions
  const handle = yield* makeFormRuntime
  return Interactions.of({
    publicKeyOf: (applicationId) => Effect.map(apps.byApplication(applicationId), (a) => a?.publicKey),
    firstSeen,
    handle
  })
}))
