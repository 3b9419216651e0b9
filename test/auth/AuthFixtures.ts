/** Shared pieces of the auth suites: a configuration, a counting fake chat platform, the Auth layer on a store. */
import { Effect, Layer, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import type { AppConfigShape } from "../../src/layers/config/AppConfig.ts"
import { SettingsLive } from "../../src/layers/config/Settings.ts"
import { AuthLive } from "../../src/services/auth/AuthLive.ts"
import { ChatPlatform, PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import type { PlatformTokens, PlatformUser } from "../../src/services/platform/ChatPlatform.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import type { TokenStore } from "../../src/services/auth/TokenStore.ts"
import { stubService } from "../layers/Stub.ts"

export const testConfig = (overrides: Partial<AppConfigShape> = {}): AppConfigShape => ({
  port: 0,
  host: "127.0.0.1",
  publicUrl: "https://gateway.test",
  databaseUrl: undefined,
  dataDir: "./.data",
  redisUrl: undefined,
  redisKeyPrefix: "gateway-test:",
  keyring: undefined,
  discordClientId: undefined,
  discordClientSecret: undefined,
  discordApiUrl: "https://platform.test/api",
  sandbox: true,
  allowedRedirectUris: ["https://client.example/callback", "http://127.0.0.1/cb"],
  corsOrigins: [],
  rateLimitApiPerMinute: 120,
  rateLimitAuthPerHour: 120,
  trustProxy: false,
  logLevel: "Info",
  logFormat: "json",
  shutdownGraceMs: 10_000,
  maintenance: false,
  accessTokenTtlSeconds: 3600,
  refreshTokenTtlSeconds: 30 * 24 * 3600,
  temporaryTokenTtlSeconds: 60,
  signInStateTtlSeconds: 600,
  upstreamTimeoutMs: 10_000,
  auditRetentionDays: undefined,
  role: "all",
  delivery: deliveryDefaults(true),
  ...overrides
})

export const alice: PlatformUser = {
  id: "100000000000000001",
  username: "alice",
  discriminator: "0",
  global_name: "Alice",
  avatar: null,
  locale: "en-US"
}

const b64 = (n: number) => randomBytes(n).toString("base64url")

/** A chat platform that counts calls to its OAuth endpoints and remembers every token it issued. */
export const makeFakePlatform = () => {
  const calls = { exchangeCode: 0, refreshToken: 0, revokeToken: 0, getCurrentUser: 0 }
  const issued: Array<string> = []
  const codes = new Map<string, { challenge: string; redirectUri: string }>()
  const live = new Set<string>()
  const refreshes = new Set<string>()
  let expiresIn = 604800
  let refreshDelay: Effect.Effect<void> = Effect.void
  let refuseRefresh = false
  let user: PlatformUser = alice
  const mint = (): PlatformTokens => {
    const access = `plat_at_${b64(24)}`
    const refresh = `plat_rt_${b64(24)}`
    issued.push(access, refresh)
    live.add(access)
    refreshes.add(refresh)
    return {
      access_token: Redacted.make(access),
      refresh_token: Redacted.make(refresh),
      expires_in: expiresIn,
      scope: "identify guilds"
    }
  }
  const rejected = (message: string) => new PlatformRejected({ status: 400, message })
  // Sign-in and token calls only: the auth suites read no guilds or webhooks.
  const platform = stubService(ChatPlatform, {
    authorizeUrl: ({ state, codeChallenge, redirectUri }) => {
      const url = new URL("https://platform.test/oauth2/authorize")
      url.searchParams.set("response_type", "code")
      url.searchParams.set("scope", "identify guilds")
      url.searchParams.set("state", state)
      url.searchParams.set("redirect_uri", redirectUri)
      url.searchParams.set("code_challenge", codeChallenge)
      url.searchParams.set("code_challenge_method", "S256")
      return url.href
    },
    exchangeCode: ({ code, codeVerifier, redirectUri }) =>
      Effect.suspend(() => {
        calls.exchangeCode++
        const c = codes.get(code)
        codes.delete(code)
        if (c === undefined || c.redirectUri !== redirectUri) return Effect.fail(rejected("invalid_grant"))
        if (createHash("sha256").update(codeVerifier).digest("base64url") !== c.challenge) {
          return Effect.fail(rejected("invalid_grant (PKCE)"))
        }
        return Effect.succeed(mint())
      }),
    refreshToken: (token) =>
      Effect.andThen(
        Effect.suspend(() => refreshDelay),
        Effect.suspend(() => {
          calls.refreshToken++
          if (!refreshes.delete(Redacted.value(token)) || refuseRefresh) return Effect.fail(rejected("invalid_grant"))
          return Effect.succeed(mint())
        })
      ),
    revokeToken: (token) =>
      Effect.sync(() => {
        calls.revokeToken++
        live.delete(Redacted.value(token))
      }),
    getCurrentUser: (token) =>
      Effect.suspend(() => {
        calls.getCurrentUser++
        return live.has(Redacted.value(token))
          ? Effect.succeed(user)
          : Effect.fail(new PlatformRejected({ status: 401, message: "401: Unauthorized" }))
      })
  })
  return {
    platform,
    calls,
    issued,
    live,
    setExpiresIn: (s: number) => {
      expiresIn = s
    },
    setRefreshDelay: (e: Effect.Effect<void>) => {
      refreshDelay = e
    },
    /** Who signs in from now on (alice by default). */
    setUser: (u: PlatformUser) => {
      user = u
    },
    /** The user revoked the app at the platform: refreshes are refused. */
    refuseRefresh: () => {
      refuseRefresh = true
    },
    /** The user approves at the platform: the callback query the platform sends back. */
    approve: (authorizeUrl: string) => {
      const url = new URL(authorizeUrl)
      const code = `plat_code_${b64(16)}`
      codes.set(code, {
        challenge: url.searchParams.get("code_challenge")!,
        redirectUri: url.searchParams.get("redirect_uri")!
      })
      return { code, state: url.searchParams.get("state")! }
    }
  }
}
export type FakePlatform = ReturnType<typeof makeFakePlatform>

export const testKeyring = parseKeyring(generateKey())

/** Auth over the given store layer, the fake platform and a configuration (store, settings and Auth exposed). */
export const authLayer = <ROut, E, R>(
  store: Layer.Layer<ROut | TokenStore, E, R>,
  fake: FakePlatform,
  config: AppConfigShape = testConfig()
) =>
  AuthLive.pipe(
    Layer.provideMerge(Layer.mergeAll(
      store,
      Cipher.layer(testKeyring),
      Layer.succeed(ChatPlatform, fake.platform),
      SettingsLive(config)
    ))
  )
