/**
 * The chat webhook a feed posts to (decisions.md "Feeds"): given by its URL (checked with the chat
 * platform: it exists, belongs to this server and, when both are given, to `webhook_channel`), or by
 * a channel of the server, where the webhook the bot owns is reused or else one is created. The
 * token comes back Redacted, for the caller to encrypt; it never appears in an error.
 */
import { Effect, Option, Redacted } from "effect"
import { Forbidden, ServiceUnavailable } from "../domain/Errors.ts"
import type { FeedCreate } from "../domain/Feed.ts"
import type { PlatformError, PlatformWebhook } from "./ChatPlatform.ts"
import { ChatPlatform } from "./ChatPlatform.ts"
import type { ServerAccess } from "./Directory.ts"
import { FeedsConfig, parseWebhookPrefixes, parseWebhookUrl } from "./FeedsConfig.ts"
import type { FeedsError } from "./FeedsProblems.ts"
import { bad } from "./FeedsProblems.ts"

export type ResolvedWebhook = PlatformWebhook & { readonly secret: Redacted.Redacted<string> }

/** Where a create says to post. */
export type WebhookTarget = Pick<FeedCreate, "webhook_url" | "webhook_channel">

export interface FeedsWebhook {
  /** `name`: the feed's `webhook-name`, for a webhook created in the channel (else the default). */
  readonly resolve: (access: ServerAccess, target: WebhookTarget, name: string | null) => Effect.Effect<ResolvedWebhook, FeedsError>
}

const platformFault = (e: PlatformError, what: string): FeedsError =>
  e._tag !== "PlatformRejected"
    ? e
    : e.status === 401
    ? ServiceUnavailable.of("The chat platform refused the bot's credentials.")
    : ServiceUnavailable.of(`The chat platform refused ${what} (${e.status}).`)

const lacksManageWebhooks = (channelId: string) =>
  Forbidden.of(
    `The bot lacks the MANAGE_WEBHOOKS permission in channel ${channelId}; grant it to the bot or pass webhook_url.`,
    { permission: "MANAGE_WEBHOOKS", path: "webhook_channel" }
  )

export const FeedsWebhook = {
  /** Needs ChatPlatform and FeedsConfig. */
  make: Effect.gen(function*() {
    const platform = yield* ChatPlatform
    const config = yield* FeedsConfig
    const prefixes = parseWebhookPrefixes(config.webhookUrlPrefixes)

    const fromUrl = (access: ServerAccess, target: WebhookTarget, url: string): Effect.Effect<ResolvedWebhook, FeedsError> =>
      Effect.gen(function*() {
        const parsed = parseWebhookUrl(url, prefixes)
        if (Option.isNone(parsed)) {
          return yield* bad(
            "webhook_url",
            "webhook_url: expected a chat-platform webhook URL such as https://discord.com/api/webhooks/{id}/{token}."
          )
        }
        const secret = Redacted.make(parsed.value.token)
        const webhook = yield* platform.getWebhookWithToken(parsed.value.id, secret).pipe(
          Effect.catchTag("PlatformRejected", (e) =>
            Effect.fail(
              e.status >= 400 && e.status < 500 && e.status !== 429
                ? bad("webhook_url", "webhook_url: the chat platform does not know this webhook: it was deleted or the URL is wrong.")
                : platformFault(e, "the webhook lookup")
            ))
        )
        if (webhook.guild_id !== access.serverId) {
          return yield* bad("webhook_url", "webhook_url: the webhook belongs to another server.")
        }
        if (target.webhook_channel !== undefined && webhook.channel_id !== target.webhook_channel) {
          return yield* bad(
            "webhook_channel",
            `webhook_channel: the webhook of webhook_url posts to channel ${webhook.channel_id}, not to ${target.webhook_channel}.`
          )
        }
        return { ...webhook, secret }
      })

    const fromChannel = (access: ServerAccess, channelId: string, name: string): Effect.Effect<ResolvedWebhook, FeedsError> =>
      Effect.gen(function*() {
        const channel = access.channels.find((c) => c.id === channelId)
        if (channel === undefined) {
          return yield* bad("webhook_channel", `webhook_channel: ${channelId} is not a channel of this server.`)
        }
        if (channel.type !== 0 && channel.type !== 5) {
          return yield* bad("webhook_channel", `webhook_channel: ${channelId} is not a text or news channel.`)
        }
        const onRejected = (what: string) => (e: PlatformError) =>
          Effect.fail<FeedsError>(
            e._tag === "PlatformRejected" && e.status === 403
              ? lacksManageWebhooks(channelId)
              : e._tag === "PlatformRejected" && e.status === 404
              ? bad("webhook_channel", `webhook_channel: the chat platform does not know channel ${channelId}.`)
              : e._tag === "PlatformRejected" && e.status === 400
              ? bad("webhook_channel", `webhook_channel: the chat platform refused to ${what} in channel ${channelId} (e.g. the channel has the most webhooks allowed).`)
              : platformFault(e, what)
          )
        const existing = yield* platform.getChannelWebhooks(access.botToken, channelId).pipe(
          Effect.catch(onRejected("list the webhooks"))
        )
        const own = existing.find((w) => w.application_id === access.botId && w.token !== undefined && w.type === 1)
        const webhook = own ?? (yield* platform.createWebhook(access.botToken, channelId, name).pipe(
          Effect.catch(onRejected("create a webhook"))
        ))
        if (webhook.token === undefined) {
          return yield* ServiceUnavailable.of("The chat platform returned a webhook without its token; retry.")
        }
        if (webhook.guild_id !== null && webhook.guild_id !== access.serverId) {
          return yield* bad("webhook_channel", "webhook_channel: the webhook belongs to another server.")
        }
        return { ...webhook, secret: webhook.token }
      })

    const resolve: FeedsWebhook["resolve"] = (access, target, name) => {
      if (target.webhook_url !== undefined) return fromUrl(access, target, target.webhook_url)
      if (target.webhook_channel !== undefined) {
        return fromChannel(access, target.webhook_channel, name !== null && name.trim() !== "" ? name : config.defaultWebhookName)
      }
      return Effect.fail(bad("webhook_channel", "one of webhook_channel and webhook_url is required"))
    }
    return { resolve } satisfies FeedsWebhook
  })
}
