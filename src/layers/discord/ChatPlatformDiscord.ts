/**
 * The live chat platform: Discord API v10 over Effect's `HttpClient`, following Discord's rate limits
 * (services/DiscordRateLimits.ts), with short per-instance caches that also coalesce identical
 * concurrent reads. Pointed at the sandbox (`sandboxUrls`) it talks to the gateway's own fake Discord.
 */
import { NodeRedis } from "@effect/platform-node"
import { Cache, Clock, Duration, Effect, Equal, Exit, Hash, Layer, Random, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { RequestTimeout, ServiceUnavailable } from "../../domain/Errors.ts"
import type { Answer, RouteTarget } from "./DiscordRateLimits.ts"
import { DiscordRateLimits, tokenHash } from "./DiscordRateLimits.ts"
import type { PlatformError, PlatformTokens, PlatformWebhook } from "../../services/ChatPlatform.ts"
import { ChatPlatform, PlatformRejected } from "../../services/ChatPlatform.ts"

export interface DiscordChatPlatformOptions {
  /** Default `https://discord.com/api/v10`. */
  readonly baseUrl?: string | undefined
  /** Default `https://discord.com/oauth2/authorize`. */
  readonly authorizeUrl?: string | undefined
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** Default `DiscordBot (https://github.com/bot-module-gateway/bot-module-gateway, 0.1.0)`. */
  readonly userAgent?: string | undefined
  /** Per attempt, including reading the body. Default 10 s. */
  readonly timeout?: Duration.Input | undefined
  /** Total time a call may spend waiting on rate limits before it fails with 503. Default 15 s. */
  readonly waitBudget?: Duration.Input | undefined
  /** Requests per second per token. Default 50 (Discord's global limit). */
  readonly globalPerSecond?: number | undefined
  /** Invalid answers (401/403/429) allowed in any 10 minutes. Default 5,000 (Discord bans at 10,000). */
  readonly invalidRequestLimit?: number | undefined
  /** Retries of a GET after a 5xx or a network failure. Default 2. */
  readonly readRetries?: number | undefined
  /** First backoff of those retries (doubled each time, jittered). Default 200 ms. */
  readonly retryBaseDelay?: Duration.Input | undefined
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
  /** Prefix of the rate-limit keys in a shared store. Default `discord:`. */
  readonly keyPrefix?: string | undefined
}

export const defaultUserAgent = "DiscordBot (https://github.com/bot-module-gateway/bot-module-gateway, 0.1.0)"

/** The platform's URLs when the gateway serves its own sandbox at `publicUrl`. */
export const sandboxUrls = (publicUrl: string) => {
  const base = publicUrl.replace(/\/+$/, "")
  return {
    baseUrl: `${base}/sandbox/discord/api/v10`,
    authorizeUrl: `${base}/sandbox/discord/oauth2/authorize`
  } as const
}

// Shapes: the fields the gateway uses (Discord's UserPIIResponse, MyGuildResponse, GuildResponse,
// GuildChannelResponse, GuildRoleResponse, GuildIncomingWebhookResponse); extra fields are ignored.
const User = Schema.Struct({
  id: Schema.String,
  username: Schema.String,
  discriminator: Schema.String,
  global_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  avatar: Schema.NullOr(Schema.String),
  locale: Schema.optionalKey(Schema.String),
  bot: Schema.optionalKey(Schema.Boolean)
})
const GuildSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  icon: Schema.NullOr(Schema.String),
  owner: Schema.Boolean,
  permissions: Schema.String
})
const Guild = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  icon: Schema.NullOr(Schema.String),
  owner_id: Schema.String
})
const Channel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.Int,
  guild_id: Schema.optionalKey(Schema.String)
})
const Role = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  color: Schema.Int,
  permissions: Schema.String,
  position: Schema.Int
})
const Webhook = Schema.Struct({
  id: Schema.String,
  type: Schema.Int,
  name: Schema.NullOr(Schema.String),
  avatar: Schema.NullOr(Schema.String),
  channel_id: Schema.String,
  guild_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  application_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  token: Schema.optionalKey(Schema.String)
})
const Tokens = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.String,
  expires_in: Schema.Number,
  scope: Schema.String
})
/** Discord's JSON errors and OAuth2's (RFC 6749 §5.2). */
const ErrorBody = Schema.Struct({
  code: Schema.optionalKey(Schema.Int),
  message: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.String),
  error_description: Schema.optionalKey(Schema.String)
})

const toWebhook = (w: typeof Webhook.Type): PlatformWebhook => {
  const base = {
    id: w.id,
    type: w.type,
    name: w.name,
    avatar: w.avatar,
    channel_id: w.channel_id,
    guild_id: w.guild_id ?? null,
    application_id: w.application_id ?? null
  }
  return w.token === undefined ? base : { ...base, token: Redacted.make(w.token) }
}
const toTokens = (t: typeof Tokens.Type): PlatformTokens => ({
  access_token: Redacted.make(t.access_token),
  refresh_token: Redacted.make(t.refresh_token),
  expires_in: t.expires_in,
  scope: t.scope
})

/** A cache key: equal by `id` (token hash + route), carrying the token for the lookup only. */
class Key {
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

type Auth =
  | { readonly _tag: "Bot" | "Bearer"; readonly token: Redacted.Redacted<string> }
  | { readonly _tag: "None" }

interface Call {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly target: RouteTarget
  readonly auth: Auth
  readonly form?: Record<string, string> | undefined
  readonly json?: unknown
  /** The path shows a secret: keep the request out of traces. */
  readonly secretPath?: boolean | undefined
}

const identityOf = (auth: Auth): string =>
  auth._tag === "None" ? "anon" : `${auth._tag === "Bot" ? "bot" : "user"}:${tokenHash(Redacted.value(auth.token))}`

const make = Effect.fnUntraced(function*(options: DiscordChatPlatformOptions) {
  const limits = yield* DiscordRateLimits
  const http = yield* HttpClient.HttpClient
  const baseUrl = (options.baseUrl ?? "https://discord.com/api/v10").replace(/\/+$/, "")
  const authorizeBase = options.authorizeUrl ?? "https://discord.com/oauth2/authorize"
  const userAgent = options.userAgent ?? defaultUserAgent
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "10 seconds")
  const readRetries = Math.max(0, options.readRetries ?? 2)
  const retryBaseMs = Duration.toMillis(Duration.fromInputUnsafe(options.retryBaseDelay ?? "200 millis"))
  const capacity = options.cacheCapacity ?? 10_000
  const ttl = {
    guildList: options.cacheTtl?.guildList ?? "30 seconds",
    guild: options.cacheTtl?.guild ?? "60 seconds",
    webhooks: options.cacheTtl?.webhooks ?? "30 seconds",
    user: options.cacheTtl?.user ?? 0,
    me: options.cacheTtl?.me ?? options.cacheTtl?.user ?? 0
  }

  /** One attempt: send and read the whole body within the timeout. */
  const sendOnce = (call: Call): Effect.Effect<Answer, RequestTimeout | "unreachable"> => {
    let request = HttpClientRequest.make(call.method)(`${baseUrl}${call.path}`).pipe(
      HttpClientRequest.setHeader("User-Agent", userAgent),
      HttpClientRequest.acceptJson
    )
    if (call.auth._tag !== "None") {
      request = HttpClientRequest.setHeader(request, "Authorization", `${call.auth._tag} ${Redacted.value(call.auth.token)}`)
    }
    if (call.form !== undefined) {
      request = HttpClientRequest.basicAuth(request, options.clientId, options.clientSecret).pipe(
        HttpClientRequest.bodyUrlParams(call.form)
      )
    } else if (call.json !== undefined) {
      request = HttpClientRequest.bodyJsonUnsafe(request, call.json)
    }
    return http.execute(request).pipe(
      Effect.flatMap((response) =>
        Effect.map(response.text, (body): Answer => ({ status: response.status, headers: response.headers, body }))
      ),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(RequestTimeout.of(`The chat platform did not answer within ${Duration.format(timeout)}.`))
      }),
      Effect.catchTag("HttpClientError", (error) =>
        Effect.logWarning("Chat platform unreachable").pipe(
          Effect.annotateLogs({ route: call.target.route, reason: error.reason._tag }),
          Effect.andThen(Effect.fail("unreachable" as const))
        )),
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.provideService(HttpClient.TracerDisabledWhen, () => call.secretPath === true)
    )
  }

  const rejected = (answer: Answer): PlatformRejected => {
    const parsed = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))(answer.body)
    const body = parsed._tag === "Some" ? parsed.value : {}
    const message = body.message ?? body.error_description ?? body.error ?? `HTTP ${answer.status}`
    return body.code === undefined
      ? new PlatformRejected({ status: answer.status, message })
      : new PlatformRejected({ status: answer.status, message, code: body.code })
  }

  const unavailable = (call: Call, why: string) =>
    ServiceUnavailable.of(`The chat platform is unavailable (${why}); try again shortly.`, 5).pipe((e) =>
      Effect.logWarning("Chat platform call failed").pipe(
        Effect.annotateLogs({ route: call.target.route, why }),
        Effect.andThen(Effect.fail(e))
      )
    )

  /** Sends a call under the rate limits, retrying a GET after a 5xx or network failure. */
  const request = <A>(call: Call, schema: Schema.ConstraintDecoder<A>): Effect.Effect<A, PlatformError> =>
    Effect.gen(function*() {
      const deadline = yield* limits.deadline
      const retries = call.method === "GET" ? readRetries : 0
      for (let attempt = 0; ; attempt++) {
        const result = yield* Effect.result(limits.run(call.target, sendOnce(call), deadline))
        let why: string
        if (result._tag === "Success") {
          const answer = result.success
          if (answer.status >= 200 && answer.status < 300) {
            const decoded = Schema.decodeUnknownExit(Schema.fromJsonString(schema))(answer.body === "" ? "null" : answer.body)
            if (Exit.isSuccess(decoded)) return decoded.value
            return yield* unavailable(call, "unexpected answer shape")
          }
          if (answer.status < 500) return yield* Effect.fail(rejected(answer))
          why = `HTTP ${answer.status}`
        } else if (result.failure === "unreachable") {
          why = "unreachable"
        } else {
          return yield* Effect.fail(result.failure)
        }
        if (attempt >= retries) return yield* unavailable(call, `${why} after ${attempt + 1} attempts`)
        // Full jitter over an exponential backoff, never past the wait budget.
        const backoff = retryBaseMs * 2 ** attempt
        const delay = Math.round(backoff / 2 + (yield* Random.next) * backoff / 2)
        if ((yield* Clock.currentTimeMillis) + delay > deadline) {
          return yield* unavailable(call, `${why}; wait budget spent`)
        }
        yield* Effect.sleep(Duration.millis(delay))
      }
    }).pipe(
      Effect.withSpan("ChatPlatform.request", { attributes: { route: call.target.route } })
    )

  const ttlFor = (input: Duration.Input) => (exit: Exit.Exit<unknown, unknown>) =>
    Exit.isSuccess(exit) ? input : Duration.zero

  const cached = <A>(timeToLive: Duration.Input, lookup: (key: Key) => Effect.Effect<A, PlatformError>) =>
    Cache.makeWith(lookup, { capacity, timeToLive: ttlFor(timeToLive) })

  const bot = (token: Redacted.Redacted<string>): Auth => ({ _tag: "Bot", token })
  const bearer = (token: Redacted.Redacted<string>): Auth => ({ _tag: "Bearer", token })
  const get = (auth: Auth, route: string, path: string, major = "") =>
    ({ method: "GET", path, auth, target: { identity: identityOf(auth), route: `GET ${route}`, major } }) as const

  // Tokens arrive as the same Redacted objects request after request (bot registry, decrypted
  // platform tokens): hash each once.
  const hashes = new WeakMap<Redacted.Redacted<string>, string>()
  const hashOf = (token: Redacted.Redacted<string>) => {
    let hash = hashes.get(token)
    if (hash === undefined) {
      hash = tokenHash(Redacted.value(token))
      hashes.set(token, hash)
    }
    return hash
  }
  const keyOf = (kind: "Bot" | "Bearer", what: string, token: Redacted.Redacted<string>, arg = "") =>
    new Key(`${kind}:${hashOf(token)}:${what}:${arg}`, token, arg)

  const currentUser = yield* cached(ttl.me, (k) => request(get(bearer(k.token), "/users/@me", "/users/@me"), User))
  const userGuilds = yield* cached(ttl.guildList, (k) =>
    request(get(bearer(k.token), "/users/@me/guilds", "/users/@me/guilds"), Schema.Array(GuildSummary)))
  const botUser = yield* cached(ttl.me, (k) => request(get(bot(k.token), "/users/@me", "/users/@me"), User))
  const botGuilds = yield* cached(ttl.guildList, (k) =>
    request(get(bot(k.token), "/users/@me/guilds", "/users/@me/guilds"), Schema.Array(GuildSummary)))
  const guild = yield* cached(ttl.guild, (k) =>
    request(get(bot(k.token), "/guilds/:guild", `/guilds/${encodeURIComponent(k.arg)}`, k.arg), Guild))
  const channels = yield* cached(ttl.guild, (k) =>
    request(
      get(bot(k.token), "/guilds/:guild/channels", `/guilds/${encodeURIComponent(k.arg)}/channels`, k.arg),
      Schema.Array(Channel)
    ))
  const roles = yield* cached(ttl.guild, (k) =>
    request(get(bot(k.token), "/guilds/:guild/roles", `/guilds/${encodeURIComponent(k.arg)}/roles`, k.arg), Schema.Array(Role)))
  const webhooks = yield* cached(ttl.webhooks, (k) =>
    request(
      get(bot(k.token), "/channels/:channel/webhooks", `/channels/${encodeURIComponent(k.arg)}/webhooks`, k.arg),
      Schema.Array(Webhook)
    ).pipe(Effect.map((list) => list.map(toWebhook))))
  const webhookWithToken = yield* cached(ttl.user, (k) => {
    const major = `${k.arg}/${tokenHash(Redacted.value(k.token))}`
    return request({
      method: "GET",
      path: `/webhooks/${encodeURIComponent(k.arg)}/${encodeURIComponent(Redacted.value(k.token))}`,
      auth: { _tag: "None" },
      target: { identity: "anon", route: "GET /webhooks/:webhook/:token", major },
      secretPath: true
    }, Webhook).pipe(Effect.map(toWebhook))
  })

  const oauth = (path: string, form: Record<string, string>) =>
    ({
      method: "POST",
      path,
      auth: { _tag: "None" },
      form,
      target: { identity: `app:${options.clientId}`, route: `POST ${path}`, major: "" }
    }) as const

  return ChatPlatform.of({
    authorizeUrl: ({ codeChallenge, redirectUri, state }) => {
      const url = new URL(authorizeBase)
      url.searchParams.set("response_type", "code")
      url.searchParams.set("client_id", options.clientId)
      url.searchParams.set("scope", "identify guilds")
      url.searchParams.set("redirect_uri", redirectUri)
      url.searchParams.set("state", state)
      url.searchParams.set("code_challenge", codeChallenge)
      url.searchParams.set("code_challenge_method", "S256")
      return url.toString()
    },
    exchangeCode: ({ code, codeVerifier, redirectUri }) =>
      request(
        oauth("/oauth2/token", {
          grant_type: "authorization_code",
          code,
          redirect_uri: redirectUri,
          code_verifier: codeVerifier
        }),
        Tokens
      ).pipe(Effect.map(toTokens)),
    refreshToken: (refreshToken) =>
      request(oauth("/oauth2/token", { grant_type: "refresh_token", refresh_token: Redacted.value(refreshToken) }), Tokens)
        .pipe(Effect.map(toTokens)),
    revokeToken: (token) =>
      request(
        oauth("/oauth2/token/revoke", { token: Redacted.value(token), token_type_hint: "access_token" }),
        Schema.Unknown
      ).pipe(Effect.asVoid),
    getCurrentUser: (token) => Cache.get(currentUser, keyOf("Bearer", "user", token)),
    getCurrentUserGuilds: (token) => Cache.get(userGuilds, keyOf("Bearer", "guilds", token)),
    getBotUser: (token) => Cache.get(botUser, keyOf("Bot", "user", token)),
    getBotGuilds: (token) => Cache.get(botGuilds, keyOf("Bot", "guilds", token)),
    getGuild: (token, guildId) => Cache.get(guild, keyOf("Bot", "guild", token, guildId)),
    getGuildChannels: (token, guildId) => Cache.get(channels, keyOf("Bot", "channels", token, guildId)),
    getGuildRoles: (token, guildId) => Cache.get(roles, keyOf("Bot", "roles", token, guildId)),
    getChannelWebhooks: (token, channelId) => Cache.get(webhooks, keyOf("Bot", "webhooks", token, channelId)),
    createWebhook: (token, channelId, name) => {
      const auth = bot(token)
      return request({
        method: "POST",
        path: `/channels/${encodeURIComponent(channelId)}/webhooks`,
        auth,
        json: { name },
        target: { identity: identityOf(auth), route: "POST /channels/:channel/webhooks", major: channelId }
      }, Webhook).pipe(
        Effect.map(toWebhook),
        Effect.tap(() => Cache.invalidate(webhooks, keyOf("Bot", "webhooks", token, channelId)))
      )
    },
    getWebhookWithToken: (webhookId, webhookToken) =>
      Cache.get(webhookWithToken, new Key(`webhook:${webhookId}:${tokenHash(Redacted.value(webhookToken))}`, webhookToken, webhookId))
  })
})

/** The live layer. Needs an `HttpClient` and a `RateLimiterStore` (shared budget across instances). */
export const layerWithStore = (
  options: DiscordChatPlatformOptions
): Layer.Layer<ChatPlatform, never, HttpClient.HttpClient | RateLimiter.RateLimiterStore> =>
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
  layerWithStore(options).pipe(Layer.provide(RateLimiter.layerStoreMemory))

/** The live layer counting the global budget in Redis, shared by every instance using that Redis. */
export const layerRedis = (
  options: DiscordChatPlatformOptions & { readonly redisUrl: string }
) =>
  layerWithStore(options).pipe(
    Layer.provide(RateLimiter.layerStoreRedis({ prefix: "gateway:ratelimit:" })),
    Layer.provide(NodeRedis.layer({ url: options.redisUrl }))
  )

export const ChatPlatformDiscord = { layer, layerWithStore, layerRedis, sandboxUrls, defaultUserAgent } as const
