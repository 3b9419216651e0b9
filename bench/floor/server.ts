/**
 * The bench's floor windows (issue #16): S1's route on Effect's own HTTP stack, bundled by
 * bench/floor/build.mjs (Node 20 cannot run .ts) and run as `node floor.mjs <config.json>`.
 * Config: { mode: "floor" | "floor-mw" | "floor-mw-<parts>", port, path, tokens: { <sha256 hex>: <user id> },
 * body, logLevel, without }; `without` (the windows of BENCH_FLOOR_MW_WITHOUT, to split floor-mw's cost):
 * "global" drops GlobalMiddleware, "auth" puts a fixed principal in place of AuthorizationLive (no token
 * check, no rate limit), "schema" lets SchemaErrors pass through.
 *
 * - `floor`: a stock HttpApi (HttpApiBuilder + HttpRouter + NodeHttpServer, served as the gateway
 *   serves: routes built, then `HttpServer.serve`), one endpoint with S1's path parameters, no
 *   middleware; the handler does the ceiling's bearer check (SHA-256 of the token in a Map) and
 *   answers S1's exact bytes. What Effect's stack costs on its own.
 * - `floor-mw`: the same endpoint with the gateway's own chain around it, imported from src/http:
 *   `GlobalMiddleware` (request id, guards, deadline, envelope, metrics), `SchemaErrors`,
 *   `Authorization` (token parsing, `TokenStoreCached` with S1's 5 s TTL, the `api` rate limit on
 *   the memory store with its RateLimit headers), served by the gateway's `serve` (NodeEdge).
 *   The only stand-in: the store under the token cache is a Map instead of SQL (S1 hits the cache;
 *   the store is read once per token per 5 s). The handler reads the principal and answers S1's
 *   bytes: what S1 adds on top is the directory's work (services/platform/DirectoryLive.ts).
 * Both run as the gateway does with no OTLP endpoint: tracing off, no per-request logger, the log
 * level of the bench (Warn: no access line).
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Exit, Layer, Logger, References } from "effect"
import type { LogLevel } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { RateLimiter } from "effect/persistence"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { UserId } from "../../src/domain/infra/Ids.ts"
import { ModulesResponse } from "../../src/domain/platform/Platform.ts"
import { moduleErrors, serverParams } from "../../src/http/contract/ApiParams.ts"
import { AuthorizationLive } from "../../src/http/edge/AuthorizationLive.ts"
import { GlobalMiddleware } from "../../src/http/edge/GlobalMiddleware.ts"
import { SchemaErrorsLive } from "../../src/http/edge/SchemaErrorsLive.ts"
import { HttpSettings } from "../../src/http/edge/HttpSettings.ts"
import { Authorization, CurrentPrincipal, SchemaErrors } from "../../src/http/contract/Middleware.ts"
import { serve } from "../../src/http/server/Server.ts"
import { TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import { TokenStore } from "../../src/services/auth/TokenStore.ts"
import type { TokenStoreShape } from "../../src/services/auth/TokenStore.ts"

interface FloorConfig {
  readonly mode: string
  readonly port: number
  readonly path: string
  readonly tokens: Record<string, string>
  readonly body: string
  readonly logLevel?: LogLevel.LogLevel
  readonly without?: ReadonlyArray<"global" | "auth" | "schema">
}

const config = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as FloorConfig
const tokens = new Map(Object.entries(config.tokens))
const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")
// S1's answer as the gateway's handler builds it (handlers/General.ts `modulesAnswer`): built once.
const answer = HttpServerResponse.text(config.body, { status: 200, contentType: "application/json" })

// The gateway's S1 route: same path, same path parameter schemas (decoded per request).
const modulesPath = "/bots/:appClientId/servers/:serverId/modules"

// ---- floor: no middleware --------------------------------------------------------------------

class FloorGroup extends HttpApiGroup.make("general")
  .add(HttpApiEndpoint.get("modules", modulesPath, { params: serverParams, success: ModulesResponse }))
  .prefix("/api/v1")
{}
class FloorApi extends HttpApi.make("floor").add(FloorGroup) {}

// The ceiling's check (bench/ceiling.mjs), inline in the handler.
const parse = (value: string | undefined) => {
  if (value === undefined) return undefined
  let v = value.trim()
  if (/^bearer\s/i.test(v)) v = v.slice(6).trim()
  return v.length > 0 && v.length <= 512 && /^[\x21-\x7e]+$/.test(v) ? v : undefined
}
const unauthorized = HttpServerResponse.text(
  JSON.stringify({ errors: [{ code: "Unauthorized", message: "The access token is not valid." }] }),
  { status: 401, contentType: "application/json", headers: { "www-authenticate": 'Bearer error="invalid_token"' } }
)

const FloorHandlers = HttpApiBuilder.group(FloorApi, "general", (handlers) =>
  Effect.succeed(handlers.handle("modules", () =>
    Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const token = parse(request.headers["authorization"]) ?? parse(request.headers["x-access-token"])
      return token !== undefined && tokens.has(sha256(token)) ? answer : unauthorized
    }))))

const floorRoutes = HttpApiBuilder.layer(FloorApi).pipe(Layer.provide(FloorHandlers))

const floor = Layer.unwrap(Effect.map(HttpRouter.toHttpEffect(floorRoutes), (app) => HttpServer.serve(app))).pipe(
  Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: "127.0.0.1" }))
)

// ---- floor-mw: the gateway's middleware chain ------------------------------------------------

class MwGroup extends HttpApiGroup.make("general")
  .add(HttpApiEndpoint.get("modules", modulesPath, { params: serverParams, success: ModulesResponse, error: moduleErrors }))
  .middleware(Authorization)
  .prefix("/api/v1")
{}
class MwApi extends HttpApi.make("floor-mw").add(MwGroup).middleware(SchemaErrors).annotate(HttpApi.PayloadParseOptions, { errors: "all" }) {}

const MwHandlers = HttpApiBuilder.group(MwApi, "general", (handlers) =>
  Effect.succeed(handlers.handle("modules", () => Effect.map(CurrentPrincipal, () => answer))))

// A live principal for every bench token; only what the Authorization middleware calls is implemented.
const far = new Date(Date.now() + 365 * 24 * 3600 * 1000)
const principals = new Map([...tokens].map(([hash, userId]) => [hash, { userId: userId as UserId, familyId: `floor-${userId}`, accessExpiresAt: far }]))
const notHere = () => Effect.die(new Error("not part of the floor-mw window"))
const TokenStoreMap = Layer.succeed(TokenStore, TokenStore.of({
  resolveAccess: (token) => Effect.sync(() => principals.get(sha256(token))),
  familyOf: notHere,
  createSignInState: notHere,
  consumeSignInState: notHere,
  createFamily: notHere,
  consumeTemporary: notHere,
  issuePair: notHere,
  rotateRefresh: notHere,
  checkAccess: notHere,
  revokeByAccess: notHere,
  revokeFamily: notHere,
  platformTokens: notHere,
  claimPlatformRefresh: notHere,
  releasePlatformRefresh: notHere,
  replacePlatformTokens: notHere
} satisfies TokenStoreShape))

// The ablations of BENCH_FLOOR_MW_WITHOUT (measurement only: the bench checks floor-mw's full chain, not these).
const without = new Set(config.without ?? [])
const [anyPrincipal] = principals.values()
const withPrincipal = <A, E, R>(httpEffect: Effect.Effect<A, E, R>) => Effect.provideService(httpEffect, CurrentPrincipal, anyPrincipal!)
const AuthorizationFixed = Layer.succeed(Authorization, Authorization.of({ bearer: withPrincipal, accessToken: withPrincipal }))
const SchemaErrorsNone = Layer.succeed(SchemaErrors, (httpEffect) => httpEffect)

const mwRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(MwApi).pipe(
    Layer.provide(MwHandlers),
    Layer.provide([without.has("auth") ? AuthorizationFixed : AuthorizationLive, without.has("schema") ? SchemaErrorsNone : SchemaErrorsLive])
  ),
  // As App.ts `routes` mounts it.
  without.has("global") ? Layer.empty : GlobalMiddleware({ maintenance: false, requestTimeoutMs: 30_000, accessLog: true })
) as Layer.Layer<never, never, HttpRouter.HttpRouter>

const floorMw = serve(mwRoutes, { port: config.port, host: "127.0.0.1" }).pipe(
  Layer.provide([
    TokenStoreCached(5_000).pipe(Layer.provide(TokenStoreMap)),
    // The bench's gateway runs without REDIS_URL: RateLimiter on the memory store (App.ts `counters`).
    RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)),
    Layer.succeed(HttpSettings, HttpSettings.of({
      publicUrl: `http://127.0.0.1:${config.port}`,
      trustProxy: false,
      rateLimitApiPerMinute: 100_000_000,
      rateLimitAuthPerHour: 100_000_000
    }))
  ])
)

// ---- run ---------------------------------------------------------------------------------------

// As App.ts runs without an OTLP endpoint (`NoTracing`).
const NoTracing = Layer.mergeAll(
  Layer.succeed(References.TracerEnabled, false),
  Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)
)

Layer.launch(config.mode === "floor" ? floor : floorMw).pipe(
  Effect.provide(NoTracing),
  Effect.provide(Logger.layer([Logger.consoleJson])),
  Effect.provideService(References.MinimumLogLevel, config.logLevel ?? "Warn"),
  NodeRuntime.runMain({
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Exit.hasInterrupts(exit) && !Exit.hasFails(exit) ? 0 : 1)
  })
)
