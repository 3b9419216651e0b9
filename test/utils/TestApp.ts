/**
 * The whole gateway in-process over real HTTP on a free loopback port, with its sandbox platform
 * mounted: the real Discord client talks to the sandbox over HTTP, exactly as `npm start` does.
 * Capabilities are either `live` (PGlite or PostgreSQL, memory rate-limit counters) or
 * `memory` (the deterministic in-memory Test layers of test/layers).
 */
import { Context, Effect, Layer, References } from "effect"
import { FetchHttpClient } from "effect/http"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { RateLimiter } from "effect/persistence"
import { StartLimitMemory } from "../../src/layers/submissions/StartLimitLive.ts"
import { makeClient } from "../../src/http/client.ts"
import { ServerLimits } from "../../src/http/server/NodeEdge.ts"
import { freePort } from "./FreePort.ts"
import { deliveryDefaults } from "../../src/layers/config/AppConfig.ts"
import type { AppConfigShape } from "../../src/layers/config/AppConfig.ts"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import type { JobEnginePgBossOptions } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import type { Capabilities } from "../../src/layers/App.ts"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { AuditLogMemory } from "../layers/AuditLogMemory.ts"
import { BotsMemory } from "../layers/BotsMemory.ts"
import { FeedsRepoMemory } from "../layers/FeedsRepoMemory.ts"
import { FormsRepoMemory } from "../layers/FormsRepoMemory.ts"
import { IdempotencyStoreMemory } from "../layers/IdempotencyStoreMemory.ts"
import { ReadinessMemory } from "../layers/ReadinessMemory.ts"
import { TokenStoreMemory } from "../layers/TokenStoreMemory.ts"
import { SubmissionsAdminMemory } from "../layers/SubmissionsAdminMemory.ts"
import { SubmissionsMemory } from "../submissions/SubmissionsMemory.ts"
import type { DbKind } from "./Db.ts"
import { testDb } from "./Db.ts"

export const CLIENT_REDIRECT = "http://127.0.0.1/callback"
export const UA = "gateway-tests/1.0"

export { freePort }

export const testAppConfig = (port: number, overrides: Partial<AppConfigShape> = {}): AppConfigShape => ({
  port,
  host: "127.0.0.1",
  publicUrl: `http://127.0.0.1:${port}`,
  databaseUrl: undefined,
  dataDir: "memory://",
  redisUrl: undefined,
  redisKeyPrefix: "gateway-test:",
  keyring: undefined,
  discordClientId: undefined,
  discordClientSecret: undefined,
  discordApiUrl: "https://discord.com/api/v10",
  sandbox: true,
  allowedRedirectUris: [CLIENT_REDIRECT],
  corsOrigins: [],
  rateLimitApiPerMinute: 10_000,
  rateLimitAuthPerHour: 10_000,
  trustProxy: false,
  logLevel: "Warn",
  logFormat: "json",
  shutdownGraceMs: 10_000,
  maintenance: false,
  accessTokenTtlSeconds: 3600,
  refreshTokenTtlSeconds: 30 * 24 * 3600,
  temporaryTokenTtlSeconds: 60,
  signInStateTtlSeconds: 600,
  upstreamTimeoutMs: 5_000,
  auditRetentionDays: undefined,
  role: "all",
  delivery: deliveryDefaults(true),
  ...overrides
})

/** The deterministic in-memory capabilities; the chat platform, sources and task board stay the live clients against the mounted sandbox. */
const memoryCapabilities = (config: AppConfigShape) => {
  const keyring = parseKeyring(generateKey())
  const sandbox = SandboxMode.sandbox(config)
  const http = Layer.mergeAll(
    ChatPlatformDiscord.layer({ ...sandbox.platform, timeout: config.upstreamTimeoutMs }),
    sandbox.sources,
    sandbox.taskBoard
  ).pipe(Layer.provide(FetchHttpClient.layer))
  return Layer.mergeAll(
    TokenStoreMemory,
    FormsRepoMemory,
    FeedsRepoMemory,
    AuditLogMemory,
    BotsMemory([]),
    ReadinessMemory,
    IdempotencyStoreMemory,
    Cipher.layer(keyring),
    RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)),
    StartLimitMemory,
    SubmissionsMemory,
    SubmissionsAdminMemory,
    http
  ) as unknown as Layer.Layer<Capabilities>
}

/** Drops a pg-boss schema when the app stops (built before the engine, so released after it). */
const dropSchemaAtEnd = (schema: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
  }))

/**
 * The database and the job engine's options of a live app: on a shared PostgreSQL each app gets a
 * pg-boss schema of its own (its workers must not take another suite's jobs); quick polling.
 */
const jobsDb = (kind: DbKind): [Layer.Layer<SqlClient.SqlClient, unknown>, JobEnginePgBossOptions] => {
  const schema = `pgboss_${randomBytes(5).toString("hex")}`
  return kind === "postgres"
    ? [dropSchemaAtEnd(schema).pipe(Layer.provideMerge(testDb(kind))), { schema, pollingInterval: "0.5 seconds" }]
    : [testDb(kind), { pollingInterval: "0.5 seconds" }]
}

export interface TestAppOptions {
  readonly capabilities: "memory" | { readonly db: DbKind }
  readonly config?: Partial<AppConfigShape>
}

export class TestApp extends Context.Service<TestApp, {
  readonly url: string
  readonly config: AppConfigShape
}>()("test/TestApp") {
  /** The gateway on a free port. Build with `layer(…, { excludeTestServices: true })`. */
  static readonly layer = (options: TestAppOptions) =>
    Layer.unwrap(Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      // The memory capabilities have no job engine: nothing runs jobs there (ROLE=api).
      const config = testAppConfig(port, options.capabilities === "memory" ? { role: "api", ...options.config } : options.config)
      const capabilities = options.capabilities === "memory"
        ? memoryCapabilities(config)
        : liveCapabilities(config, SandboxMode.of(config), parseKeyring(generateKey()), ...jobsDb(options.capabilities.db))
      return makeApp(config, SandboxMode.of(config), capabilities as Layer.Layer<Capabilities, unknown>).pipe(
        Layer.merge(Layer.succeed(TestApp, TestApp.of({ url: config.publicUrl, config }))),
        // The access log and start-up lines would drown the test output.
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
        // Each app its own outage state: an outage one test leaves open is not "back" in another's log.
        Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth())),
        // No linger for the test client's idle connections at each app's stop (1 s each); the drain's own
        // tests keep it. The other limits stay those the test provides.
        Layer.provide(Layer.effect(ServerLimits, Effect.map(Effect.service(ServerLimits), (limits) => ({ ...limits, idleLingerMs: 0 }))))
      )
    }))
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

export interface Tokens {
  readonly access_token: string
  readonly refresh_token: string
}

/** A raw request to the gateway with a User-Agent (and a token when given). */
export const raw = (init: RequestInit & { readonly token?: string }, path: string) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const headers = new Headers(init.headers)
    if (!headers.has("user-agent")) headers.set("user-agent", UA)
    if (init.token !== undefined) headers.set("authorization", `Bearer ${init.token}`)
    return yield* Effect.promise(() => fetch(app.url + path, { ...init, headers, redirect: "manual" }))
  })

export const json = (res: Response) => Effect.promise(() => res.json() as Promise<any>)

/**
 * Signs in as a seeded user through the real flow: login → sandbox authorize (login_hint) →
 * callback → client redirect → POST /auth/idp/token.
 */
export const signIn = (userId: string) =>
  Effect.gen(function*() {
    const login = yield* raw({}, `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}&state=xyz`)
    if (login.status !== 307) throw new Error(`login answered ${login.status}: ${yield* Effect.promise(() => login.text())}`)
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!
    const authorize = yield* Effect.promise(() =>
      fetch(`${login.headers.get("location")!}&login_hint=${userId}`, { redirect: "manual" })
    )
    const callback = yield* Effect.promise(() =>
      fetch(authorize.headers.get("location")!, { redirect: "manual", headers: { cookie, "user-agent": UA } })
    )
    const location = new URL(callback.headers.get("location")!)
    const code = location.searchParams.get("code")
    if (code === null) throw new Error(`sign-in failed: ${location}`)
    const token = yield* raw({ method: "POST", headers: { authorization: code } }, "/auth/idp/token")
    return (yield* json(token)) as Tokens
  })

/** The package's typed client (src/http/client.ts), pointed at the test server. */
export const typedClient = (accessToken: string | undefined) =>
  Effect.flatMap(TestApp, (app) => makeClient({ baseUrl: app.url, accessToken, userAgent: UA }))

/**
 * One sign-in per user per running app: the access token, signed in once and shared by the file's tests.
 * Keyed by the app itself, not its URL: a later app on a reused port (another file in the same
 * worker, when files share modules) must not get a token of one that has stopped.
 */
const signedIn = new WeakMap<TestApp["Service"], Map<string, Promise<string>>>()
export const tokenOf = (userId: string) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    let tokens = signedIn.get(app)
    if (tokens === undefined) signedIn.set(app, tokens = new Map())
    if (!tokens.has(userId)) {
      tokens.set(userId, Effect.runPromise(signIn(userId).pipe(Effect.provideService(TestApp, app), Effect.map((t) => t.access_token))))
    }
    const token = tokens.get(userId)!
    return yield* Effect.promise(() => token)
  })
