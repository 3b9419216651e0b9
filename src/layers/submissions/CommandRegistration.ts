/**
 * A bot's application read and its `/submit` registered (forms-runtime.md §1): `GET
 * /applications/@me` gives the application's id and public key, stored; the commands are sent
 * (`PUT /applications/{id}/commands`, a bulk overwrite) only when their hash differs from the one
 * stored. Run for every registered bot at start (in the background: a platform that does not answer
 * delays no start) and by `bots add`.
 */
import { Effect, Layer } from "effect"
import { Bots } from "../../services/platform/Bots.ts"
import type { BotRecord } from "../../services/platform/Bots.ts"
import { ChatPlatform } from "../../services/platform/ChatPlatform.ts"
import { BotApplications } from "../../services/submissions/BotApplications.ts"
import { commandsHash, SUBMIT_COMMANDS } from "../../services/submissions/SubmitCommand.ts"

/** Reads the bot's application, stores it, registers `/submit` when changed: the application and whether commands were sent. */
export const registerBot = (bot: BotRecord) =>
  Effect.gen(function*() {
    const chat = yield* ChatPlatform
    const apps = yield* BotApplications
    const application = yield* chat.getApplication(bot.token)
    yield* apps.record(bot.id, { id: application.id, verifyKey: application.verify_key })
    const hash = commandsHash(SUBMIT_COMMANDS)
    const stored = yield* apps.byBot(bot.id)
    if (stored?.commandsHash === hash) return { application, commandsSent: false }
    yield* chat.putCommands(bot.token, application.id, SUBMIT_COMMANDS)
    yield* apps.setCommandsHash(bot.id, hash)
    return { application, commandsSent: true }
  })

/** At start: every registered bot, in the background; a failure is logged, the others go on. */
export const CommandRegistration = Layer.effectDiscard(Effect.gen(function*() {
  const bots = yield* Bots
  const chat = yield* ChatPlatform
  const apps = yield* BotApplications
  yield* Effect.gen(function*() {
    for (const bot of yield* bots.list) {
      yield* registerBot(bot).pipe(
        Effect.provideService(ChatPlatform, chat),
        Effect.provideService(BotApplications, apps),
        // One line a bot, without a stack: interactions for it answer 401 until it is read (next start or `bots add`).
        Effect.catch((error) =>
          Effect.logWarning("a bot's application could not be read or its commands registered; its interactions are refused until then").pipe(
            Effect.annotateLogs({ bot: bot.id, reason: "message" in error ? String(error.message) : String(error) })
          ))
      )
    }
  }).pipe(
    Effect.catchCause((cause) => Effect.logWarning("the bots' commands could not be registered at start", cause)),
    Effect.forkScoped
  )
}))
