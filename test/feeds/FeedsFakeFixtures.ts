/**
 * In-memory fakes for the feeds suites: a chat platform over the sandbox seed (webhooks, channels,
 * bot 1 without MANAGE_WEBHOOKS in S2), external sources with a few known users, games, forums and
 * feeds, the real Cipher under a fresh key, and the memory repo and audit log.
 */
import { Context, Effect, Layer, Redacted, Ref } from "effect"
import { NotFound, RequestTimeout, ServiceUnavailable, BadRequest } from "../../src/domain/infra/Errors.ts"
import type { LookupModule } from "../../src/domain/feeds/Feed.ts"
import * as Seed from "../../src/sandbox/Seed.ts"
import { ChatPlatform, PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import type { PlatformWebhook } from "../../src/services/platform/ChatPlatform.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import type { ServerAccess } from "../../src/services/platform/Directory.ts"
import { ExternalSources } from "../../src/services/sources/ExternalSources.ts"
import type { ExternalUser } from "../../src/services/sources/ExternalSources.ts"
import { Feeds } from "../../src/services/feeds/Feeds.ts"
import { FeedsConfig } from "../../src/services/feeds/FeedsConfig.ts"
import type { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"
import { AuditLogMemory } from "../layers/AuditLogMemory.ts"
import { FeedsRepoMemory } from "../layers/FeedsRepoMemory.ts"
import { stubService } from "../layers/Stub.ts"

export const { BOT1_ID, BOT2_ID, BOT1_TOKEN, BOT2_TOKEN, S1_ID, S2_ID, S3_ID, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, WEBHOOK_S3_ID, WEBHOOK_S3_TOKEN } =
  Seed
export const ch = (server: 1 | 2 | 3 | 4, kind: keyof typeof Seed.CHANNEL_INDEX) => Seed.channelId(server, Seed.CHANNEL_INDEX[kind])

const guild = (id: string) => Seed.SEED.guilds.find((g) => g.id === id)!

export const access = (botId: string, serverId: string): ServerAccess => ({
  botId,
  botToken: Redacted.make(botId === BOT1_ID ? BOT1_TOKEN : BOT2_TOKEN),
  serverId,
  channels: guild(serverId).channels.map((c) => ({ id: c.id, name: c.name, type: c.type, guild_id: serverId })),
  roles: [],
  actor: { userId: Seed.ALICE_ID, userName: "alice", avatar: null }
})

interface StoredHook {
  readonly webhook: Omit<PlatformWebhook, "token">
  readonly token: string
}

/** What the fake platform saw, for assertions. */
export class PlatformCalls extends Context.Service<PlatformCalls, {
  readonly created: Ref.Ref<ReadonlyArray<{ channelId: string; name: string }>>
  readonly hooks: Ref.Ref<ReadonlyArray<StoredHook>>
}>()("test/PlatformCalls") {}

const channelGuild = (channelId: string) => Seed.SEED.guilds.find((g) => g.channels.some((c) => c.id === channelId))
const botOf = (token: Redacted.Redacted<string>) => Redacted.value(token) === BOT1_TOKEN ? BOT1_ID : BOT2_ID
/** Bot 1 lacks MANAGE_WEBHOOKS in S2 (as in the seed). */
const mayManage = (botId: string, guildId: string) => !(botId === BOT1_ID && guildId === S2_ID)

const withToken = (h: StoredHook): PlatformWebhook => ({ ...h.webhook, token: Redacted.make(h.token) })

const platformLayer = Layer.effect(ChatPlatform, Effect.gen(function*() {
  const calls = yield* PlatformCalls
  // Only the webhook calls: the feeds rules use no other part of the platform.
  return stubService(ChatPlatform, {
    authorizeUrl: () => "",
    getChannelWebhooks: (botToken, channelId) =>
      Effect.gen(function*() {
        const g = channelGuild(channelId)
        if (g === undefined) return yield* new PlatformRejected({ status: 404, message: "Unknown Channel", code: 10003 })
        const bot = botOf(botToken)
        if (!mayManage(bot, g.id)) return yield* new PlatformRejected({ status: 403, message: "Missing Permissions", code: 50013 })
        const hooks = yield* Ref.get(calls.hooks)
        return hooks.filter((h) => h.webhook.channel_id === channelId).map((h) =>
          h.webhook.application_id === bot ? withToken(h) : h.webhook
        )
      }),
    createWebhook: (botToken, channelId, name) =>
      Effect.gen(function*() {
        const g = channelGuild(channelId)
        if (g === undefined) return yield* new PlatformRejected({ status: 404, message: "Unknown Channel", code: 10003 })
        const bot = botOf(botToken)
        if (!mayManage(bot, g.id)) return yield* new PlatformRejected({ status: 403, message: "Missing Permissions", code: 50013 })
        const hooks = yield* Ref.get(calls.hooks)
        const hook: StoredHook = {
          webhook: {
            id: `34000000000000${String(1000 + hooks.length)}`,
            type: 1,
            name,
            avatar: null,
            channel_id: channelId,
            guild_id: g.id,
            application_id: bot
          },
          token: `created-token-${hooks.length}-secret`
        }
        yield* Ref.set(calls.hooks, [...hooks, hook])
        yield* Ref.update(calls.created, (c) => [...c, { channelId, name }])
        return withToken(hook)
      }),
    getWebhookWithToken: (id, token) =>
      Effect.gen(function*() {
        const hook = (yield* Ref.get(calls.hooks)).find((h) => h.webhook.id === id && h.token === Redacted.value(token))
        if (hook === undefined) return yield* new PlatformRejected({ status: 404, message: "Unknown Webhook", code: 10015 })
        return withToken(hook)
      })
  })
}))

const callsLayer = Layer.effect(PlatformCalls, Effect.gen(function*() {
  const hooks = yield* Ref.make<ReadonlyArray<StoredHook>>(Seed.SEED.webhooks.map((w) => ({
    webhook: {
      id: w.id,
      type: 1,
      name: w.name,
      avatar: w.avatar,
      channel_id: w.channelId,
      guild_id: w.guildId,
      application_id: w.applicationId
    },
    token: w.token
  })))
  return PlatformCalls.of({ created: yield* Ref.make<ReadonlyArray<{ channelId: string; name: string }>>([]), hooks })
}))

// ---- external sources ---------------------------------------------------------------------------

export const USERS: Record<LookupModule, ReadonlyArray<ExternalUser>> = {
  photo: [{ id: "7001", userName: "alice.photos", displayName: "Alice Photos", url: "https://photo.test/alice.photos" }],
  streaming: [{ id: "8001", userName: "bobstreams", displayName: "BobStreams", url: "https://stream.test/bobstreams" }],
  microblog: [{ id: "9001", userName: "carol", displayName: "Carol C.", url: "https://micro.test/@carol" }],
  video: [{ id: "UCabc123", userName: "@carolvideos", displayName: "Carol Videos", url: "https://video.test/@carolvideos" }]
}
export const GAMES = [{ id: "33214", name: "Fortnite" }, { id: "509658", name: "Just Chatting" }]
export const FORUMS = [{ name: "effect", flairs: ["Question", "News"] }, { name: "quiet", flairs: [] }]
export const FEED_URL = "https://blog.test/feed.xml"

/** "down" and "slow" simulate an unreachable and a timed-out source. */
const fault = (source: string, input: string) =>
  input === "down"
    ? Effect.fail(ServiceUnavailable.of(`The ${source} source is unreachable.`, 5))
    : input === "slow"
    ? Effect.fail(RequestTimeout.of(`The ${source} source did not answer in time; retry.`))
    : undefined

const sourcesLayer = Layer.succeed(ExternalSources, ExternalSources.of({
  lookupUser: (module, nameOrId) =>
    fault(module, nameOrId) ?? Effect.fromNullishOr(USERS[module].find((u) =>
      u.id === nameOrId || u.userName.toLowerCase() === nameOrId.toLowerCase() || u.displayName === nameOrId
    )).pipe(Effect.mapError(() => NotFound.of(`No ${module} user ${nameOrId}.`))),
  lookupGame: (nameOrId) =>
    fault("streaming", nameOrId) ?? Effect.fromNullishOr(GAMES.find((g) => g.id === nameOrId || g.name.toLowerCase() === nameOrId.toLowerCase()))
      .pipe(Effect.mapError(() => NotFound.of(`No game ${nameOrId}.`))),
  gameNames: (ids) => Effect.succeed(ids.flatMap((id) => GAMES.filter((g) => g.id === id).map((g) => g.name))),
  forum: (name) => {
    const bare = name.replace(/^\/?r\//i, "").toLowerCase()
    return fault("forum", name) ?? Effect.fromNullishOr(FORUMS.find((f) => f.name === bare))
      .pipe(Effect.mapError(() => NotFound.of(`No subreddit ${name}.`)))
  },
  rss: (url) =>
    fault("rss", url) ??
      (url === FEED_URL
        ? Effect.succeed({ url, title: "A blog" })
        : url.startsWith("https://blog.test/")
        ? Effect.fail(BadRequest.of(`${url} is not an RSS or Atom feed.`))
        : Effect.fail(NotFound.of(`Nothing at ${url}.`)))
}))

export const testCipher = Cipher.make(parseKeyring(generateKey()))

export const feedsConfig = (over: Partial<typeof FeedsConfig.defaults> = {}) =>
  Layer.succeed(FeedsConfig, FeedsConfig.of({ ...FeedsConfig.defaults, ...over }))

/** A fresh Feeds service over fakes; PlatformCalls and the audit store are exposed for assertions. */
export const feedsTestLayer = <E = never, R = never>(
  config = feedsConfig(),
  repo: Layer.Layer<FeedsRepo, E, R> = FeedsRepoMemory as Layer.Layer<FeedsRepo, E, R>
) =>
  Feeds.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(
      config,
      repo,
      sourcesLayer,
      platformLayer.pipe(Layer.provideMerge(callsLayer)),
      Layer.succeed(Cipher, testCipher),
      AuditLogMemory
    ))
  )
