/**
 * What every sandbox Discord route shares: Discord's error bodies, its rate limits (a global limit
 * per token, then per-route buckets keyed by token + route + major parameter) with the
 * `X-RateLimit-*` headers on every answer, and resolving the caller's token.
 */
import { Clock, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { DiscordStore, WindowCheck } from "./DiscordState.ts"
import { bucketHash } from "./DiscordState.ts"
import type { SeedBot, SeedUser } from "./Seed.ts"
import { findBotByToken, findUser } from "./Seed.ts"

export const API = "/sandbox/discord/api/v10"

export const discordError = (status: number, message: string, code: number, extra?: Record<string, unknown>) =>
  HttpServerResponse.jsonUnsafe({ message, code, ...extra }, { status })

export const Errors = {
  unauthorized: () => discordError(401, "401: Unauthorized", 0),
  notFound: () => discordError(404, "404: Not Found", 0),
  unknownGuild: () => discordError(404, "Unknown Guild", 10004),
  unknownChannel: () => discordError(404, "Unknown Channel", 10003),
  unknownWebhook: () => discordError(404, "Unknown Webhook", 10015),
  missingAccess: () => discordError(403, "Missing Access", 50001),
  missingPermissions: () => discordError(403, "Missing Permissions", 50013),
  invalidWebhookToken: () => discordError(401, "Invalid Webhook Token", 50027),
  invalidJson: () => discordError(400, "The request body contains invalid JSON.", 50109)
} as const

export type Principal =
  | { readonly kind: "bot"; readonly bot: SeedBot }
  | { readonly kind: "user"; readonly user: SeedUser; readonly scopes: ReadonlySet<string> }

/** `Bot <token>` → the bot; `Bearer <token>` → the user of a live access token; else undefined. */
export const authenticate = (store: DiscordStore, header: string | undefined, now: number): Principal | undefined => {
  if (!header) return undefined
  const [scheme, token] = header.split(" ", 2)
  if (!token) return undefined
  if (scheme === "Bot") {
    const bot = findBotByToken(token)
    return bot ? { kind: "bot", bot } : undefined
  }
  if (scheme === "Bearer") {
    const access = store.accessTokens.get(token)
    if (!access) return undefined
    if (now >= access.expiresAt) {
      store.accessTokens.delete(token)
      return undefined
    }
    const user = findUser(access.userId)
    return user ? { kind: "user", user, scopes: new Set(access.scope.split(/\s+/).filter((s) => s !== "")) } : undefined
  }
  return undefined
}

export interface DiscordContext {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params: Readonly<Record<string, string | undefined>>
  readonly query: URLSearchParams
  readonly now: number
  readonly principal: Principal | undefined
  /** `http://host[:port]` the caller reached the sandbox at (or the configured public origin). */
  readonly origin: string
}

const rateLimitHeaders = (routeName: string, check: WindowCheck, now: number): Record<string, string> => ({
  "x-ratelimit-limit": String(check.limit),
  "x-ratelimit-remaining": String(check.remaining),
  "x-ratelimit-reset": (check.resetAt / 1000).toFixed(3),
  "x-ratelimit-reset-after": (Math.max(0, check.resetAt - now) / 1000).toFixed(3),
  "x-ratelimit-bucket": bucketHash(routeName)
})

const rateLimited = (headers: Record<string, string>, retryAfterMs: number, global: boolean) => {
  const retryAfter = Math.max(0.001, retryAfterMs / 1000)
  return HttpServerResponse.jsonUnsafe(
    { message: "You are being rate limited.", retry_after: Number(retryAfter.toFixed(3)), global, code: 0 },
    {
      status: 429,
      headers: {
        ...headers,
        "retry-after": String(Math.ceil(retryAfter)),
        "x-ratelimit-scope": global ? "global" : "user",
        ...(global ? { "x-ratelimit-global": "true" } : {})
      }
    }
  )
}

/**
 * A Discord route handler: checks the global limit (per token) and the route's bucket (per token,
 * route and major parameter), answers 429 like Discord when exceeded, else runs `handler` and adds the
 * bucket's headers to its answer. Bucket hashes are per route, as on Discord (the major parameter
 * selects which count of that bucket applies).
 */
export const discordHandler = (
  store: DiscordStore,
  routeName: string,
  majorParam: string | undefined,
  handler: (ctx: DiscordContext) => Effect.Effect<HttpServerResponse.HttpServerResponse>,
  options?: {
    /** The bucket belongs to the resource whoever calls (webhook executes: per webhook id and token). */
    readonly perResource?: ReadonlyArray<string> | undefined
  }
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const now = yield* Clock.currentTimeMillis
    const header = request.headers["authorization"]
    const identity = header ?? "anonymous"
    const major = majorParam ? params[majorParam] ?? "" : ""
    const routeKey = options?.perResource !== undefined
      ? `resource|${routeName}|${options.perResource.map((p) => params[p] ?? "").join("/")}`
      : `route|${identity}|${routeName}|${major}`
    if (header) {
      const global = store.hit(`global|${identity}`, store.config.globalLimit, now)
      if (!global.allowed) {
        const headers = rateLimitHeaders(routeName, store.peek(routeKey, store.bucketOf(routeName), now), now)
        return rateLimited(headers, global.resetAt - now, true)
      }
    }
    const check = store.hit(routeKey, store.bucketOf(routeName), now)
    const headers = rateLimitHeaders(routeName, check, now)
    if (!check.allowed) return rateLimited(headers, check.resetAt - now, false)
    const queryIndex = request.url.indexOf("?")
    const query = new URLSearchParams(queryIndex >= 0 ? request.url.slice(queryIndex + 1) : "")
    const origin = store.config.publicOrigin ?? `http://${request.headers["host"] ?? "127.0.0.1"}`
    const principal = authenticate(store, header, now)
    const response = yield* handler({ request, params, query, now, principal, origin })
    return HttpServerResponse.setHeaders(response, headers)
  })

/** `/guilds/{id}` → `/guilds/:id`. */
export const routerPath = (template: string): string => template.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1")
