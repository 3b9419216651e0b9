/**
 * How every `/sandbox` route is registered: `sandboxRoute` counts calls per route name and answers
 * injected faults before the handler; `SandboxState` holds those faults and counts for one build.
 * Its own module so the Discord fakes and the source twins import it without importing Sandbox.ts,
 * which mounts them all (no import cycle).
 */
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { bucketHash } from "./DiscordState.ts"
import { isTrelloFault, isTrelloRoute, trelloFault } from "./taskboard/Faults.ts"

/**
 * `slow`: the answer comes 3.5 s late (on the member player: the bot's answer counts as 3 s late).
 * `cut`: the connection is dropped before the request is handled (nothing applied, no answer);
 * `cut-after`: the request is handled (a webhook's message posted) and the connection dropped before
 * the answer, as when a network path fails mid-answer: the client cannot tell which happened.
 */
export type FaultKind = "400" | "429" | "500" | "hang" | "401" | "403" | "404" | "slow" | "cut" | "cut-after"

export const FAULT_KINDS = ["400", "429", "500", "hang", "401", "403", "404", "slow", "cut", "cut-after"] as const satisfies ReadonlyArray<FaultKind>

export interface Fault {
  /** Route name (`"GET /users/@me/guilds"`) or `"*"`. */
  readonly route: string
  readonly kind: FaultKind
  /** Seconds, for 429. */
  readonly retryAfter: number
  readonly global: boolean
  /** Only requests whose path (without the query) starts with this, e.g. one webhook's or one feed's. */
  readonly path?: string | undefined
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
  /** Takes (consumes) the first pending fault matching the route name (and the request path, if it names one). */
  readonly takeFault: (routeName: string, requestPath?: string) => Effect.Effect<Fault | undefined>
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
        takeFault: (routeName, requestPath) =>
          Effect.sync(() => {
            const index = faults.findIndex((f) =>
              (f.fault.route === "*" || f.fault.route === routeName) &&
              (f.fault.path === undefined || (requestPath ?? "").startsWith(f.fault.path))
            )
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

const faultResponse = (fault: Fault, routeName: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  // The task-board twin's routes answer as Trello does.
  const kind = fault.kind
  if (isTrelloRoute(routeName) && isTrelloFault(kind)) return Effect.succeed(trelloFault(kind, fault.retryAfter))
  switch (fault.kind) {
    case "hang":
    case "cut":
    case "cut-after":
      return Effect.never
    case "401":
      return Effect.succeed(HttpServerResponse.jsonUnsafe({ message: "401: Unauthorized", code: 0 }, { status: 401 }))
    case "400":
      // Discord's answer to a request it refuses as malformed (50035 "Invalid Form Body").
      return Effect.succeed(HttpServerResponse.jsonUnsafe({ message: "Invalid Form Body", code: 50035 }, { status: 400 }))
    case "403":
      return Effect.succeed(HttpServerResponse.jsonUnsafe({ message: "Missing Access", code: 50001 }, { status: 403 }))
    case "404":
      // The resource the route names is gone, with Discord's code for it.
      return Effect.succeed(HttpServerResponse.jsonUnsafe(
        routeName.includes("/channels/")
          ? { message: "Unknown Channel", code: 10003 }
          : routeName.includes("/webhooks/")
          ? { message: "Unknown Webhook", code: 10015 }
          : { message: "404: Not Found", code: 0 },
        { status: 404 }
      ))
    case "slow":
      // Never reached: sandboxRoute runs the handler 3.5 s late instead.
      return Effect.never
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
            // The route's own bucket, as on Discord (a client keys its buckets by this hash).
            "x-ratelimit-bucket": bucketHash(routeName),
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
 * The layer needs `SandboxState`: `SandboxRoutes` (Sandbox.ts) provides it (the same
 * `SandboxState.layer` reference everywhere, so one build shares one state). Services the handler
 * needs beyond the request's own (e.g. the twins' `SourceState`) are taken when the layer is built.
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
  | Exclude<R, HttpRouter.Provided>
  | HttpRouter.Request.From<"Error", E>
> => {
  const name = options?.name ?? defaultRouteName(method, path)
  return HttpRouter.use((router) =>
    Effect.gen(function*() {
      const state = yield* SandboxState
      const services = yield* Effect.context<Exclude<R, HttpRouter.Provided>>()
      const provided = Effect.updateContext(
        handler as Effect.Effect<HttpServerResponse.HttpServerResponse, E, any>,
        (request: Context.Context<HttpRouter.Provided>) => Context.merge(request, services) as Context.Context<any>
      ) as Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpRouter.Provided>
      const wrapped = Effect.gen(function*() {
        yield* state.recordCall(name)
        const request = yield* HttpServerRequest.HttpServerRequest
        const fault = yield* state.takeFault(name, request.url.split("?")[0])
        if (fault?.kind === "cut" || fault?.kind === "cut-after") {
          if (fault.kind === "cut-after") yield* provided
          // No answer at all: the socket is destroyed, as a reset would (the handler fiber is then interrupted).
          NodeHttpServerRequest.toIncomingMessage(request).socket?.destroy()
          return yield* Effect.never
        }
        const response = fault?.kind === "slow"
          ? yield* Effect.delay(provided, "3500 millis")
          : fault
          ? yield* faultResponse(fault, name)
          : yield* provided
        yield* state.recordStatus(response.status)
        return response
      })
      yield* router.add(method, path, wrapped)
    })
  )
}
