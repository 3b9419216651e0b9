/**
 * FormsSettings from the environment: FORMS_MAX_PER_SERVER (default 50, decisions.md "Forms"). A bad
 * value stops start-up with one line naming the variable, like the rest of the configuration.
 */
import { Config, Effect, Layer } from "effect"
import { FormsSettings } from "../../services/forms/Forms.ts"
import { ConfigInvalid } from "./AppConfig.ts"

/** FORMS_MAX_PER_SERVER, checked (also run by main with the rest of the configuration, to report every problem at once). */
export const readFormsEnv = Effect.gen(function*() {
  const raw = yield* Config.String("FORMS_MAX_PER_SERVER").pipe(Config.withDefault(""))
  const max = raw.trim() === "" ? FormsSettings.defaults.maxFormsPerServer : Number(raw)
  if (!Number.isSafeInteger(max) || max < 1) {
    return yield* new ConfigInvalid({ message: `FORMS_MAX_PER_SERVER: expected a positive integer, got ${raw}` })
  }
  return FormsSettings.of({ maxFormsPerServer: max })
})

export const FormsConfigEnv = Layer.effect(FormsSettings, readFormsEnv)
