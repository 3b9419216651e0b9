/**
 * The chat platform (Discord API v10) as the gateway uses it. The live layer is a real HTTP client
 * (layers/ChatPlatformDiscord.ts); with no credentials configured it talks to the sandbox over HTTP.
 * Shapes are the fields the gateway uses of Discord's own objects (see ../shared/discord/openapi.json).
 */
import { Context, Schema } from "effect"
import type { Effect, Redacted } from "effect"
import { Forbidden, NotFound, RequestTimeout, ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import type { Embed } from "../delivery/render/Embed.ts"

/** GET /users/@me (user or bot token). */
export interface PlatformUser {
  readonly id: string
  readonly username: string
  readonly discriminator: string
  readonly global_name?: string | null
  readonly avatar: string | null
  readonly locale?: string
  readonly bot?: boolean
}

/** An element of GET /users/@me/guilds. `permissions` is the decimal bit set of the caller there. */
export interface PlatformGuildSummary {
  readonly id: string
  readonly name: string
  readonly icon: string | null
  readonly owner: boolean
  readonly permissions: string
}

/** GET /guilds/{id}. */
export interface PlatformGuild {
  readonly id: string
  readonly name: string
  readonly icon: string | null
  readonly owner_id: string
}

/** An element of GET /guilds/{id}/channels. Types: 0 text, 2 voice, 4 category, 5 news, … */
export interface PlatformChannel {
  readonly id: string
  readonly name: string
  readonly type: number
  readonly guild_id?: string
  /** A thread's channel, a channel's category. */
  readonly parent_id?: string | null
  /** A forum's tags (type 15). */
  readonly available_tags?: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

/** An element of GET /guilds/{id}/roles. `color` is the RGB integer. */
export interface PlatformRole {
  readonly id: string
  readonly name: string
  readonly color: number
  readonly permissions: string
  readonly position: number
}

/** A webhook (GET/POST /channels/{id}/webhooks, GET /webhooks/{id}/{token}). */
export interface PlatformWebhook {
  readonly id: string
  readonly type: number
  readonly name: string | null
  readonly avatar: string | null
  readonly channel_id: string
  readonly guild_id: string | null
  readonly application_id: string | null
  /** Present for incoming webhooks the caller may execute. A secret: never logged or returned. */
  readonly token?: Redacted.Redacted<string>
}

/**
 * What a webhook posts (POST /webhooks/{id}/{token}, Discord's ExecuteWebhook body): the fields the
 * gateway sends; delivery's rendered message (services/delivery/render/Render.ts) is one.
 */
export interface PlatformWebhookBody {
  readonly content?: string
  readonly username?: string
  readonly avatar_url?: string
  readonly allowed_mentions?: { readonly parse: ReadonlyArray<string>; readonly roles?: ReadonlyArray<string> }
  /** delivery.md §10: Discord's RichEmbed as the renderer fills it (services/delivery/Embed.ts). */
  readonly embeds?: ReadonlyArray<Embed>
  /** A forum webhook's new post: its name and tag ids. */
  readonly thread_name?: string
  readonly applied_tags?: ReadonlyArray<string>
}

/**
 * A message of a channel (GET /channels/{id}/messages, Discord's MessageResponse): the fields the
 * gateway reads. `webhook_id` is set on a message a webhook posted (its `author.id` is the webhook's id).
 */
export interface PlatformMessage {
  readonly id: string
  readonly content: string
  /** ISO 8601, as the platform writes it (`2026-12-01T10:00:00.000000+00:00`). */
  readonly timestamp: string
  readonly webhook_id: string | null
  readonly author_id: string
}

/** A thread of GET /guilds/{id}/threads/active (ThreadResponse); a forum's post is one, its id its first message's. */
export interface PlatformThread { readonly id: string; readonly name: string; readonly parent_id: string | null }

/** GET /applications/@me with a bot's token: the application's id and Ed25519 public key (hex). */
export interface PlatformApplication {
  readonly id: string
  readonly verify_key: string
}

/**
 * A message the bot posts in a channel or edits (POST/PATCH /channels/{id}/messages[/{id}]): the
 * fields the forms runtime sends. With `nonce` and `enforce_nonce`, the platform answers a second
 * post with the same nonce (within minutes) with the first message instead of a new one.
 */
export interface PlatformMessageBody {
  readonly content?: string
  readonly embeds?: ReadonlyArray<unknown>
  readonly components?: ReadonlyArray<unknown>
  readonly allowed_mentions?: { readonly parse: ReadonlyArray<string>; readonly roles?: ReadonlyArray<string> }
  readonly nonce?: string
  readonly enforce_nonce?: boolean
  /** The files' descriptions (`id` = the file's index in `files`). */
  readonly attachments?: ReadonlyArray<{ readonly id: number; readonly filename: string }>
  /** Text files attached to the message (sent as multipart beside the JSON). */
  readonly files?: ReadonlyArray<{ readonly filename: string; readonly content: string }>
}

/** The OAuth2 token answer of the platform. */
export interface PlatformTokens {
  readonly access_token: Redacted.Redacted<string>
  readonly refresh_token: Redacted.Redacted<string>
  readonly expires_in: number
  readonly scope: string
}

/**
 * A refusal by the platform that is the caller's business, not an outage: the token was refused
 * (401), the bot lacks a permission (403), the object does not exist (404), the request was bad
 * (400, e.g. an OAuth code that is invalid or already used).
 */
export class PlatformRejected extends Schema.TaggedError<PlatformRejected>()("PlatformRejected", {
  status: Schema.Int,
  message: Schema.String,
  /** Discord's JSON error code when it sent one (e.g. 10003 Unknown Channel). */
  code: Schema.optionalKey(Schema.Int)
}) {}

/** Everything the platform can answer besides success: a refusal or an upstream fault (408/503). */
export type PlatformError = PlatformRejected | RequestTimeout | ServiceUnavailable

/** Bit flags of Discord's permission set the gateway checks. */
export const Permission = {
  ADMINISTRATOR: 1n << 3n,
  MANAGE_GUILD: 1n << 5n,
  VIEW_AUDIT_LOG: 1n << 7n,
  MANAGE_WEBHOOKS: 1n << 29n
} as const

export class ChatPlatform extends Context.Service<ChatPlatform, {
  /** The platform's OAuth2 authorize URL for this sign-in (scopes `identify guilds`, PKCE S256). */
  readonly authorizeUrl: (options: {
    readonly state: string
    readonly codeChallenge: string
    readonly redirectUri: string
  }) => string
  readonly exchangeCode: (options: {
    readonly code: string
    readonly codeVerifier: string
    readonly redirectUri: string
  }) => Effect.Effect<PlatformTokens, PlatformError>
  readonly refreshToken: (refreshToken: Redacted.Redacted<string>) => Effect.Effect<PlatformTokens, PlatformError>
  readonly revokeToken: (token: Redacted.Redacted<string>) => Effect.Effect<void, PlatformError>

  /** With a user's OAuth token (`Authorization: Bearer …`). */
  readonly getCurrentUser: (userToken: Redacted.Redacted<string>) => Effect.Effect<PlatformUser, PlatformError>
  readonly getCurrentUserGuilds: (
    userToken: Redacted.Redacted<string>
  ) => Effect.Effect<ReadonlyArray<PlatformGuildSummary>, PlatformError>

  /** With a bot's token (`Authorization: Bot …`). */
  readonly getBotUser: (botToken: Redacted.Redacted<string>) => Effect.Effect<PlatformUser, PlatformError>
  /** `fresh`: asked of the platform now, not answered from a kept copy (which is replaced). */
  readonly getBotGuilds: (botToken: Redacted.Redacted<string>, options?: { readonly fresh?: boolean }) => Effect.Effect<ReadonlyArray<PlatformGuildSummary>, PlatformError>
  /**
   * The bot's and the user's server lists when fresh copies of both are at hand in this instance's
   * caches (counted as cache hits), else `undefined`; never calls the platform. A cached read's fast
   * path (services/platform/DirectoryLive.ts): the same lists `getBotGuilds` / `getCurrentUserGuilds` would
   * answer now. Optional: a layer without caches leaves it out.
   */
  readonly cachedGuildLists?: (
    botToken: Redacted.Redacted<string>,
    userToken: Redacted.Redacted<string>
  ) => Effect.Effect<readonly [ReadonlyArray<PlatformGuildSummary>, ReadonlyArray<PlatformGuildSummary>] | undefined>
  readonly getGuild: (botToken: Redacted.Redacted<string>, guildId: string) => Effect.Effect<PlatformGuild, PlatformError>
  readonly getGuildChannels: (
    botToken: Redacted.Redacted<string>,
    guildId: string
  ) => Effect.Effect<ReadonlyArray<PlatformChannel>, PlatformError>
  readonly getGuildRoles: (
    botToken: Redacted.Redacted<string>,
    guildId: string
  ) => Effect.Effect<ReadonlyArray<PlatformRole>, PlatformError>
  /** GET /channels/{id}: a channel or a thread, as the bot sees it (404 Unknown Channel otherwise). */
  readonly getChannel: (botToken: Redacted.Redacted<string>, channelId: string) => Effect.Effect<PlatformChannel, PlatformError>
  readonly getChannelWebhooks: (
    botToken: Redacted.Redacted<string>,
    channelId: string
  ) => Effect.Effect<ReadonlyArray<PlatformWebhook>, PlatformError>
  readonly createWebhook: (
    botToken: Redacted.Redacted<string>,
    channelId: string,
    name: string
  ) => Effect.Effect<PlatformWebhook, PlatformError>
  /** GET /webhooks/{id}/{token}: needs no authorization. */
  readonly getWebhookWithToken: (
    webhookId: string,
    webhookToken: Redacted.Redacted<string>
  ) => Effect.Effect<PlatformWebhook, PlatformError>
  /**
   * POST /webhooks/{id}/{token}[?wait=true]: posts a message (needs no authorization). With `wait`
   * (the default) the platform answers once the message exists: its id; without, null. Refusals
   * carry Discord's code: 404 Unknown Webhook (10015) when it was deleted, 401 Invalid Webhook
   * Token (50027) when the token is wrong, 403 when it may not post there. Never retried here (a
   * retry could post twice): a 5xx is a 503, no answer a 408, for the caller to decide; a 429 is
   * waited out by the client's rate limits (nothing was posted).
   */
  readonly executeWebhook: (
    webhookId: string,
    webhookToken: Redacted.Redacted<string>,
    body: PlatformWebhookBody,
    /** `threadId`: post into that thread of the webhook's channel (Execute Webhook's `thread_id` query). */
    options?: { readonly wait?: boolean; readonly threadId?: string | undefined }
  ) => Effect.Effect<string | null, PlatformError>
  /**
   * GET /channels/{id}/messages with the bot's token: the channel's recent messages, newest first
   * (`limit` 1–100, default 50; `before`/`after` a message id). Never cached: a delivery whose send
   * had no answer reads it to find out whether the message exists (DeliveryReconcile.ts). 403 when
   * the bot may not see the channel, 404 when it does not exist.
   */
  readonly getChannelMessages: (
    botToken: Redacted.Redacted<string>,
    channelId: string,
    options?: { readonly limit?: number; readonly before?: string; readonly after?: string }
  ) => Effect.Effect<ReadonlyArray<PlatformMessage>, PlatformError>
  /** GET /guilds/{id}/threads/active (bot token, never cached: DeliveryReconcile.ts): threads not archived; 404 10004 outside. */
  readonly getActiveThreads: (botToken: Redacted.Redacted<string>, guildId: string) => Effect.Effect<ReadonlyArray<PlatformThread>, PlatformError>
  /**
   * A direct message from the bot to a user (POST /users/@me/channels, then POST
   * /channels/{id}/messages): the message's id. 403 (50007) when the user takes no messages from it.
   */
  readonly sendDirectMessage: (
    botToken: Redacted.Redacted<string>,
    userId: string,
    body: PlatformWebhookBody
  ) => Effect.Effect<string, PlatformError>
  /** GET /applications/@me (bot token): the application's id and `verify_key`. */
  readonly getApplication: (botToken: Redacted.Redacted<string>) => Effect.Effect<PlatformApplication, PlatformError>
  /** PUT /applications/{id}/commands: replaces the application's global commands with `commands`. */
  readonly putCommands: (
    botToken: Redacted.Redacted<string>,
    applicationId: string,
    commands: ReadonlyArray<unknown>
  ) => Effect.Effect<void, PlatformError>
  /** POST /channels/{id}/messages: the message's id. 403/404 when the bot may not post there. */
  readonly createMessage: (
    botToken: Redacted.Redacted<string>,
    channelId: string,
    body: PlatformMessageBody
  ) => Effect.Effect<string, PlatformError>
  /** PATCH /channels/{id}/messages/{id}. */
  readonly editMessage: (botToken: Redacted.Redacted<string>, channelId: string, messageId: string, body: PlatformMessageBody) =>
    Effect.Effect<void, PlatformError>
  /** DELETE /channels/{id}/messages/{id}: 404 (10008 Unknown Message) when it is already gone. */
  readonly deleteMessage: (botToken: Redacted.Redacted<string>, channelId: string, messageId: string) => Effect.Effect<void, PlatformError>
  /**
   * POST /channels/{id}/messages/{id}/crosspost: publishes a message of an announcement channel to
   * the channels following it (delivery.md §10). A webhook's message needs the bot's MANAGE_MESSAGES
   * there (403 50013); 400 50024 outside an announcement channel, 400 40033 when already published,
   * 404 10008 Unknown Message. Sent once (a POST); over the platform's 10 an hour per channel, a 429
   * longer than the wait budget arrives as a 503 at once (the client's rate limits).
   */
  readonly crosspostMessage: (botToken: Redacted.Redacted<string>, channelId: string, messageId: string) => Effect.Effect<void, PlatformError>
}>()("gateway/ChatPlatform") {}

/**
 * The API error a platform refusal becomes. A refused user token means "sign in again" (401); a
 * refused bot token is the operator's problem, not the caller's: 503 until the bot is re-registered.
 */
export const rejectedToApiError = (e: PlatformRejected, what: string, credential: "user" | "bot" = "user") =>
  e.status === 404
    ? NotFound.of(`${what} does not exist on the chat platform.`)
    : e.status === 403
    ? Forbidden.of(`The bot may not read ${what} on the chat platform.`)
    : e.status === 401 && credential === "user"
    ? Unauthorized.of("The chat platform refused the stored credentials; sign in again.")
    : e.status === 401
    ? ServiceUnavailable.of("The chat platform refused the bot's token; an operator must register the bot again.", 60)
    : ServiceUnavailable.of(`The chat platform refused the request for ${what} (${e.status}).`, 10)
