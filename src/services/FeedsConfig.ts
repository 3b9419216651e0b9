/**
 * Settings of the feed connectors (FEEDS_MAX_PER_MODULE, WEBHOOK_URL_PREFIXES, FEEDS_WEBHOOK_NAME)
 * and the recognition of a chat-platform webhook URL among the configured prefixes.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
import { AppConfig, ConfigInvalid } from "../layers/config/AppConfig.ts"

export interface FeedsConfigShape {
  /** Feeds per module per server (decisions.md: 50, configurable). */
  readonly maxFeedsPerModule: number
  /** API bases whose `/webhooks/{id}/{token}` URLs are accepted as `webhook_url`. */
  readonly webhookUrlPrefixes: ReadonlyArray<string>
  /** Name of a webhook the gateway creates when the feed sets no `webhook-name`. */
  readonly defaultWebhookName: string
}

export const DEFAULT_WEBHOOK_URL_PREFIXES = [
  "https://discord.com/api",
  "https://discordapp.com/api",
  "https://canary.discord.com/api",
  "https://ptb.discord.com/api"
] as const

export class FeedsConfig extends Context.Service<FeedsConfig, FeedsConfigShape>()("gateway/FeedsConfig") {
  static readonly defaults: FeedsConfigShape = {
    maxFeedsPerModule: 50,
    webhookUrlPrefixes: DEFAULT_WEBHOOK_URL_PREFIXES,
    defaultWebhookName: "Feeds"
  }
  /**
   * FEEDS_MAX_PER_MODULE (default 50); WEBHOOK_URL_PREFIXES (comma-separated, replaces the
   * platform's defaults); in sandbox mode DISCORD_API_URL and the sandbox under PUBLIC_URL too.
   */
  static readonly layer = Layer.effect(FeedsConfig, Effect.gen(function*() {
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
}

/** An accepted API base: the URL's origin and path, without a trailing `/vNN`. */
interface Prefix {
  readonly protocol: string
  readonly host: string
  readonly path: string
}

/** Parses the configured bases once (FeedsConfig.layer refuses a base that is not a URL). */
export const parseWebhookPrefixes = (prefixes: ReadonlyArray<string>): ReadonlyArray<Prefix> =>
  prefixes.filter((p) => URL.canParse(p)).map((p) => {
    const u = new URL(p)
    return { protocol: u.protocol, host: u.host, path: u.pathname.replace(/\/+$/, "").replace(/\/v\d+$/, "") }
  })

const WEBHOOK_PATH = /^(?:\/v\d+)?\/webhooks\/([0-9]{1,20})\/([A-Za-z0-9_.-]{1,200})\/?$/

/** `{base}[/vNN]/webhooks/{id}/{token}` under one of the bases, with no query, fragment or credentials. */
export const parseWebhookUrl = (
  input: string,
  prefixes: ReadonlyArray<Prefix>
): Option.Option<{ readonly id: string; readonly token: string }> => {
  if (!URL.canParse(input.trim())) return Option.none()
  const url = new URL(input.trim())
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") return Option.none()
  for (const p of prefixes) {
    if (url.protocol !== p.protocol || url.host !== p.host || !url.pathname.startsWith(`${p.path}/`)) continue
    const m = WEBHOOK_PATH.exec(url.pathname.slice(p.path.length))
    if (m !== null) return Option.some({ id: m[1]!, token: m[2]! })
  }
  return Option.none()
}
