/**
 * The Discord client's short per-instance caches: one `Cache` per read, keyed by token hash and
 * argument, so identical concurrent reads make one upstream call (coalescing) and answers are kept
 * for a TTL. Failures are never kept.
 */
import { Cache, Clock, Duration, Effect, Equal, Exit, Hash, Redacted } from "effect"
import type { ChatPlatform, PlatformError, PlatformGuildSummary } from "../../../services/platform/ChatPlatform.ts"
import { lookupCounter, lookupMetrics } from "../../../services/infra/Metrics.ts"
import { tokenHash } from "./DiscordRateLimits.ts"

export interface DiscordCacheOptions {
  /** Cache lifetimes; 0 only coalesces concurrent identical reads. */
  readonly cacheTtl?: {
    /** GET /users/@me/guilds (user and bot). Default 30 s. */
    readonly guildList?: Duration.Input | undefined
    /** GET /guilds/{id}, /channels, /roles. Default 60 s. */
    readonly guild?: Duration.Input | undefined
    /** GET /channels/{id}/webhooks (invalidated by createWebhook). Default 30 s. */
    readonly webhooks?: Duration.Input | undefined
    /** GET /users/@me and GET /webhooks/{id}/{token}. Default 0. */
    readonly user?: Duration.Input | undefined
    /** GET /users/@me alone (user and bot), when it should differ from `user`. Default: `user`. */
    readonly me?: Duration.Input | undefined
  } | undefined
  /** Entries per cache. Default 10,000. */
  readonly cacheCapacity?: number | undefined
}

/** The lifetimes with their defaults. */
export const cacheTtls = (options: DiscordCacheOptions) => ({
  guildList: options.cacheTtl?.guildList ?? "30 seconds",
  guild: options.cacheTtl?.guild ?? "60 seconds",
  webhooks: options.cacheTtl?.webhooks ?? "30 seconds",
  user: options.cacheTtl?.user ?? 0,
  me: options.cacheTtl?.me ?? options.cacheTtl?.user ?? 0
})

/** A cache key: equal by `id` (token hash + route), carrying the token for the lookup only. */
export class Key {
  constructor(
    readonly id: string,
    readonly token: Redacted.Redacted<string>,
    readonly arg: string
  ) {}
  [Equal.symbol](that: unknown): boolean {
    return that instanceof Key && that.id === this.id
  }
  [Hash.symbol](): number {
    return Hash.string(this.id)
  }
}

const ttlFor = (input: Duration.Input) => (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isSuccess(exit) ? input : Duration.zero

/**
 * A cache of `capacity` entries whose successes live `timeToLive`; each read counted as a hit (an
 * entry kept or in flight) or a miss under `discord.<name>` (services/infra/Metrics.ts).
 */
export const cached = <A>(
  name: string,
  capacity: number,
  timeToLive: Duration.Input,
  lookup: (key: Key) => Effect.Effect<A, PlatformError>
) =>
  Effect.map(Cache.makeWith(lookup, { capacity, timeToLive: ttlFor(timeToLive) }), (cache) => {
    const count = lookupCounter(`discord.${name}`)
    return {
      get: (key: Key) => Effect.flatMap(Cache.has(cache, key), (found) => Effect.andThen(count(found), Cache.get(cache, key))),
      invalidate: (key: Key) => Cache.invalidate(cache, key)
    }
  })

/** Beyond this many tokens with keys, the key memo starts over (keys are rebuilt on demand). */
const MAX_KEYED_TOKENS = 10_000

/** Makes the keys of one client instance. */
export const makeKeys = () => {
  // Tokens arrive as the same Redacted objects request after request (bot registry, decrypted
  // platform tokens): hash each once, and hand out the same Key for the same read, so a lookup
  // neither builds nor hashes a new key (Effect's Hash keeps an object's hash once it has it).
  const hashes = new WeakMap<Redacted.Redacted<string>, string>()
  let keys = new WeakMap<Redacted.Redacted<string>, Map<string, Key>>()
  let keyed = 0
  const hashOf = (token: Redacted.Redacted<string>) => {
    let hash = hashes.get(token)
    if (hash === undefined) {
      hash = tokenHash(Redacted.value(token))
      hashes.set(token, hash)
    }
    return hash
  }
  return (kind: "Bot" | "Bearer", what: string, token: Redacted.Redacted<string>, arg = "") => {
    let ofToken = keys.get(token)
    if (ofToken === undefined) {
      if (keyed >= MAX_KEYED_TOKENS) {
        keys = new WeakMap()
        keyed = 0
      }
      ofToken = new Map()
      keys.set(token, ofToken)
      keyed += 1
    }
    const slot = arg === "" ? `${kind}:${what}` : `${kind}:${what}:${arg}`
    let key = ofToken.get(slot)
    if (key === undefined) {
      // A token's reads are a few kinds times the servers it is used on: bounded like the caches.
      if (ofToken.size >= MAX_KEYED_TOKENS) ofToken.clear()
      key = new Key(`${kind}:${hashOf(token)}:${what}:${arg}`, token, arg)
      ofToken.set(slot, key)
    }
    return key
  }
}

type GuildList = ReadonlyArray<PlatformGuildSummary>
type GuildReads = Pick<ChatPlatform["Service"], "getBotGuilds" | "getCurrentUserGuilds">

/**
 * The two server-list reads, remembered as they pass so a cached read can take both at once without
 * an Effect per cache (`cachedGuildLists`, ChatPlatform.ts). A list is fresh until `guildList` after
 * it was first seen, which is when its lookup completed: the expiry of its entry in the cache behind
 * `reads` (a list seen again through another token object keeps that time, so nothing is ever kept
 * longer than the cache keeps it). Failures pass untouched. With a zero lifetime (coalescing only)
 * nothing is remembered and `cachedGuildLists` is left out.
 */
export const withGuildListMemo = <R extends GuildReads>(options: DiscordCacheOptions, reads: R): R & Pick<ChatPlatform["Service"], "cachedGuildLists"> => {
  const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(cacheTtls(options).guildList))
  if (!(ttlMs > 0)) return reads
  // Per list object: until when it is fresh. Per token object: the list it last answered.
  const freshUntil = new WeakMap<GuildList, number>()
  const bot = new WeakMap<Redacted.Redacted<string>, GuildList>()
  const user = new WeakMap<Redacted.Redacted<string>, GuildList>()
  const remember = (by: WeakMap<Redacted.Redacted<string>, GuildList>, token: Redacted.Redacted<string>) => (list: GuildList) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      if (!freshUntil.has(list)) freshUntil.set(list, now + ttlMs)
      by.set(token, list)
      return list
    })
  const fresh = (by: WeakMap<Redacted.Redacted<string>, GuildList>, token: Redacted.Redacted<string>, now: number) => {
    const list = by.get(token)
    return list !== undefined && (freshUntil.get(list) ?? 0) > now ? list : undefined
  }
  // The same series as the caches' own counts (discord.bot_guilds, discord.guilds in DiscordReads.ts).
  const counted = { bot: lookupMetrics("discord.bot_guilds").hit, user: lookupMetrics("discord.guilds").hit }
  return {
    ...reads,
    getBotGuilds: (token, options) => Effect.flatMap(reads.getBotGuilds(token, options), remember(bot, token)),
    getCurrentUserGuilds: (token) => Effect.flatMap(reads.getCurrentUserGuilds(token), remember(user, token)),
    cachedGuildLists: (botToken, userToken) =>
      Effect.withFiber((fiber) => {
        const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
        const botGuilds = fresh(bot, botToken, now)
        const userGuilds = botGuilds === undefined ? undefined : fresh(user, userToken, now)
        if (botGuilds === undefined || userGuilds === undefined) return Effect.undefined
        counted.bot.updateUnsafe(1, fiber.context)
        counted.user.updateUnsafe(1, fiber.context)
        return Effect.succeed([botGuilds, userGuilds] as const)
      })
  }
}
