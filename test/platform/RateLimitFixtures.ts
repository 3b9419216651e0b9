/**
 * Shared setup of the RateLimitBehaviour*.test.ts files (the chat platform's rate limiter, issue #19):
 * clients against the sandbox platform (with its fault injection and call counts), against a
 * scripted fake (DiscordFixtures.ts), and the limiter alone for the test clock. Nothing here holds
 * state between files: every client, limiter and key prefix is made per test.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { RateLimiter } from "effect/persistence"
import type { DiscordChatPlatformOptions } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { DiscordGlobalBudget } from "../../src/layers/platform/discord/DiscordGlobalBudget.ts"
import type { Answer } from "../../src/layers/platform/discord/DiscordRateLimits.ts"
import { DiscordRateLimits } from "../../src/layers/platform/discord/DiscordRateLimits.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT1_TOKEN, BOT2_TOKEN, SEED } from "../../src/sandbox/Seed.ts"
import type { PlatformError } from "../../src/services/platform/ChatPlatform.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import type { Reply } from "./DiscordFixtures.ts"

export const bot1 = Redacted.make(BOT1_TOKEN)
export const bot2 = Redacted.make(BOT2_TOKEN)
export const noCache = { guild: 0, guildList: 0, webhooks: 0, user: 0, me: 0 } as const

export const build = (
  options: DiscordChatPlatformOptions,
  store: Layer.Layer<RateLimiter.RateLimiterStore> = RateLimiter.layerStoreMemory,
  budget: Layer.Layer<DiscordGlobalBudget> = DiscordGlobalBudget.layerMemory
) =>
  Layer.build(ChatPlatformDiscord.layerWithStore(options).pipe(Layer.provide([store, budget]), Layer.provide(FetchHttpClient.layer)))
    .pipe(Effect.map((context) => Context.get(context, ChatPlatform)))

/** `Retry-After` of a 503 (the envelope turns `retry_after` into the header), else undefined. */
export const retryAfterOf = (error: PlatformError): unknown =>
  error._tag === "ServiceUnavailable" ? error.problems[0]?.additionalProperties?.["retry_after"] : undefined
export const messageOf = (error: PlatformError): string =>
  error._tag === "PlatformRejected" ? error.message : error.problems[0]?.message ?? ""
export const statusOf = (error: PlatformError): number =>
  error._tag === "PlatformRejected" ? error.status : error._tag === "ServiceUnavailable" ? 503 : 408

// ---------------------------------------------------------------------------------------------------
// Against the sandbox platform (`layer(SandboxServer.layer(), { excludeTestServices: true })`).

export const sandboxClient = (options: Partial<DiscordChatPlatformOptions> = {}) =>
  Effect.flatMap(SandboxServer, (sandbox) =>
    build({
      baseUrl: sandbox.discordApiUrl,
      clientId: SEED.oauth.clientId,
      clientSecret: Redacted.make(SEED.oauth.clientSecret),
      cacheTtl: noCache,
      // Fresh keys per client: the invalid-request budget is not shared between tests.
      keyPrefix: `test:${Math.random()}:`,
      ...options
    }))

const control = (path: string, init?: RequestInit) =>
  Effect.flatMap(SandboxServer, (sandbox) =>
    Effect.promise(async () => {
      const response = await fetch(`${sandbox.url}${path}`, init)
      return response.headers.get("content-type")?.includes("json") ? await response.json() as unknown : undefined
    }))

export const fault = (body: Record<string, unknown>) =>
  control("/sandbox/faults", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
export const clearFaults = control("/sandbox/faults", { method: "DELETE" })
export const calls = Effect.map(control("/sandbox/stats"), (s) => (s as { readonly calls: Record<string, number> }).calls)
/** Calls the sandbox received per route name since `before`. */
export const sentSince = (before: Record<string, number>) =>
  Effect.map(calls, (now) => (route: string) => (now[route] ?? 0) - (before[route] ?? 0))

export const GUILD = "GET /guilds/{id}"
export const ROLES = "GET /guilds/{id}/roles"
export const WEBHOOKS = "GET /channels/{id}/webhooks"
export const guildPath = (id: string) => `/sandbox/discord/api/v10/guilds/${id}`

// ---------------------------------------------------------------------------------------------------
// Against a scripted fake, for answers the sandbox does not give.

export const fakeClient = (
  url: string,
  options: Partial<DiscordChatPlatformOptions> = {},
  store?: Layer.Layer<RateLimiter.RateLimiterStore>,
  budget?: Layer.Layer<DiscordGlobalBudget>
) => build({ baseUrl: url, clientId: "1", clientSecret: Redacted.make("s"), cacheTtl: noCache, ...options }, store, budget)

export const guild = (id: string) => ({ id, name: `Guild ${id}`, icon: null, owner_id: "1" })
export const tooMany = (headers: Record<string, string>, json?: unknown): Reply => ({ status: 429, headers, json })
export const botToken = Redacted.make("bot-token-rl")

// ---------------------------------------------------------------------------------------------------
// The limiter alone, on the test clock: the defaults, where HTTP would be too slow.

export const limits = (options: Parameters<typeof DiscordRateLimits.layer>[0] = {}) =>
  Layer.build(DiscordRateLimits.layer(options).pipe(Layer.provide([RateLimiter.layerStoreMemory, DiscordGlobalBudget.layerMemory])))
    .pipe(Effect.map((context) => Context.get(context, DiscordRateLimits)))

export const target = { identity: "bot:x", route: "GET /guilds/:guild", major: "1" }
export const answer = (status: number, headers: Record<string, string> = {}, body = ""): Answer => ({ status, headers, body })

