/**
 * FeedsConfig from the environment: FEEDS_MAX_PER_MODULE (default 50); WEBHOOK_URL_PREFIXES
 * (comma-separated, replaces the platform's defaults); FEEDS_WEBHOOK_NAME (default "Feeds"); in
 * sandbox mode DISCORD_API_URL and the sandbox under PUBLIC_URL are accepted too. A bad value
 * stops start-up with one line naming the variable, like the rest of the configuration.
 */
import { Config, Effect, Layer } from "effect"
import { DEFAULT_WEBHOOK_URL_PREFIXES, FeedsConfig } from "../../services/FeedsConfig.ts"
import { AppConfig, ConfigInvalid } from "./AppConfig.ts"

export const FeedsConfigEnv = Layer.effect(FeedsConfig, Effect.gen(function*() {
  const app = yield* AppConfig
  const max = yield* Config.Int("FEEDS_MAX_PER_MODULE").pipe(Config.withDefault(50))
  const prefixes = yield* Config.String("WEBHOOK_URL_PREFIXES").pipe(
    Config.withDefault(DEFAULT_WEBHOOK_URL_PREFIXES.join(",")),
    Config.map((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0))
  )
  const name = yield* Config.String("FEEDS_WEBHOOK_NAME").pipe(Config.withDefault("Feeds"))
  if (max < 1) return yield* new ConfigInvalid({ message: `FEEDS_MAX_PER_MODULE: expected a positive integer, got ${max}` })
  const badPrefix = prefixes.find((p) => !/^https?:$/.test(URL.canParse(p) ? new URL(p).protocol : ""))
  if (badPrefix !== undefined) {
    return yield* new ConfigInvalid({ message: `WEBHOOK_URL_PREFIXES: expected http(s) URLs, got ${badPrefix}` })
  }
  return FeedsConfig.of({
    maxFeedsPerModule: max,
    // The sandbox serves its chat platform under the gateway's own URL (src/sandbox/DiscordHttp.ts).
    webhookUrlPrefixes: app.sandbox ? [...prefixes, app.discordApiUrl, `${app.publicUrl}/sandbox/discord/api`] : prefixes,
    defaultWebhookName: name.trim() === "" ? "Feeds" : name
  })
}))
