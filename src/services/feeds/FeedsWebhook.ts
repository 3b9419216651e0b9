/**
 * The chat webhook a feed posts to (decisions.md "Feeds"): given by its URL (checked with the chat
 * platform: it exists, belongs to this server and, when both are given, to `webhook_channel`), or by
 * a channel of the server, where the webhook the bot owns is reused or else one is created. The
 * token comes back Redacted, for the caller to encrypt; it never appears in an error.
 */
import { Effect, Option, Redacted } from "effect"
import { Forbidden, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { FeedCreate } from "../../domain/feeds/Feed.ts"
import type { PlatformError, PlatformWebhook } from "../platform/ChatPlatform.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import type { ServerAccess } from "../platform/Directory.ts"
import { FeedsConfig, parseWebhookPrefixes, parseWebhookUrl } from "./FeedsConfig.ts"
import type { FeedsError } from "./FeedsProblems.ts"
import { bad } from "./FeedsProblems.ts"

export type ResolvedWebhook = PlatformWebhook & { readonly secret: Redacted.Redacted<string> }

/** Where a create says to post. */
export type WebhookTarget = Pick<FeedCreate, "webhook_url" | "webhook_channel">

export interface FeedsWebhook {
  /** `name`: the feed's `webhook-name`, for a webhook created in the channel (else the default). */
  readonly resolve: (access: ServerAccess, target: WebhookTarget, name: string | null) => Effect.Effect<ResolvedWebhook, FeedsError>
  /**
   * Every check of `resolve` that changes nothing (the URL's webhook read and checked; the channel's
   * existence and type), to run with the other checks of a create so every 400 comes in one answer.
   * Some: the webhook of `webhook_url`, already resolved; None: `resolve` still has to find or create one.
   */
  readonly check: (access: ServerAccess, target: WebhookTarget) => Effect.Effect<Option.Option<ResolvedWebhook>, FeedsError>
  /** A disabled feed's webhook asked again (delivery.md §4): it still exists and belongs to this server, or a 400. */
  readonly recheck: (access: ServerAccess, webhookId: string, token: Redacted.Redacted<string>) => Effect.Effect<void, FeedsError>
}

const platformFault = (e: PlatformError, what: string): FeedsError =>
  e._tag !== "PlatformRejected"
    ? e
    : e.status === 401
    ? ServiceUnavailable.of("The chat platform refused the bot's credentials.", 60)
    : ServiceUnavailable.of(`The chat platform refused ${what} (${e.status}).`, 10)

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

    const checkChannel = (access: ServerAccess, channelId: string): Effect.Effect<void, FeedsError> => {
      const channel = access.channels.find((c) => c.id === channelId)
      if (channel === undefined) {
        return Effect.fail(bad("webhook_channel", `webhook_channel: ${channelId} is not a channel of this server.`))
      }
      if (channel.type !== 0 && channel.type !== 5) {
        return Effect.fail(bad("webhook_channel", `webhook_channel: ${channelId} is not a text or news channel.`))
      }
      return Effect.void
    }

    const fromChannel = (access: ServerAccess, channelId: string, name: string): Effect.Effect<ResolvedWebhook, FeedsError> =>
      Effect.gen(function*() {
        yield* checkChannel(access, channelId)
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
          return yield* ServiceUnavailable.of("The chat platform returned a webhook without its token; retry.", 5)
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
    const check: FeedsWebhook["check"] = (access, target) =>
      target.webhook_url !== undefined
        ? Effect.map(fromUrl(access, target, target.webhook_url), Option.some)
        : target.webhook_channel !== undefined
        ? Effect.as(checkChannel(access, target.webhook_channel), Option.none())
        : Effect.fail(bad("webhook_channel", "one of webhook_channel and webhook_url is required"))
    const gone = "webhook_url: the feed is disabled and its webhook still does not answer (deleted, or the bot lost access); delete the feed and create it again with a working webhook."
    const recheck: FeedsWebhook["recheck"] = (access, webhookId, token) =>
      platform.getWebhookWithToken(webhookId, token).pipe(
        Effect.catchTag("PlatformRejected", (e) =>
          Effect.fail(e.status >= 400 && e.status < 500 && e.status !== 429 ? bad("webhook_url", gone) : platformFault(e, "the webhook check"))),
        Effect.flatMap((w) =>
          w.guild_id === null || w.guild_id === access.serverId
            ? Effect.void
            : Effect.fail(bad("webhook_url", "webhook_url: the feed's webhook now belongs to another server; delete the feed and create it again.")))
      )
    return { resolve, check, recheck } satisfies FeedsWebhook
  })
}
