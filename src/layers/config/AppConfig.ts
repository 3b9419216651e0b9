/**
 * Configuration from the environment, every variable in the README's table. A bad value stops
 * start-up with one line naming the variable and what it expects.
 */
import { Config, ConfigProvider, Context, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { defaultServerLimits } from "../../http/server/NodeEdge.ts"
import type { Keyring } from "../../services/infra/Cipher.ts"
import { parseKeyring } from "../../services/infra/Cipher.ts"
import { makeRedirectAllowlist } from "../../services/auth/RedirectAllowlist.ts"
import type { DeliveryConfig, PushConfig } from "./DeliveryConfig.ts"
import { deliveryDefaults, FEED_MODULES } from "./DeliveryConfig.ts"

/** What a process runs (delivery.md §6): the API and the job workers, the API only, or the workers only. */
export type Role = "all" | "api" | "worker"

export type { DeliveryConfig, PushConfig } from "./DeliveryConfig.ts"
export { deliveryDefaults } from "./DeliveryConfig.ts"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly publicUrl: string
  readonly databaseUrl: Redacted.Redacted<string> | undefined
  /**
   * DATABASE_POOL_SIZE (default 10): the most PostgreSQL connections this process holds, the job
   * engine's included (it shares the pool). Unused with the embedded database (one connection).
   */
  readonly databasePoolSize?: number | undefined
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
  /** LOG_FORMAT: `auto` (pretty on a terminal, JSON otherwise: LogFormat.ts), `json` or `pretty`. */
  readonly logFormat: "auto" | "json" | "pretty"
  /** SHUTDOWN_GRACE_MS: after SIGTERM/SIGINT, how long requests and jobs in hand may finish (main.ts). */
  readonly shutdownGraceMs: number
  readonly maintenance: boolean
  readonly accessTokenTtlSeconds: number
  readonly refreshTokenTtlSeconds: number
  readonly temporaryTokenTtlSeconds: number
  readonly signInStateTtlSeconds: number
  readonly upstreamTimeoutMs: number
  readonly auditRetentionDays: number | undefined
  /** ROLE (default all). */
  readonly role: Role
  /**
   * JOB_UPKEEP_INTERVAL_SECONDS (default 60): how often a worker's job engine does its upkeep,
   * which also hands the jobs of a worker that died (no heartbeat for 10 s) to the others.
   */
  readonly jobUpkeepIntervalSeconds?: number | undefined
  /** FORM_DRAFT_TTL_MINUTES (default 30): how long a form's draft lives after its last page (forms-runtime.md §3). */
  readonly formDraftTtlMinutes?: number | undefined
  readonly delivery: DeliveryConfig
  /** METRICS_TOKEN: GET /metrics is served only when set, to that bearer token (README "Observing"). */
  readonly metricsToken?: Redacted.Redacted<string> | undefined
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces go there over OTLP/HTTP when set; tracing is off otherwise. */
  readonly otlpEndpoint?: string | undefined
  /** PUSH_*: push connectors (absent: PUSH=auto with the defaults). */
  readonly push?: PushConfig | undefined
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

const optionalPositiveInt = (name: string) =>
  Config.option(Config.Int(name)).pipe(
    Config.map(Option.getOrUndefined),
    Config.map((n) => n === undefined || n > 0 ? n : invalid(name, `expected a positive integer, got ${n}`))
  )

/** FEED_*: absent ones take `deliveryDefaults` (the poll interval's depends on sandbox mode: see `check`). */
const deliveryFields = {
  pollIntervalSeconds: optionalPositiveInt("FEED_POLL_INTERVAL_SECONDS"),
  pollIntervalSecondsByModule: Config.all(
    Object.fromEntries(FEED_MODULES.map((m) => [m, optionalPositiveInt(`FEED_POLL_INTERVAL_SECONDS_${m.toUpperCase()}`)]))
  ).pipe(Config.map((byModule) =>
    Object.fromEntries(Object.entries(byModule).filter(([, n]) => n !== undefined)) as Partial<Record<FeedModuleName, number>>
  )),
  maxItemAgeHours: positiveInt("FEED_MAX_ITEM_AGE_HOURS", 24),
  maxItemsPerPoll: positiveInt("FEED_MAX_ITEMS_PER_POLL", 5),
  offlineGraceSeconds: positiveInt("FEED_OFFLINE_GRACE_SECONDS", 300),
  failedAfterHours: positiveInt("FEED_FAILED_AFTER_HOURS", 24),
  fetchTimeoutMs: positiveInt("FEED_FETCH_TIMEOUT_MS", 15_000),
  maxBodyBytes: positiveInt("FEED_MAX_BODY_BYTES", 5 * 1024 * 1024),
  hostConcurrency: positiveInt("FEED_HOST_CONCURRENCY", 2),
  contact: optionalString("FEED_CONTACT"),
  userAgent: optionalString("FEED_USER_AGENT")
}
const delivery = Config.all(deliveryFields)

/** Thrown inside Config.map and turned into one start-up line by `loadConfig`. */
class Invalid extends Error {}
const invalid = (name: string, expects: string): never => {
  throw new Invalid(`${name}: ${expects}`)
}

/** LOG_LEVEL in any case (the Node convention is lower case): `info` → `Info`; `warning` too. */
export const parseLogLevel = (value: string): AppConfigShape["logLevel"] | undefined => {
  const v = value.trim().toLowerCase()
  const level = ({ trace: "Trace", debug: "Debug", info: "Info", warn: "Warn", warning: "Warn", error: "Error" } as const)[v as "info"]
  return level
}

/** DATABASE_URL is a postgres:// or postgresql:// URL; anything else is refused before a connection is tried. */
const databaseUrl = Config.option(Config.Redacted("DATABASE_URL")).pipe(
  Config.map(Option.getOrUndefined),
  Config.map((url) => {
    if (url === undefined) return url
    const v = Redacted.value(url)
    const ok = URL.canParse(v) && /^postgres(ql)?:$/.test(new URL(v).protocol) && new URL(v).hostname !== ""
    return ok ? url : invalid("DATABASE_URL", "expected a postgres://user:password@host:port/database URL (value not shown: it may hold a password)")
  })
)

/** Two at least: a transaction holds one while the job engine's statements run outside it on another. */
const databasePoolSize = Config.Int("DATABASE_POOL_SIZE").pipe(
  Config.withDefault(10),
  Config.map((n) => n >= 2 && n <= 1000 ? n : invalid("DATABASE_POOL_SIZE", `expected a whole number of connections from 2 to 1000, got ${n}`))
)

/** The variables, each parsed on its own so that every bad one is reported (`loadConfig`). */
const fields = {
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  publicUrl: optionalString("PUBLIC_URL"),
  databaseUrl,
  databasePoolSize,
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
  logLevel: Config.String("LOG_LEVEL").pipe(
    Config.withDefault("Info"),
    Config.map((v) => parseLogLevel(v) ?? invalid("LOG_LEVEL", `expected one of trace, debug, info, warn, error (any case), got ${JSON.stringify(v)}`))
  ),
  logFormat: Config.Literals(["auto", "json", "pretty"], "LOG_FORMAT").pipe(Config.withDefault("auto" as const)),
  shutdownGraceMs: Config.String("SHUTDOWN_GRACE_MS").pipe(Config.withDefault(""), Config.map((raw) => {
    const ms = raw.trim() === "" ? defaultServerLimits.shutdownGraceMs : Number(raw)
    return Number.isInteger(ms) && ms >= 0 && ms <= 600_000 ? ms : invalid("SHUTDOWN_GRACE_MS", `expected whole milliseconds from 0 to 600000, got ${raw}`)
  })),
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
  role: Config.Literals(["all", "api", "worker"], "ROLE").pipe(Config.withDefault("all" as const)),
  jobUpkeepIntervalSeconds: positiveInt("JOB_UPKEEP_INTERVAL_SECONDS", 60),
  formDraftTtlMinutes: positiveInt("FORM_DRAFT_TTL_MINUTES", 30),
  metricsToken: Config.option(Config.Redacted("METRICS_TOKEN")).pipe(Config.map(Option.getOrUndefined)),
  otlpEndpoint: optionalString("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(
    Config.map((u) => u === undefined || /^https?:\/\/[^/]+/.test(u) ? u : invalid("OTEL_EXPORTER_OTLP_ENDPOINT", `expected an http(s) URL, got ${u}`))
  ),
  push: Config.all({
    mode: Config.Literals(["auto", "on", "off"], "PUSH").pipe(Config.withDefault("auto" as const)),
    leaseSeconds: positiveInt("PUSH_LEASE_SECONDS", 432_000),
    sweepSeconds: positiveInt("PUSH_SWEEP_SECONDS", 60),
    websubHubUrl: optionalString("PUSH_WEBSUB_HUB_URL")
  }),
  delivery
}
const raw = Config.all(fields)

export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", { message: Schema.String }) {}

/** A loopback address or name (127.0.0.0/8, ::1, localhost): reachable from this machine only. */
export const isLoopbackHost = (host: string): boolean => {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1")
  return h === "localhost" || h.endsWith(".localhost") || /^127(\.\d{1,3}){3}$/.test(h) || h === "::1" ||
    /^(0:){7}1$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h)
}

/** The checks across variables; every problem is pushed to `problems` (nothing throws). */
const check = (c: Config.Success<typeof raw>, problems: Array<string>): AppConfigShape => {
  const invalid = (name: string, expects: string) => {
    problems.push(`${name}: ${expects}`)
  }
  // Sandbox mode (password-less sign-in, fault injection) only on a loopback address unless SANDBOX=true says so
  // (decisions.md "Sandbox mode"); a PUBLIC_URL elsewhere means a proxy makes it public.
  const local = isLoopbackHost(c.host) && (c.publicUrl === undefined || (URL.canParse(c.publicUrl) && isLoopbackHost(new URL(c.publicUrl).hostname)))
  const noCredentials = c.discordClientId === undefined && c.discordClientSecret === undefined
  const sandbox = c.sandbox ?? (noCredentials && local)
  if (!sandbox && c.sandbox === undefined && noCredentials) {
    invalid("DISCORD_CLIENT_ID", `DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET are required: the sandbox starts by itself only on a loopback address (HOST=${c.host}${c.publicUrl === undefined ? "" : `, PUBLIC_URL=${c.publicUrl}`}); set SANDBOX=true to run it there anyway`)
  }
  let keyring: Keyring | undefined
  if (c.tokenKey !== undefined) {
    try {
      keyring = parseKeyring(Redacted.value(c.tokenKey))
    } catch (e) {
      invalid("TOKEN_ENCRYPTION_KEY", e instanceof Invalid ? e.message.replace(/^TOKEN_ENCRYPTION_KEY: /, "") : (e as Error).message)
    }
  } else if (!sandbox) {
    invalid("TOKEN_ENCRYPTION_KEY", "required outside sandbox mode (one or more 32-byte base64 keys; see README)")
  }
  // Both missing is already said above, with why the sandbox did not start.
  if (!sandbox && !noCredentials && (c.discordClientId === undefined || c.discordClientSecret === undefined)) {
    invalid("DISCORD_CLIENT_SECRET", "required with DISCORD_CLIENT_ID outside sandbox mode")
  }
  const { tokenKey: _k, ...rest } = c
  const publicUrl = (c.publicUrl ?? `http://${c.host.includes(":") ? `[${c.host}]` : c.host}:${c.port}`).replace(/\/+$/, "")
  if (!/^https?:\/\/[^/]+/.test(publicUrl)) invalid("PUBLIC_URL", `expected an http(s) URL, got ${publicUrl}`)
  // In sandbox mode without an allowlist, sign-ins may land on the sandbox's own page, the control panel or a local client.
  const allowedRedirectUris = sandbox && c.allowedRedirectUris.length === 0
    ? [`${publicUrl}/sandbox/callback`, `${publicUrl}/app/callback`, "http://127.0.0.1/callback", "http://localhost/callback"]
    : c.allowedRedirectUris
  const unusable = makeRedirectAllowlist(allowedRedirectUris).invalid
  if (unusable.length > 0) {
    invalid("ALLOWED_REDIRECT_URIS", `expected absolute http(s) URLs without user info, fragment or dot segments; refused: ${unusable.map((u) => JSON.stringify(u)).join(", ")}`)
  }
  const deliveryConfig: DeliveryConfig = {
    ...c.delivery,
    pollIntervalSeconds: c.delivery.pollIntervalSeconds ?? deliveryDefaults(sandbox).pollIntervalSeconds
  }
  return { ...rest, sandbox, keyring, publicUrl, allowedRedirectUris, delivery: deliveryConfig }
}

/** `SchemaError(Expected … number\n  at ["PORT"])` → `PORT: expected … number`. */
const oneLine = (message: string) => {
  const at = /at \["([A-Z0-9_]+)"\]/.exec(message)?.[1]
  const what = message.replace(/^SchemaError\(/, "").split("\n")[0]!.replace(/\)$/, "").trim()
  return at === undefined ? what : `${at}: ${what.charAt(0).toLowerCase()}${what.slice(1)}`
}

/** One variable: its value, or its problem as one line naming it. */
const readOne = <A>(config: Config.Config<A>): Effect.Effect<A, string> =>
  config.pipe(
    Effect.mapError((e) => oneLine(String(e.message ?? e))),
    Effect.catchDefect((e) => e instanceof Invalid ? Effect.fail(e.message) : Effect.die(e))
  )

/** Every field of a record of configs, each on its own; a bad one takes its unset value (for `check`) and adds its problem. */
const readAll = <F extends Record<string, Config.Config<any>>>(record: F, problems: Array<string>) =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = {}
    for (const [key, config] of Object.entries(record)) {
      const result = yield* Effect.result(readOne(config))
      if (Result.isSuccess(result)) out[key] = result.success
      else {
        problems.push(result.failure)
        // The value an empty environment gives (every variable has a default or is optional).
        out[key] = yield* Effect.orDie(config.parse(ConfigProvider.fromEnv({ env: {} })))
      }
    }
    return out as Config.Success<Config.Config<{ -readonly [K in keyof F]: Config.Success<F[K]> }>>
  })

/** Every problem, one per line (a single problem has no newline). */
export const configInvalid = (problems: ReadonlyArray<string>) => new ConfigInvalid({ message: problems.join("\n") })

/**
 * Reads and checks the configuration. Every bad variable is reported at once: the failure's
 * message is one line per problem, each naming its variable.
 */
export const loadConfig: Effect.Effect<AppConfigShape, ConfigInvalid> = Effect.gen(function*() {
  const problems: Array<string> = []
  const { delivery: _d, ...top } = fields
  const c = { ...(yield* readAll(top, problems)), delivery: yield* readAll(deliveryFields, problems) } as Config.Success<typeof raw>
  const checked = check(c, problems)
  // A variable that is itself bad is named once, not again by a check across variables.
  const unique = problems.filter((p, i) => problems.findIndex((q) => q.split(":")[0] === p.split(":")[0]) === i)
  return unique.length === 0 ? checked : yield* configInvalid(unique)
})

export const AppConfigLive = Layer.effect(AppConfig, Effect.map(loadConfig, AppConfig.of))
