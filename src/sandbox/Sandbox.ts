/**
 * The sandbox: in-process fakes of the gateway's upstreams, mounted under `/sandbox` when no platform
 * credentials are configured. Every route goes through `sandboxRoute`, which counts calls per route
 * name (`GET /sandbox/stats`) and answers injected faults (`POST /sandbox/faults`).
 *
 * State lives in memory and is created when the layer is built: two builds never share it.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { DiscordRoutes, DiscordState, SANDBOX_DISCORD_API, SANDBOX_DISCORD_AUTHORIZE } from "./DiscordSandbox.ts"
import { SEED } from "./Seed.ts"
import { SOURCES_LISTING } from "./sources/Seed.ts"

export { type BucketSize, defaultSandboxConfig, SandboxConfig, type SandboxConfigShape } from "./DiscordConfig.ts"
/** Base path of the Discord API v10 fake (the gateway's Discord client base URL is origin + this) and
 * the OAuth2 authorize page (Discord: https://discord.com/oauth2/authorize). */
export { DiscordState, DiscordStore, SANDBOX_DISCORD_API, SANDBOX_DISCORD_AUTHORIZE } from "./DiscordSandbox.ts"


export type FaultKind = "429" | "500" | "hang" | "401"

export interface Fault {
  /** Route name (`"GET /users/@me/guilds"`) or `"*"`. */
  readonly route: string
  readonly kind: FaultKind
  /** Seconds, for 429. */
  readonly retryAfter: number
  readonly global: boolean
}

export interface SandboxStats {
  readonly calls: Readonly<Record<string, number>>
  readonly status429: number
  /** Answers with 401, 403 or 429 (Discord bans clients past 10,000 of them in 10 minutes). */
  readonly invalid: number
}

/** Faults and call counts shared by every sandbox route of one build. */
export class SandboxState extends Context.Service<SandboxState, {
  readonly addFault: (fault: Fault, count: number) => Effect.Effect<void>
  readonly clearFaults: Effect.Effect<void>
  /** Takes (consumes) the first pending fault matching the route name. */
  readonly takeFault: (routeName: string) => Effect.Effect<Fault | undefined>
  readonly recordCall: (routeName: string) => Effect.Effect<void>
  readonly recordStatus: (status: number) => Effect.Effect<void>
  readonly stats: Effect.Effect<SandboxStats>
  readonly resetStats: Effect.Effect<void>
}>()("gateway/SandboxState") {
  static readonly layer = Layer.effect(
    SandboxState,
    Effect.sync(() => {
      const faults: Array<{ fault: Fault; remaining: number }> = []
      let calls = new Map<string, number>()
      let status429 = 0
      let invalid = 0
      return SandboxState.of({
        addFault: (fault, count) => Effect.sync(() => void faults.push({ fault, remaining: count })),
        clearFaults: Effect.sync(() => void faults.splice(0)),
        takeFault: (routeName) =>
          Effect.sync(() => {
            const index = faults.findIndex((f) => f.fault.route === "*" || f.fault.route === routeName)
            const entry = faults[index]
            if (!entry) return undefined
            entry.remaining -= 1
            if (entry.remaining <= 0) faults.splice(index, 1)
            return entry.fault
          }),
        recordCall: (routeName) => Effect.sync(() => void calls.set(routeName, (calls.get(routeName) ?? 0) + 1)),
        recordStatus: (status) =>
          Effect.sync(() => {
            if (status === 429) status429 += 1
            if (status === 401 || status === 403 || status === 429) invalid += 1
          }),
        stats: Effect.sync(() => ({ calls: Object.fromEntries(calls), status429, invalid })),
        resetStats: Effect.sync(() => {
          calls = new Map()
          status429 = 0
          invalid = 0
        })
      })
    })
  )
}

export type SandboxMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "*"

/** `/sandbox/x/:id/:token` → `"GET /sandbox/x/{id}/{token}"`. */
export const defaultRouteName = (method: SandboxMethod, path: string): string =>
  `${method} ${path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`

const faultResponse = (fault: Fault): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  switch (fault.kind) {
    case "hang":
      return Effect.never
    case "401":
      return Effect.succeed(HttpServerResponse.jsonUnsafe({ message: "401: Unauthorized", code: 0 }, { status: 401 }))
    case "500":
      return Effect.succeed(
        HttpServerResponse.jsonUnsafe({ message: "500: Internal Server Error", code: 0 }, { status: 500 })
      )
    case "429": {
      const now = Date.now() / 1000
      return Effect.succeed(HttpServerResponse.jsonUnsafe(
        { message: "You are being rate limited.", retry_after: fault.retryAfter, global: fault.global, code: 0 },
        {
          status: 429,
          headers: {
            "retry-after": String(Math.ceil(fault.retryAfter)),
            "x-ratelimit-limit": "1",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": (now + fault.retryAfter).toFixed(3),
            "x-ratelimit-reset-after": fault.retryAfter.toFixed(3),
            "x-ratelimit-bucket": "sandbox-fault",
            "x-ratelimit-scope": fault.global ? "global" : "user",
            ...(fault.global ? { "x-ratelimit-global": "true" } : {})
          }
        }
      ))
    }
  }
}

/**
 * Registers a sandbox route: counts the call under its name, answers a pending fault for it if any,
 * else runs the handler. Use it for every `/sandbox` route (also the external-source fakes).
 * The route name defaults to `"<METHOD> <path with {params}>"`; faults and stats use it.
 *
 * The layer needs `SandboxState`: `SandboxRoutes` provides it (the same `SandboxState.layer`
 * reference everywhere, so one build shares one state).
 */
export const sandboxRoute = <E = never, R = never>(
  method: SandboxMethod,
  path: `/sandbox${string}`,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  options?: { readonly name?: string | undefined }
): Layer.Layer<
  never,
  never,
  | HttpRouter.HttpRouter
  | SandboxState
  | HttpRouter.Request.From<"Requires", Exclude<R, HttpRouter.Provided>>
  | HttpRouter.Request.From<"Error", E>
> => {
  const name = options?.name ?? defaultRouteName(method, path)
  return HttpRouter.use((router) =>
    Effect.gen(function*() {
      const state = yield* SandboxState
      const wrapped = Effect.gen(function*() {
        yield* state.recordCall(name)
        const fault = yield* state.takeFault(name)
        const response = fault ? yield* faultResponse(fault) : yield* handler
        yield* state.recordStatus(response.status)
        return response
      })
      yield* router.add(method, path, wrapped)
    })
  )
}

/** The signature of `sandboxRoute`, for modules that take it as a parameter (no import cycle). */
export type SandboxRouteFn = typeof sandboxRoute

const FaultBody = Schema.Struct({
  route: Schema.String,
  count: Schema.optionalKey(Schema.Int),
  kind: Schema.Literals(["429", "500", "hang", "401"]),
  retry_after: Schema.optionalKey(Schema.Number),
  global: Schema.optionalKey(Schema.Boolean)
})

const badRequest = (message: string) => HttpServerResponse.jsonUnsafe({ message, code: 50035 }, { status: 400 })

/** `/sandbox/faults`, `/sandbox/stats`: control routes, themselves never faulted nor counted. */
const ControlRoutes = Layer.mergeAll(
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const state = yield* SandboxState
      yield* router.add(
        "POST",
        "/sandbox/faults",
        HttpServerRequest.schemaBodyJson(FaultBody).pipe(
          Effect.flatMap((body) =>
            state.addFault(
              {
                route: body.route,
                kind: body.kind,
                retryAfter: body.retry_after ?? 1,
                global: body.global ?? false
              },
              body.count ?? 1
            )
          ),
          Effect.as(HttpServerResponse.jsonUnsafe({ ok: true })),
          Effect.catch((error) => Effect.succeed(badRequest(`Invalid fault: ${String(error)}`)))
        )
      )
      yield* router.add("DELETE", "/sandbox/faults", Effect.as(state.clearFaults, HttpServerResponse.empty()))
      yield* router.add("GET", "/sandbox/stats", Effect.map(state.stats, (s) => HttpServerResponse.jsonUnsafe(s)))
      yield* router.add("DELETE", "/sandbox/stats", Effect.as(state.resetStats, HttpServerResponse.empty()))
    })
  )
)

/** `GET /sandbox`: what the sandbox holds, for a newcomer. */
const IndexRoute = sandboxRoute(
  "GET",
  "/sandbox",
  Effect.succeed(HttpServerResponse.jsonUnsafe({
    users: SEED.users.map((u) => ({ id: u.id, username: u.username })),
    bots: SEED.bots.map((b) => ({ id: b.id, name: b.name })),
    servers: SEED.guilds.map((g) => ({ id: g.id, name: g.name })),
    discord: {
      api: SANDBOX_DISCORD_API,
      authorize: SANDBOX_DISCORD_AUTHORIZE,
      client_id: SEED.oauth.clientId
    },
    sources: SOURCES_LISTING
  }))
)

/**
 * The external-source fakes (src/sandbox/sources/Sources.ts). Imported when the layer is built, not
 * statically: that module imports `sandboxRoute` from this one, and a static cycle would leave one
 * side's constants uninitialised depending on which module is loaded first.
 */
const SourcesRoutes = Layer.unwrap(
  Effect.promise(() => import("./sources/Sources.ts")).pipe(Effect.map((module) => module.SourcesRoutes))
)

const AllRoutes = Layer.mergeAll(ControlRoutes, IndexRoute, DiscordRoutes(sandboxRoute), SourcesRoutes)
const States = Layer.mergeAll(SandboxState.layer, DiscordState.layer)

/** Every `/sandbox` route, with its own in-memory state. Merge into the gateway's router. */
export const SandboxRoutes: Layer.Layer<never, never, HttpRouter.HttpRouter> = AllRoutes.pipe(Layer.provide(States))

/** The same routes, also exposing their state (for tests that inspect or drive it directly). */
export const SandboxRoutesWithState: Layer.Layer<SandboxState | DiscordState, never, HttpRouter.HttpRouter> = AllRoutes
  .pipe(Layer.provideMerge(States))

/** A running sandbox, for tests: its origin, e.g. `http://127.0.0.1:41234`. */
export class SandboxServer extends Context.Service<SandboxServer, {
  readonly url: string
  /** `url` + `/sandbox/discord/api/v10`: the base URL of the Discord client under test. */
  readonly discordApiUrl: string
  /** `url` + `/sandbox/discord/oauth2/authorize`. */
  readonly authorizeUrl: string
}>()("gateway/SandboxServer") {
  /**
   * Serves the sandbox alone on a loopback port (0 = any free port). Build it with real time
   * (`layer(..., { excludeTestServices: true })`): the sandbox's windows and expiries read the Clock.
   */
  static readonly layer = (options?: { readonly port?: number | undefined }) =>
    Layer.effect(
      SandboxServer,
      HttpServer.addressFormattedWith((url) =>
        Effect.succeed(SandboxServer.of({
          url,
          discordApiUrl: `${url}${SANDBOX_DISCORD_API}`,
          authorizeUrl: `${url}${SANDBOX_DISCORD_AUTHORIZE}`
        }))
      )
    ).pipe(
      Layer.provideMerge(HttpRouter.serve(SandboxRoutesWithState, { disableLogger: true, disableListenLog: true })),
      Layer.provide(NodeHttpServer.layer(createServer, { port: options?.port ?? 0, host: "127.0.0.1" })),
      Layer.orDie
    )
}
