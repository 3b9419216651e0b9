/**
 * FeedsConfig from the environment: FEEDS_MAX_PER_MODULE (default 50); WEBHOOK_URL_PREFIXES
 * (comma-separated, replaces the platform's defaults); FEEDS_WEBHOOK_NAME (default "Feeds"); in
 * sandbox mode DISCORD_API_URL and the sandbox under PUBLIC_URL are accepted too. A bad value
 * stops start-up with one line naming the variable, like the rest of the configuration.
 */
import { Config, Effect, Layer } from "effect"
import { DEFAULT_WEBHOOK_URL_PREFIXES, FeedsConfig } from "../../services/feeds/FeedsConfig.ts"
import { AppConfig, ConfigInvalid } from "./AppConfig.ts"

/** The FEEDS_* variables and WEBHOOK_URL_PREFIXES; every bad one is reported (one line each). */
export const readFeedsEnv = Effect.gen(function*() {
  const problems: Array<string> = []
  const rawMax = (yield* Config.String("FEEDS_MAX_PER_MODULE").pipe(Config.withDefault(""))).trim()
  const max = rawMax === "" ? 50 : Number(rawMax)
  const prefixes = yield* Config.String("WEBHOOK_URL_PREFIXES").pipe(
    Config.withDefault(DEFAULT_WEBHOOK_URL_PREFIXES.join(",")),
    Config.map((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0))
  )
  const name = yield* Config.String("FEEDS_WEBHOOK_NAME").pipe(Config.withDefault("Feeds"))
  if (!Number.isSafeInteger(max) || max < 1) {
    problems.push(`FEEDS_MAX_PER_MODULE: expected a positive integer, got ${rawMax}`)
  }
  const badPrefix = prefixes.find((p) => !/^https?:$/.test(URL.canParse(p) ? new URL(p).protocol : ""))
  if (badPrefix !== undefined) problems.push(`WEBHOOK_URL_PREFIXES: expected http(s) URLs, got ${badPrefix}`)
  if (problems.length > 0) return yield* new ConfigInvalid({ message: problems.join("\n") })
  return { max, prefixes, name }
})

export const FeedsConfigEnv = Layer.effect(FeedsConfig, Effect.gen(function*() {
  const app = yield* AppConfig
  const { max, name, prefixes } = yield* readFeedsEnv
  return FeedsConfig.of({
    maxFeedsPerModule: max,
    // The sandbox serves its chat platform under the gateway's own URL (src/sandbox/DiscordHttp.ts).
    webhookUrlPrefixes: app.sandbox ? [...prefixes, app.discordApiUrl, `${app.publicUrl}/sandbox/discord/api`] : prefixes,
    defaultWebhookName: name.trim() === "" ? "Feeds" : name
  })
}))
