/**
 * Configuration from the environment, every variable in the README's table. A bad value stops
 * start-up with one line naming the variable and what it expects.
 */
import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import type { Keyring } from "../../services/Cipher.ts"
import { parseKeyring } from "../../services/Cipher.ts"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly publicUrl: string
  readonly databaseUrl: Redacted.Redacted<string> | undefined
  readonly dataDir: string
  readonly redisUrl: string | undefined
  /** Prefix of every key the gateway writes to Redis, so several deployments can share one Redis. */
  readonly redisKeyPrefix: string
  /** Undefined in sandbox mode without a key: main generates one into the data folder. */
  readonly keyring: Keyring | undefined
  readonly discordClientId: string | undefined
  readonly discordClientSecret: Redacted.Redacted<string> | undefined
  readonly discordApiUrl: string
  readonly sandbox: boolean
  readonly allowedRedirectUris: ReadonlyArray<string>
  readonly corsOrigins: ReadonlyArray<string>
  readonly rateLimitApiPerMinute: number
  readonly rateLimitAuthPerHour: number
  readonly trustProxy: boolean
  readonly logLevel: "Trace" | "Debug" | "Info" | "Warn" | "Error"
  readonly logFormat: "json" | "pretty"
  readonly maintenance: boolean
  readonly accessTokenTtlSeconds: number
  readonly refreshTokenTtlSeconds: number
  readonly temporaryTokenTtlSeconds: number
  readonly signInStateTtlSeconds: number
  readonly upstreamTimeoutMs: number
  readonly auditRetentionDays: number | undefined
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("gateway/AppConfig") {}

const list = (name: string) =>
  Config.String(name).pipe(
    Config.withDefault(""),
    Config.map((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0))
  )
const optionalString = (name: string) => Config.option(Config.NonEmptyString(name)).pipe(Config.map(Option.getOrUndefined))
const positiveInt = (name: string, fallback: number) =>
  Config.Int(name).pipe(Config.withDefault(fallback), Config.map((n) => n > 0 ? n : invalid(name, `expected a positive integer, got ${n}`)))

/** Thrown inside Config.map and turned into one start-up line by `loadConfig`. */
class Invalid extends Error {}
const invalid = (name: string, expects: string): never => {
  throw new Invalid(`${name}: ${expects}`)
}

const raw = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  publicUrl: optionalString("PUBLIC_URL"),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")).pipe(Config.map(Option.getOrUndefined)),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./.data")),
  redisUrl: optionalString("REDIS_URL"),
  redisKeyPrefix: Config.String("REDIS_KEY_PREFIX").pipe(Config.withDefault("gateway:")),
  tokenKey: Config.option(Config.Redacted("TOKEN_ENCRYPTION_KEY")).pipe(Config.map(Option.getOrUndefined)),
  discordClientId: optionalString("DISCORD_CLIENT_ID"),
  discordClientSecret: Config.option(Config.Redacted("DISCORD_CLIENT_SECRET")).pipe(Config.map(Option.getOrUndefined)),
  discordApiUrl: Config.String("DISCORD_API_URL").pipe(Config.withDefault("https://discord.com/api/v10")),
  sandbox: Config.option(Config.Boolean("SANDBOX")).pipe(Config.map(Option.getOrUndefined)),
  allowedRedirectUris: list("ALLOWED_REDIRECT_URIS"),
  corsOrigins: list("CORS_ORIGINS"),
  rateLimitApiPerMinute: positiveInt("RATE_LIMIT_API_PER_MINUTE", 120),
  rateLimitAuthPerHour: positiveInt("RATE_LIMIT_AUTH_PER_HOUR", 120),
  trustProxy: Config.Boolean("TRUST_PROXY").pipe(Config.withDefault(false)),
  logLevel: Config.Literals(["Trace", "Debug", "Info", "Warn", "Error"], "LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
  logFormat: Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(Config.withDefault("json" as const)),
  maintenance: Config.Boolean("MAINTENANCE").pipe(Config.withDefault(false)),
  accessTokenTtlSeconds: positiveInt("ACCESS_TOKEN_TTL_SECONDS", 3600),
  refreshTokenTtlSeconds: positiveInt("REFRESH_TOKEN_TTL_SECONDS", 30 * 24 * 3600),
  temporaryTokenTtlSeconds: positiveInt("TEMPORARY_TOKEN_TTL_SECONDS", 60),
  signInStateTtlSeconds: positiveInt("SIGN_IN_STATE_TTL_SECONDS", 600),
  upstreamTimeoutMs: positiveInt("UPSTREAM_TIMEOUT_MS", 10_000),
  auditRetentionDays: Config.option(Config.Int("AUDIT_RETENTION_DAYS")).pipe(
    Config.map(Option.getOrUndefined),
    Config.map((n) => n === undefined || n > 0 ? n : invalid("AUDIT_RETENTION_DAYS", `expected a positive number of days, got ${n}`))
  ),
})

export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", { message: Schema.String }) {}

const check = (c: Config.Success<typeof raw>): AppConfigShape => {
  const sandbox = c.sandbox ?? c.discordClientId === undefined
  let keyring: Keyring | undefined
  if (c.tokenKey !== undefined) {
    try {
      keyring = parseKeyring(Redacted.value(c.tokenKey))
    } catch (e) {
      invalid("TOKEN_ENCRYPTION_KEY", (e as Error).message)
    }
  } else if (!sandbox) {
    invalid("TOKEN_ENCRYPTION_KEY", "required outside sandbox mode (one or more 32-byte base64 keys; see README)")
  }
  if (!sandbox && (c.discordClientId === undefined || c.discordClientSecret === undefined)) {
    invalid("DISCORD_CLIENT_SECRET", "required with DISCORD_CLIENT_ID outside sandbox mode")
  }
  const { tokenKey: _k, ...rest } = c
  const publicUrl = (c.publicUrl ?? `http://${c.host.includes(":") ? `[${c.host}]` : c.host}:${c.port}`).replace(/\/+$/, "")
  if (!/^https?:\/\/[^/]+/.test(publicUrl)) invalid("PUBLIC_URL", `expected an http(s) URL, got ${publicUrl}`)
  // In sandbox mode without an allowlist, sign-ins may land on the sandbox's own page or a local client.
  const allowedRedirectUris = sandbox && c.allowedRedirectUris.length === 0
    ? [`${publicUrl}/sandbox/callback`, "http://127.0.0.1/callback", "http://localhost/callback"]
    : c.allowedRedirectUris
  return { ...rest, sandbox, keyring, publicUrl, allowedRedirectUris }
}

/** `SchemaError(Expected … number\n  at ["PORT"])` → `PORT: expected … number`. */
const oneLine = (message: string) => {
  const at = /at \["([A-Z0-9_]+)"\]/.exec(message)?.[1]
  const what = message.replace(/^SchemaError\(/, "").split("\n")[0]!.replace(/\)$/, "").trim()
  return at === undefined ? what : `${at}: ${what.charAt(0).toLowerCase()}${what.slice(1)}`
}

/** Reads and checks the configuration; the failure is one line naming the variable. */
export const loadConfig: Effect.Effect<AppConfigShape, ConfigInvalid> = raw.pipe(
  Effect.mapError((e) => new ConfigInvalid({ message: oneLine(String(e.message ?? e)) })),
  Effect.flatMap((c) =>
    Effect.try({
      try: () => check(c),
      catch: (e) => new ConfigInvalid({ message: e instanceof Error ? e.message : String(e) })
    })
  ),
  Effect.catchDefect((e) =>
    e instanceof Invalid ? Effect.fail(new ConfigInvalid({ message: e.message })) : Effect.die(e)
  )
)

export const AppConfigLive = Layer.effect(AppConfig, Effect.map(loadConfig, AppConfig.of))
