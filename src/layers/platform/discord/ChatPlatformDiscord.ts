/**
 * The live chat platform: Discord API v10 over Effect's `HttpClient`. This subtree holds the whole
 * client, as tim-smart/dfx does: the REST pipeline (DiscordRest.ts) sends every call under Discord's
 * rate limits (DiscordRateLimits.ts); reads go through short per-instance caches that also coalesce
 * identical concurrent reads (DiscordCache.ts, DiscordReads.ts); sign-in is OAuth2 (DiscordOAuth.ts);
 * webhook posts go through the same pipeline (DiscordWebhooks.ts).
 * The client knows nothing of the sandbox: src/sandbox/SandboxMode.ts points it there.
 */
import { NodeRedis } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import type { HttpClient } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { ChatPlatform } from "../../../services/platform/ChatPlatform.ts"
import { DiscordGlobalBudget } from "./DiscordGlobalBudget.ts"
import type { DiscordCacheOptions } from "./DiscordCache.ts"
import { withGuildListMemo } from "./DiscordCache.ts"
import { makeDiscordOAuth } from "./DiscordOAuth.ts"
import type { DiscordRateLimitsOptions } from "./DiscordRateLimits.ts"
import { DiscordRateLimits } from "./DiscordRateLimits.ts"
import { makeDiscordReads } from "./DiscordReads.ts"
import type { DiscordRestOptions } from "./DiscordRest.ts"
import { defaultUserAgent, makeDiscordRest } from "./DiscordRest.ts"
import { makeDiscordChannelMessages } from "./DiscordChannelMessages.ts"
import { makeDiscordMessages } from "./DiscordMessages.ts"
import { makeDiscordApplications } from "./DiscordApplications.ts"
import { makeDiscordWebhooks } from "./DiscordWebhooks.ts"

/**
 * Where Discord is and who the gateway is there (DiscordRestOptions), how long a call may wait on
 * rate limits and how many refusals it allows (DiscordRateLimitsOptions), and the caches' lifetimes
 * (DiscordCacheOptions).
 */
export interface DiscordChatPlatformOptions extends DiscordRestOptions, DiscordRateLimitsOptions, DiscordCacheOptions {
  /** Default `https://discord.com/oauth2/authorize`. */
  readonly authorizeUrl?: string | undefined
}

const make = Effect.fnUntraced(function*(options: DiscordChatPlatformOptions) {
  const rest = yield* makeDiscordRest(options)
  // The server lists are also remembered for a cached read's fast path (DiscordCache.ts).
  const reads = withGuildListMemo(options, yield* makeDiscordReads(options, rest))
  return ChatPlatform.of({ ...makeDiscordOAuth(options, rest), ...reads, ...makeDiscordWebhooks(rest),
    ...makeDiscordMessages(rest),
    ...makeDiscordChannelMessages(rest),
    ...makeDiscordApplications(rest)
  })
})

/**
 * The live layer. Needs an `HttpClient`, a `RateLimiterStore` (the invalid-request budget) and a
 * `DiscordGlobalBudget` (the global one): Redis ones share the budgets across instances.
 */
export const layerWithStore = (
  options: DiscordChatPlatformOptions
): Layer.Layer<ChatPlatform, never, HttpClient.HttpClient | RateLimiter.RateLimiterStore | DiscordGlobalBudget> =>
  Layer.effect(ChatPlatform, make(options)).pipe(
    Layer.provide(DiscordRateLimits.layer({
      waitBudget: options.waitBudget,
      globalPerSecond: options.globalPerSecond,
      invalidRequestLimit: options.invalidRequestLimit,
      keyPrefix: options.keyPrefix
    }))
  )

/** The live layer counting the global budget in this process's memory. */
export const layer = (options: DiscordChatPlatformOptions): Layer.Layer<ChatPlatform, never, HttpClient.HttpClient> =>
  layerWithStore(options).pipe(Layer.provide([RateLimiter.layerStoreMemory, DiscordGlobalBudget.layerMemory]))

/** The live layer counting the global budget in Redis, shared by every instance using that Redis. */
export const layerRedis = (
  options: DiscordChatPlatformOptions & { readonly redisUrl: string }
) =>
  layerWithStore(options).pipe(
    Layer.provide([
      RateLimiter.layerStoreRedis({ prefix: "gateway:ratelimit:" }),
      DiscordGlobalBudget.layerRedis({ prefix: "gateway:ratelimit:" })
    ]),
    Layer.provide(NodeRedis.layer({ url: options.redisUrl }))
  )

export const ChatPlatformDiscord = { layer, layerWithStore, layerRedis, defaultUserAgent } as const
