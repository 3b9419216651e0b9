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
import { WorkerApi } from "../http/contract/Api.ts"
import { AuthorizationLive } from "../http/edge/AuthorizationLive.ts"
import { AuthRateLimitLive } from "../http/edge/AuthRateLimit.ts"
import { IdempotencyLive } from "../http/edge/IdempotencyLive.ts"
import { GlobalMiddleware } from "../http/edge/GlobalMiddleware.ts"
import { SchemaErrorsLive } from "../http/edge/SchemaErrorsLive.ts"
import { AuthHandlers } from "../http/auth/AuthHandlers.ts"
import { FeedHandlers } from "../http/feeds/FeedsHandlers.ts"
import { FormsHandlers } from "../http/forms/FormsHandlers.ts"
import { GeneralHandlers } from "../http/platform/GeneralHandlers.ts"
import { OpsHandlers } from "../http/infra/OpsHandlers.ts"
import { AssetRoutes, DocsRoutes, serve } from "../http/server/Server.ts"
import { PanelRoutes } from "../http/server/PanelPage.ts"
import { documentedApi } from "../http/contract/OpenApiDocument.ts"
import { MetricsRoute } from "../http/infra/MetricsRoute.ts"
import { Tracing } from "./infra/Tracing.ts"
import { DatabaseMetrics } from "./infra/DatabaseMetrics.ts"
import type { Mode } from "./Mode.ts"
import { AuditLogSql } from "./audit/AuditLogSql.ts"
import { BotsSql } from "./platform/BotsSql.ts"
import { TaskboardPairingsSql } from "./taskboard/TaskboardPairingsSql.ts"
import { AuditRetention } from "./audit/AuditRetention.ts"
import { IdempotencyStoreSql } from "./infra/IdempotencyStoreSql.ts"
import { Auth } from "../services/auth/Auth.ts"
import { AuthLive } from "../services/auth/AuthLive.ts"
import { Cipher } from "../services/infra/Cipher.ts"
import type { Keyring } from "../services/infra/Cipher.ts"
import { DirectoryLive } from "../services/platform/DirectoryLive.ts"
import { FeedDeliveryLive } from "../services/delivery/FeedDeliveryLive.ts"
import { FeedInsightLive } from "../services/insight/FeedInsightLive.ts"
import { FeedInsightStoreSql } from "./insight/FeedInsightStoreSql.ts"
import { DisableNotices } from "../services/delivery/DisableNotices.ts"
import { DisableNoticesSql } from "./delivery/DisableNoticesSql.ts"
import { DisableNoticesWorker, noticeSweepEvery } from "./delivery/DisableNoticesWorker.ts"
import { Feeds } from "../services/feeds/Feeds.ts"
import { FeedsRepoSql } from "./feeds/FeedsRepoSql.ts"
import { Forms } from "../services/forms/Forms.ts"
import { FormsRepoSql } from "./forms/FormsRepoSql.ts"
import { PlatformSession } from "../services/platform/PlatformSession.ts"
import { ReadinessSql } from "./infra/ReadinessSql.ts"
import { TokenStoreCached } from "./auth/TokenStoreCached.ts"
import { RateLimitCarryRedis } from "./infra/RateLimitCarryRedis.ts"
import { RedisClientLive } from "./infra/RedisClient.ts"
import { TokenStoreSql } from "./auth/TokenStoreSql.ts"
import { TokenStoreListener } from "./auth/TokenStoreListener.ts"
import { AppConfig } from "./config/AppConfig.ts"
import type { AppConfigShape } from "./config/AppConfig.ts"
import { deliverySettings, pollerOptions, SettingsLive } from "./config/Settings.ts"
import { JobEnginePgBoss } from "./jobs/JobEnginePgBoss.ts"
import type { JobEnginePgBossOptions } from "./jobs/JobEnginePgBoss.ts"
import { ReadinessWithJobs } from "./infra/ReadinessJobs.ts"
import { SourcePollerHttp } from "./sources/poll/SourcePollerHttp.ts"
import { DeliveryEngineLive, DeliveryWorkerLive } from "./delivery/DeliveryJobs.ts"
import { DatabaseLive } from "./infra/Database.ts"
import { pushLayers, PushRoutes, PushWorker } from "./push/PushLive.ts"
import { ChatPlatformDiscord } from "./platform/discord/ChatPlatformDiscord.ts"
import { DiscordGlobalBudget } from "./platform/discord/DiscordGlobalBudget.ts"
import { InteractionsRoute } from "../http/submissions/InteractionsRoute.ts"
import { SubmissionsSettings } from "../services/submissions/SubmissionsSettings.ts"
import { StartLimitMemory, StartLimitRedis } from "./submissions/StartLimitLive.ts"
import { BotApplicationsSql } from "./submissions/BotApplicationsSql.ts"
import { CommandRegistration } from "./submissions/CommandRegistration.ts"
import { InteractionsLive } from "./submissions/InteractionsLive.ts"
import { ShareQueue, ShareWorker, VotesQueue } from "./submissions/ShareJobs.ts"
import { DmQueue, EditQueue, ReviewQueue, SubmissionWorker } from "./submissions/SubmissionJobs.ts"
import { SubmissionsRepoSql } from "./submissions/SubmissionsRepoSql.ts"
import { PublicationsRepoSql } from "./submissions/PublicationsRepoSql.ts"
import { SubmissionsAdminLive } from "./submissions/SubmissionsAdminLive.ts"
import { SubmissionsHandlers } from "../http/submissions/SubmissionsHandlers.ts"

// Every module request needs the signed-in user (the audit actor): one GET /users/@me per user per
// 10 s instead of one per request (which would also exceed the platform's 50 requests/s per token).
const cacheTtl = { me: "10 seconds" } as const

/** The platform's OAuth client (the configured one, or the sandbox's), with our timeout and caches. */
const platformOptions = (config: AppConfigShape, mode: Mode) => ({
  ...mode.platform,
  timeout: config.upstreamTimeoutMs,
  cacheTtl
})

/** Counters of the gateway's own limits and of the platform's global budget: Redis, or memory. */
const counters = (config: AppConfigShape, mode: Mode) =>
  config.redisUrl === undefined
    ? {
      limiter: Layer.merge(RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)), StartLimitMemory),
      chat: ChatPlatformDiscord.layer(platformOptions(config, mode))
    }
    : (() => {
      const prefix = `${config.redisKeyPrefix}ratelimit:`
      // Fails fast while Redis is away (the limiter then counts in memory, http/edge/RateLimit.ts), reconnects
      // however the connection ended, and its own error lines count towards one outage (infra/RedisClient.ts).
      const redis = RedisClientLive(config.redisUrl)
      const store = RateLimiter.layerStoreRedis({ prefix }).pipe(Layer.provide(redis))
      const globalBudget = DiscordGlobalBudget.layerRedis({ prefix }).pipe(Layer.provide(redis))
      return {
        // What an instance counted in memory during an outage goes into Redis when it is back.
        limiter: Layer.mergeAll(
          RateLimiter.layer.pipe(Layer.provide(store)),
          RateLimitCarryRedis(prefix).pipe(Layer.provide(redis)),
          StartLimitRedis(prefix).pipe(Layer.provide(redis))
        ),
        chat: ChatPlatformDiscord.layerWithStore(platformOptions(config, mode)).pipe(Layer.provide([store, globalBudget]))
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
  /** Sandbox or platform mode (src/sandbox/SandboxMode.ts `SandboxMode.of`). */
  mode: Mode,
  keyring: Keyring,
  db: Layer.Layer<SqlClient.SqlClient, unknown> = DatabaseLive({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    maxConnections: config.databasePoolSize,
    applicationName: `gateway-${config.role}`
  }),
  /** The job engine's own settings (tests: a pg-boss schema per suite on a shared PostgreSQL, quicker polling). */
  jobOptions: JobEnginePgBossOptions = {}
) => {
  const counted = counters(config, mode)
  const limiter = counted.limiter
  const chat = counted.chat
  const cipher = Cipher.layer(keyring)
  const sql = Layer.mergeAll(
    tokenStore(config),
    FormsRepoSql,
    FeedsRepoSql,
    AuditLogSql,
    BotsSql,
    TaskboardPairingsSql,
    IdempotencyStoreSql,
    BotApplicationsSql,
    SubmissionsRepoSql,
    PublicationsRepoSql
  ).pipe(Layer.provideMerge(cipher), Layer.provideMerge(db))
  // The job engine on the same database. An API-only process sends jobs (a new feed's first poll)
  // but leaves the engine's upkeep and cron schedules to the workers.
  const jobs = JobEnginePgBoss({
    supervise: config.role !== "api",
    schedule: config.role !== "api",
    instanceName: config.role,
    superviseInterval: `${config.jobUpkeepIntervalSeconds ?? 60} seconds`,
    ...jobOptions,
    // Sent by API processes too, which run no worker that would declare them, and some inside a
    // review's transaction, where no queue can be declared: declared at start, in every role.
    queues: [ReviewQueue, DmQueue, EditQueue, ShareQueue, VotesQueue, ...(jobOptions?.queues ?? [])]
  }).pipe(Layer.provide(db))
  const readiness = ReadinessWithJobs.pipe(Layer.provide(ReadinessSql), Layer.provide(jobs), Layer.provide(db))
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
  const delivery = DeliveryEngineLive.pipe(Layer.provide([sql, jobs, http, deliverySettings(config), pushBackstop.pipe(Layer.provide(sql))]))
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
  // The publications and submissions routes' service (forms-runtime.md §2, §6).
  const submissionsAdmin = SubmissionsAdminLive.pipe(Layer.provide([sql, jobs, http]))
  return Layer.mergeAll(sql, jobs, readiness, delivery, feedDelivery, feedInsight, notices, push, limiter, http, interactions, submissionsAdmin, retention.pipe(Layer.provide(sql)), DatabaseMetrics.pipe(Layer.provide(db)))
}

/** Services over the capabilities. */
export const services = Layer.mergeAll(DirectoryLive, Forms.layer, Feeds.layer, AuthLive).pipe(
  Layer.provideMerge(Layer.effect(PlatformSession, Effect.gen(function*() {
    const auth = yield* Auth
    return PlatformSession.of({ userToken: auth.platformToken, renewUserToken: auth.renewPlatformToken })
  }))),
  Layer.provideMerge(AuthLive)
)

/** The routes of the gateway (and of the sandbox when it is on). */
export const routes = (config: AppConfigShape, mode: Mode) => {
  // The contract plus the server's URL, version and shared answers (http/contract/OpenApiDocument.ts).
  const documented = documentedApi(config.publicUrl)
  const api = HttpApiBuilder.layer(documented, { openapiPath: "/openapi.json" }).pipe(
    Layer.provide([AuthHandlers, GeneralHandlers, FormsHandlers, SubmissionsHandlers, FeedHandlers, OpsHandlers]),
    Layer.provide([AuthorizationLive, AuthRateLimitLive, SchemaErrorsLive, IdempotencyLive])
  )
  return Layer.mergeAll(
    api,
    DocsRoutes(documented),
    // The control panel at /app (src/panel); platform icons from the CDN outside the sandbox only.
    PanelRoutes({ publicUrl: config.publicUrl, iconHost: config.sandbox ? undefined : "https://cdn.discordapp.com" }),
    AssetRoutes,
    mode.routes,
    PushRoutes(config),
    InteractionsRoute,
    MetricsRoute(config.metricsToken),
    GlobalMiddleware({ maintenance: config.maintenance, requestTimeoutMs: 30_000, accessLog: true }),
    config.corsOrigins.length === 0 ? Layer.empty : HttpRouter.cors({
      allowedOrigins: config.corsOrigins,
      allowedMethods: ["GET", "POST", "PATCH", "DELETE"],
      allowedHeaders: ["authorization", "x-access-token", "x-refresh-token", "x-code-verifier", "content-type", "x-request-id", "idempotency-key"],
      exposedHeaders: ["ratelimit", "ratelimit-policy", "retry-after", "x-request-id", "idempotent-replayed"],
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
export const makeApp = <E>(config: AppConfigShape, mode: Mode, capabilities: Layer.Layer<Capabilities, E, AppConfig>) => {
  const api = config.role !== "worker"
  const app = serve(api ? routes(config, mode) : workerRoutes(config), { port: config.port, host: config.host }).pipe(
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
      SubmissionWorker,
      ShareWorker
    )
  // The bots' applications and commands, read after the sandbox's bots are registered.
  const startup = api ? CommandRegistration.pipe(Layer.provide(mode.startup)) : Layer.empty
  return Layer.mergeAll(app, workers, startup).pipe(
    // Spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (observability/Tracing.ts); else none are built.
    Layer.provide(Tracing(config.otlpEndpoint)),
    Layer.provide(services),
    Layer.provideMerge(capabilities),
    Layer.provideMerge(SettingsLive(config)),
    Layer.provideMerge(Layer.succeed(AppConfig, config))
  )
}

export const AppLive = (config: AppConfigShape, mode: Mode, keyring: Keyring) => makeApp(config, mode, liveCapabilities(config, mode, keyring))
