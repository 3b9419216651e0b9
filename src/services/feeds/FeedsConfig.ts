/**
 * Settings of the feed connectors (FEEDS_MAX_PER_MODULE, WEBHOOK_URL_PREFIXES, FEEDS_WEBHOOK_NAME;
 * read from the environment by src/layers/config/FeedsConfigEnv.ts) and the recognition of a
 * chat-platform webhook URL among the configured prefixes.
 */
import { Context, Option } from "effect"

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
}

/** An accepted API base: the URL's origin and path, without a trailing `/vNN`. */
interface Prefix {
  readonly protocol: string
  readonly host: string
  readonly path: string
}

/** Parses the configured bases once (FeedsConfigEnv refuses a base that is not a URL). */
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
