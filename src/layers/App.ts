/**
 * The whole application as layers: configuration → capabilities (database, job engine, Redis or
 * memory counters, the chat platform, external sources and their pollers, task board) → services →
 * routes → server, and the job workers. ROLE picks what runs (delivery.md §6): `all` the API and
 * the workers, `api` the API only (it still sends jobs), `worker` the workers and the probes only.
 * Tests swap the capabilities (test/utils/TestApp.ts); everything above them is the same code.
 */
import { Effect, Layer, References } from "effect"
import { FetchHttpClient, HttpMiddleware, HttpRouter } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { RateLimiter } from "effect/persistence"
import type { SqlClient } from "effect/sql"
import { WorkerApi } from "../http/Api.ts"
import { AuthorizationLive } from "../http/AuthorizationLive.ts"
import { AuthRateLimitLive } from "../http/AuthRateLimit.ts"
import { GlobalMiddleware, SchemaErrorsLive } from "../http/Envelope.ts"
import { AuthHandlers } from "../http/handlers/Auth.ts"
import { FeedHandlers } from "../http/handlers/Feeds.ts"
import { FormsHandlers } from "../http/handlers/Forms.ts"
import { GeneralHandlers } from "../http/handlers/General.ts"
import { OpsHandlers } from "../http/handlers/Ops.ts"
import { AssetRoutes, DocsRoutes, serve } from "../http/Server.ts"
import { PanelRoutes } from "../http/PanelPage.ts"
import { documentedApi } from "../http/OpenApiDocument.ts"
import { MetricsRoute } from "../http/Metrics.ts"
import { Tracing } from "./observability/Tracing.ts"
import { DatabaseMetrics } from "./observability/DatabaseMetrics.ts"
import { SandboxMode } from "../sandbox/SandboxMode.ts"
import { AuditLogSql } from "./sql/AuditLogSql.ts"
import { BotsSql } from "./sql/BotsSql.ts"
import { TaskboardPairingsSql } from "./sql/TaskboardPairingsSql.ts"
import { AuditRetention } from "./sql/AuditRetention.ts"
import { Auth } from "../services/Auth.ts"
import { Cipher } from "../services/Cipher.ts"
import type { Keyring } from "../services/Cipher.ts"
import { DirectoryLive } from "../services/DirectoryLive.ts"
import { FeedDeliveryLive } from "../services/FeedDeliveryLive.ts"
import { FeedInsightLive } from "../services/FeedInsightLive.ts"
import { FeedInsightStoreSql } from "./sql/FeedInsightStoreSql.ts"
import { DisableNotices } from "../services/DisableNotices.ts"
import { DisableNoticesSql } from "./sql/DisableNoticesSql.ts"
import { DisableNoticesWorker, noticeSweepEvery } from "./jobs/DisableNoticesWorker.ts"
import { Feeds } from "../services/Feeds.ts"
import { FeedsRepoSql } from "./sql/FeedsRepoSql.ts"
import { Forms } from "../services/Forms.ts"
import { FormsRepoSql } from "./sql/FormsRepoSql.ts"
import { PlatformSession } from "../services/PlatformSession.ts"
import { ReadinessSql } from "./sql/ReadinessSql.ts"
import { TokenStoreCached } from "./cache/TokenStoreCached.ts"
import { RedisClientLive } from "./cache/RedisClient.ts"
import { TokenStoreSql } from "./sql/TokenStoreSql.ts"
import { TokenStoreListener } from "./sql/TokenStoreListener.ts"
import { AppConfig } from "./config/AppConfig.ts"
import type { AppConfigShape } from "./config/AppConfig.ts"
import { deliverySettings, pollerOptions, SettingsLive } from "./config/Settings.ts"
import { JobEnginePgBoss } from "./jobs/JobEnginePgBoss.ts"
import type { JobEnginePgBossOptions } from "./jobs/JobEnginePgBoss.ts"
import { ReadinessWithJobs } from "./jobs/ReadinessJobs.ts"
import { SourcePollerHttp } from "./sources/poll/SourcePollerHttp.ts"
import { DeliveryLive, DeliveryWorkerLive } from "./jobs/DeliveryJobs.ts"
import { DatabaseLive } from "./sql/Database.ts"
import { pushLayers, PushRoutes, PushWorker } from "./push/PushLive.ts"
import { ChatPlatformDiscord } from "./discord/ChatPlatformDiscord.ts"
import type { ChatPlatform } from "../services/ChatPlatform.ts"
import { InteractionsRoute } from "../http/submissions/InteractionsRoute.ts"
import { SubmissionsSettings } from "../services/submissions/SubmissionsSettings.ts"
import { BotApplicationsSql } from "./submissions/BotApplicationsSql.ts"
import { CommandRegistration } from "./submissions/CommandRegistration.ts"
import { InteractionsLive } from "./submissions/InteractionsLive.ts"
import { SubmissionWorker } from "./submissions/SubmissionJobs.ts"
import { SubmissionsRepoSql } from "./submissions/SubmissionsRepoSql.ts"

// Every module request needs the signed-in user (the audit actor): one GET /users/@me per user per
// 10 s instead of one per request (which would also exceed the platform's 50 requests/s per token).
const cacheTtl = { me: "10 seconds" } as const

/** The platform's OAuth client (the configured one, or the sandbox's), with our timeout and caches. */
const platformOptions = (config: AppConfigShape) => ({
  ...SandboxMode.of(config).platform,
  timeout: config.upstreamTimeoutMs,
  cacheTtl
})

/** Counters of the gateway's own limits and of the platform's global budget: Redis, or memory. */
const counters = (config: AppConfigShape) =>
  config.redisUrl === undefined
    ? {
      limiter: RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)),
      chat: ChatPlatformDiscord.layer(platformOptions(config))
    }
    : (() => {
      const store = RateLimiter.layerStoreRedis({ prefix: `${config.redisKeyPrefix}ratelimit:` }).pipe(
        // Fails fast while Redis is away (the limiter then counts in memory, http/RateLimit.ts), reconnects
        // however the connection ended, and its own error lines count towards one outage (cache/RedisClient.ts).
        Layer.provide(RedisClientLive(config.redisUrl))
      )
      return {
        limiter: RateLimiter.layer.pipe(Layer.provide(store)),
        chat: ChatPlatformDiscord.layerWithStore(platformOptions(config)).pipe(Layer.provide(store))
      }
    })()

/**
 * Resolved tokens are kept 5 s per instance; a token ended anywhere ends here at once. On PostgreSQL
 * other instances' revocations arrive over LISTEN/NOTIFY (one more connection: sql/TokenStoreListener.ts)
 * and nothing is cached while not listening; the embedded database has this instance only. A worker
 * reads no token: no cache, no listener.
 */
const tokenStore = (config: AppConfigShape) =>
  config.role === "worker"
    ? TokenStoreSql
    : TokenStoreCached(5_000, config.databaseUrl === undefined ? undefined : TokenStoreListener).pipe(Layer.provide(TokenStoreSql))

/** Everything that talks to the outside world: what tests replace. */
export const liveCapabilities = (
  config: AppConfigShape,
  keyring: Keyring,
  db: Layer.Layer<SqlClient.SqlClient, unknown> = DatabaseLive({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    maxConnections: config.databasePoolSize,
    applicationName: `gateway-${config.role}`
  }),
  /** The job engine's own settings (tests: a pg-boss schema per suite on a shared PostgreSQL, quicker polling). */
  jobOptions: JobEnginePgBossOptions = {},
  /** Tests: the chat platform decorated (what the sandbox does not serve yet). */
  patchChat?: Layer.Layer<ChatPlatform, never, ChatPlatform>
) => {
  const counted = counters(config)
  const limiter = counted.limiter
  const chat = patchChat === undefined ? counted.chat : patchChat.pipe(Layer.provide(counted.chat))
  const cipher = Cipher.layer(keyring)
  const sql = Layer.mergeAll(
    tokenStore(config),
    FormsRepoSql,
    FeedsRepoSql,
    AuditLogSql,
    BotsSql,
    TaskboardPairingsSql,
    BotApplicationsSql,
    SubmissionsRepoSql
  ).pipe(Layer.provideMerge(cipher), Layer.provideMerge(db))
  // The job engine on the same database. An API-only process sends jobs (a new feed's first poll)
  // but leaves the engine's upkeep and cron schedules to the workers.
  const jobs = JobEnginePgBoss({
    supervise: config.role !== "api",
    schedule: config.role !== "api",
    instanceName: config.role,
    superviseInterval: `${config.jobUpkeepIntervalSeconds ?? 60} seconds`,
    ...jobOptions
  }).pipe(Layer.provide(db))
  const readiness = ReadinessWithJobs.pipe(Layer.provide(ReadinessSql), Layer.provide(jobs), Layer.provide(db))
  const mode = SandboxMode.of(config)
  const poller = Layer.unwrap(Effect.map(mode.pollerSources, (s) => SourcePollerHttp.layer(pollerOptions(config, s))))
  // Push connectors (delivery.md §9; layers/push/PushLive.ts): empty layers when push is off.
  const pushBackstop = Layer.unwrap(Effect.map(mode.pollerSources, (s) => pushLayers(config, s).backstop))
  const pushService = Layer.unwrap(Effect.map(mode.pollerSources, (s) => pushLayers(config, s).service))
  const http = Layer.mergeAll(chat, mode.sources, mode.taskBoard, poller).pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(sql)
  )
  // Delivery's store, scheduling and jobs, in every role: the API sends a new feed's first poll,
  // the workers (makeApp) run the jobs. FeedDelivery is what the feeds service sees of it.
  const delivery = DeliveryLive.pipe(Layer.provide([sql, jobs, http, deliverySettings(config), pushBackstop.pipe(Layer.provide(sql))]))
  // The push callbacks' and sweep's service (present when push is on; HookRoutes and PushWorker are mounted only then).
  const push = pushService.pipe(Layer.provide([sql, delivery, jobs, deliverySettings(config), FetchHttpClient.layer]))
  const feedDelivery = FeedDeliveryLive.pipe(Layer.provide(delivery))
  // The insight routes (delivery.md §8) on the same store, poller, rules and scheduling.
  const feedInsight = FeedInsightLive.pipe(Layer.provide(FeedInsightStoreSql), Layer.provide([sql, delivery, http, deliverySettings(config)]))
  // Disable notices (delivery.md §8): direct messages to a disabled feed's creator, swept by the workers.
  const notices = DisableNotices.layer.pipe(Layer.provide(DisableNoticesSql), Layer.provide([sql, http]))
  const retention = AuditRetention(config.auditRetentionDays)
  // The forms runtime's interactions (forms-runtime.md §1–§4): SQL, the job engine, the start counters.
  const interactions = InteractionsLive.pipe(
    Layer.provide([sql, jobs, limiter, Layer.succeed(SubmissionsSettings, { draftTtlMinutes: config.formDraftTtlMinutes ?? 30 })])
  )
  return Layer.mergeAll(sql, jobs, readiness, delivery, feedDelivery, feedInsight, notices, push, limiter, http, interactions, retention.pipe(Layer.provide(sql)), DatabaseMetrics.pipe(Layer.provide(db)))
}

/** Services over the capabilities. */
export const services = Layer.mergeAll(DirectoryLive, Forms.layer, Feeds.layer, Auth.layer).pipe(
  Layer.provideMerge(Layer.effect(PlatformSession, Effect.gen(function*() {
    const auth = yield* Auth
    return PlatformSession.of({ userToken: auth.platformToken, renewUserToken: auth.renewPlatformToken })
  }))),
  Layer.provideMerge(Auth.layer)
)

/** The routes of the gateway (and of the sandbox when it is on). */
export const routes = (config: AppConfigShape) => {
  // The contract plus the server's URL, version and shared answers (http/OpenApiDocument.ts).
  const documented = documentedApi(config.publicUrl)
  const api = HttpApiBuilder.layer(documented, { openapiPath: "/openapi.json" }).pipe(
    Layer.provide([AuthHandlers, GeneralHandlers, FormsHandlers, FeedHandlers, OpsHandlers]),
    Layer.provide([AuthorizationLive, AuthRateLimitLive, SchemaErrorsLive])
  )
  return Layer.mergeAll(
    api,
    DocsRoutes(documented),
    // The control panel at /app (src/panel); platform icons from the CDN outside the sandbox only.
    PanelRoutes({ publicUrl: config.publicUrl, iconHost: config.sandbox ? undefined : "https://cdn.discordapp.com" }),
    AssetRoutes,
    SandboxMode.of(config).routes,
    PushRoutes(config),
    InteractionsRoute,
    MetricsRoute(config.metricsToken),
    GlobalMiddleware({ maintenance: config.maintenance, requestTimeoutMs: 30_000, accessLog: true }),
    config.corsOrigins.length === 0 ? Layer.empty : HttpRouter.cors({
      allowedOrigins: config.corsOrigins,
      allowedMethods: ["GET", "POST", "PATCH", "DELETE"],
      allowedHeaders: ["authorization", "x-access-token", "x-refresh-token", "x-code-verifier", "content-type", "x-request-id"],
      exposedHeaders: ["ratelimit", "ratelimit-policy", "retry-after", "x-request-id"],
      maxAge: 600
    })
  )
}

/** What a `ROLE=worker` process serves on PORT: /healthz and /readyz, nothing else (no /api, /auth, /docs). */
export const workerRoutes = (config: AppConfigShape) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(WorkerApi).pipe(Layer.provide(OpsHandlers), Layer.provide(SchemaErrorsLive)),
    MetricsRoute(config.metricsToken),
    GlobalMiddleware({ maintenance: config.maintenance, requestTimeoutMs: 30_000, accessLog: true })
  )

/** What the services need from the outside world. */
export type Capabilities = Layer.Success<ReturnType<typeof liveCapabilities>>

/**
 * No span exporter is configured, so spans have no consumer: neither the per-request span nor any
 * `withSpan` is recorded (building them cost ~10% of a cached read's CPU). Remove with an exporter.
 */
const NoTracing = Layer.mergeAll(
  Layer.succeed(References.TracerEnabled, false),
  Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)
)

/** The server over the given capabilities (live ones in production, test ones in tests). */
export const makeApp = <E>(config: AppConfigShape, capabilities: Layer.Layer<Capabilities, E, AppConfig>) => {
  const api = config.role !== "worker"
  const app = serve(api ? routes(config) : workerRoutes(config), { port: config.port, host: config.host }).pipe(
    Layer.provide(config.otlpEndpoint === undefined ? NoTracing : Layer.empty)
  )
  // Workers depend on the capabilities, so they are closed first at SIGTERM: the jobs in hand
  // drain (JobEngine's scope), then the engine stops, then the database closes.
  const workers = config.role === "api"
    ? Layer.empty
    : Layer.mergeAll(
      DeliveryWorkerLive,
      DisableNoticesWorker(noticeSweepEvery(config.delivery.pollIntervalSeconds)),
      PushWorker(config),
      SubmissionWorker
    )
  // The bots' applications and commands, read after the sandbox's bots are registered.
  const startup = api ? CommandRegistration.pipe(Layer.provide(SandboxMode.of(config).startup)) : Layer.empty
  return Layer.mergeAll(app, workers, startup).pipe(
    // Spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (observability/Tracing.ts); else none are built.
    Layer.provide(Tracing(config.otlpEndpoint)),
    Layer.provide(services),
    Layer.provideMerge(capabilities),
    Layer.provideMerge(SettingsLive(config)),
    Layer.provideMerge(Layer.succeed(AppConfig, config))
  )
}

export const AppLive = (config: AppConfigShape, keyring: Keyring) => makeApp(config, liveCapabilities(config, keyring))
