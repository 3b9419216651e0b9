/**
 * The forms runtime's capabilities for the memory app (test/utils/TestApp.ts): bots' applications in
 * a map, and interactions that know no bot (every request 401: the memory app runs no forms).
 */
import { Effect, Layer } from "effect"
import { BotApplications } from "../../src/services/submissions/BotApplications.ts"
import type { BotApplication } from "../../src/services/submissions/BotApplications.ts"
import { Interactions } from "../../src/services/submissions/Interactions.ts"
import { ephemeral } from "../../src/services/submissions/Interaction.ts"

export const BotApplicationsMemory = Layer.sync(BotApplications, () => {
  const apps = new Map<string, BotApplication>()
  return BotApplications.of({
    byApplication: (id) => Effect.sync(() => [...apps.values()].find((a) => a.applicationId === id)),
    byBot: (id) => Effect.sync(() => apps.get(id)),
    record: (botId, a) =>
      Effect.sync(() => {
        const known = apps.get(botId)
        apps.set(botId, { botId, applicationId: a.id, publicKey: a.verifyKey.toLowerCase(), commandsHash: known?.applicationId === a.id ? known.commandsHash : null })
        return true
      }),
    setCommandsHash: (botId, hash) =>
      Effect.sync(() => {
        const known = apps.get(botId)
        if (known !== undefined) apps.set(botId, { ...known, commandsHash: hash })
      })
  })
})

export const InteractionsMemory = Layer.succeed(Interactions, Interactions.of({
  publicKeyOf: () => Effect.succeed(undefined),
  handle: () => Effect.succeed(ephemeral("The memory app runs no forms."))
}))

export const SubmissionsMemory = Layer.merge(BotApplicationsMemory, InteractionsMemory)
