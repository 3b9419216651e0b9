/**
 * In-memory state of the sandbox Discord: webhooks (seeded, then mutable), OAuth2 codes and tokens,
 * rate-limit windows, messages sent through webhooks. Created when the layer is built.
 */
import { Context, Effect, Layer } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { BucketSize, SandboxConfigShape } from "./DiscordConfig.ts"
import { SandboxConfig } from "./DiscordConfig.ts"
import type { SeedGuild, SeedWebhook } from "./Seed.ts"
import { computePermissions, FORUM_WEBHOOKS, SEED } from "./Seed.ts"

export interface AuthorizationCode {
  readonly userId: string
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: string
  readonly codeChallenge: string | undefined
  readonly expiresAt: number
}

export interface AccessToken {
  readonly userId: string
  readonly scope: string
  readonly expiresAt: number
  /** One sign-in: every token refreshed from it shares the grant (revocation ends them all). */
  readonly grant: string
}

export interface RefreshToken {
  readonly userId: string
  readonly scope: string
  readonly grant: string
}

export interface WebhookMessage {
  readonly id: string
  readonly webhookId: string
  readonly channelId: string
  readonly guildId: string
  readonly body: unknown
  readonly at: number
  /** Execute Webhook's `thread_id`, or the forum post the message opened (delivery.md §10). */
  readonly threadId?: string
  /** Discord's message flags: bit 1 CROSSPOSTED once the bot published it. */
  flags?: number
}

/** A forum post a webhook opened (Execute Webhook with `thread_name`): a public thread of the forum, its id its first message's. */
export interface ForumPostRecord {
  readonly id: string
  readonly name: string
  /** The forum. */
  readonly parentId: string
  readonly guildId: string
  /** The webhook that opened it. */
  readonly ownerId: string
  readonly appliedTags: ReadonlyArray<string>
  readonly at: number
}

export interface Window {
  count: number
  resetAt: number
}

export interface WindowCheck {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetAt: number
}

/** An opaque random token (base64url). */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString("base64url")

/** PKCE S256: BASE64URL(SHA256(verifier)). */
export const pkceChallenge = (verifier: string): string => createHash("sha256").update(verifier).digest("base64url")

/** Discord-like opaque bucket hash of a route name. */
export const bucketHash = (routeName: string): string =>
  createHash("sha256").update(`sandbox:${routeName}`).digest("hex").slice(0, 32)

export class DiscordStore {
  // The forums' webhooks too (seed/Threads.ts): not in SEED.webhooks, whose channels are the listed ones.
  readonly webhooks = new Map<string, SeedWebhook>([...SEED.webhooks, ...FORUM_WEBHOOKS].map((w) => [w.id, w]))
  readonly codes = new Map<string, AuthorizationCode>()
  readonly accessTokens = new Map<string, AccessToken>()
  readonly refreshTokens = new Map<string, RefreshToken>()
  readonly windows = new Map<string, Window>()
  readonly messages: Array<WebhookMessage> = []
  /** Threads deleted (DELETE /channels/{id}): they answer Unknown Channel from then on. */
  readonly deletedChannels = new Set<string>()
  /** Per announcement channel, when its messages were published (crossposted), oldest first. */
  readonly published = new Map<string, Array<number>>()
  /** Permission bits taken from a member of a server (`POST /sandbox/discord/permissions`), by `guild:user`. */
  readonly denied = new Map<string, bigint>()
  /** Forum posts opened by webhooks, by id (DiscordThreads.ts). */
  readonly posts = new Map<string, ForumPostRecord>()
  /** A forum's tags as the control route last set them (else the seed's): DiscordThreads.ts. */
  readonly forumTags = new Map<string, ReadonlyArray<{ readonly id: string; readonly name: string }>>()
  private sequence = 0n

  constructor(readonly config: SandboxConfigShape) {}

  /** A fresh 18-digit id (`34…` webhooks, `35…` messages). */
  nextId(prefix: "34" | "35"): string {
    this.sequence += 1n
    return `${prefix}${this.sequence.toString().padStart(16, "0")}`
  }

  /** Fixed-window count: consumes one request when allowed. */
  hit(key: string, size: BucketSize, now: number): WindowCheck {
    let window = this.windows.get(key)
    if (!window || now >= window.resetAt) {
      window = { count: 0, resetAt: now + size.windowMs }
      this.windows.set(key, window)
    }
    if (window.count >= size.limit) {
      return { allowed: false, limit: size.limit, remaining: 0, resetAt: window.resetAt }
    }
    window.count += 1
    return { allowed: true, limit: size.limit, remaining: size.limit - window.count, resetAt: window.resetAt }
  }

  /** The window's state without counting a request. */
  peek(key: string, size: BucketSize, now: number): WindowCheck {
    const window = this.windows.get(key)
    if (!window || now >= window.resetAt) {
      return { allowed: true, limit: size.limit, remaining: size.limit, resetAt: now + size.windowMs }
    }
    const remaining = Math.max(0, size.limit - window.count)
    return { allowed: remaining > 0, limit: size.limit, remaining, resetAt: window.resetAt }
  }

  /** A member's permissions in a guild, Discord's way (seed/Permissions.ts), less the bits a test denied. */
  permissionsOf(guild: SeedGuild, userId: string): bigint | undefined {
    const bits = computePermissions(guild, userId)
    return bits === undefined ? undefined : bits & ~(this.denied.get(`${guild.id}:${userId}`) ?? 0n)
  }

  bucketOf(routeName: string): BucketSize {
    return this.config.buckets[routeName] ?? this.config.defaultBucket
  }

  issueTokens(userId: string, scope: string, grant: string, now: number) {
    const accessToken = randomToken()
    const refreshToken = randomToken()
    this.accessTokens.set(accessToken, {
      userId,
      scope,
      grant,
      expiresAt: now + this.config.userTokenTtlSeconds * 1000
    })
    this.refreshTokens.set(refreshToken, { userId, scope, grant })
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: this.config.userTokenTtlSeconds,
      refresh_token: refreshToken,
      scope
    }
  }

  revokeGrant(grant: string): void {
    for (const [token, t] of this.accessTokens) if (t.grant === grant) this.accessTokens.delete(token)
    for (const [token, t] of this.refreshTokens) if (t.grant === grant) this.refreshTokens.delete(token)
  }
}

/** The sandbox Discord's state of one build. Tests may read it (e.g. `messages`, `webhooks`). */
export class DiscordState extends Context.Service<DiscordState, DiscordStore>()("gateway/SandboxDiscordState") {
  static readonly layer = Layer.effect(
    DiscordState,
    Effect.gen(function*() {
      return new DiscordStore(yield* SandboxConfig)
    })
  )
}
