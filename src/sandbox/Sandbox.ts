/**
 * The sandbox: in-process fakes of the gateway's upstreams, mounted under `/sandbox` when no platform
 * credentials are configured. Every route goes through `sandboxRoute` (SandboxRoute.ts), which counts
 * calls per route name (`GET /sandbox/stats`) and answers injected faults (`POST /sandbox/faults`).
 *
 * State lives in memory and is created when the layer is built: two builds never share it.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { DiscordRoutes, DiscordState, SANDBOX_DISCORD_API, SANDBOX_DISCORD_AUTHORIZE } from "./DiscordSandbox.ts"
import { botsListing, CONTROL_ROUTES, interactionsOf } from "./interactions/InteractionsRoutes.ts"
import { forumTagsOf } from "./DiscordThreads.ts"
import { FAULT_KINDS, sandboxRoute, SandboxState } from "./SandboxRoute.ts"
import { FORUM_WEBHOOKS, FORUMS, SEED, THREADS } from "./Seed.ts"
import { sandboxOrigin } from "./Origin.ts"
import { sourcesListing } from "./sources/Seed.ts"
import { SourcesRoutes } from "./sources/Sources.ts"
import { SourceState } from "./sources/Store.ts"
import { taskBoardListing } from "./taskboard/Inspect.ts"
import { TaskBoardState } from "./taskboard/State.ts"

export { type BucketSize, defaultSandboxConfig, SandboxConfig, type SandboxConfigShape } from "./DiscordConfig.ts"
/** Base path of the Discord API v10 fake (the gateway's Discord client base URL is origin + this) and
 * the OAuth2 authorize page (Discord: https://discord.com/oauth2/authorize). */
export { DiscordState, DiscordStore, SANDBOX_DISCORD_API, SANDBOX_DISCORD_AUTHORIZE } from "./DiscordSandbox.ts"


const FaultBody = Schema.Struct({
  /** Route name, or "*"; not needed for dm_closed. */
  route: Schema.optionalKey(Schema.String),
  count: Schema.optionalKey(Schema.Int),
  kind: Schema.Literals([...FAULT_KINDS, "dm_closed"]),
  /** dm_closed: whose direct messages refuse the bots (50007), `count` posts or until DELETE. */
  user_id: Schema.optionalKey(Schema.String),
  retry_after: Schema.optionalKey(Schema.Number),
  global: Schema.optionalKey(Schema.Boolean),
  path: Schema.optionalKey(Schema.String)
})

/** `deny`: Discord's decimal permission bits the member loses in the server (replacing any denied before). */
const PermissionsBody = Schema.Struct({
  guild_id: Schema.String,
  user_id: Schema.String,
  deny: Schema.String.check(Schema.isPattern(/^\d{1,16}$/))
})

const badRequest = (message: string) => HttpServerResponse.jsonUnsafe({ message, code: 50035 }, { status: 400 })

/** A fault for a route (by name, and path prefix), or closed DMs for a user (`count` posts, or until DELETE). */
const addFault = (state: SandboxState["Service"], closedDms: Map<string, number>, body: typeof FaultBody.Type) => {
  if (body.kind === "dm_closed") {
    const userId = body.user_id
    return userId === undefined ? Effect.fail("dm_closed needs user_id") : Effect.sync(() => void closedDms.set(userId, body.count ?? Infinity))
  }
  if (body.route === undefined) return Effect.fail("route is required")
  const fault = { route: body.route, kind: body.kind, retryAfter: body.retry_after ?? 1, global: body.global ?? false, path: body.path }
  return state.addFault(fault, body.count ?? 1)
}

/** `/sandbox/faults`, `/sandbox/stats`, `/sandbox/discord/permissions`: control routes, themselves never faulted nor counted. */
const ControlRoutes = Layer.mergeAll(
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const state = yield* SandboxState
      const discord = yield* DiscordState
      const closedDms = interactionsOf(discord).closedDms
      yield* router.add(
        "POST",
        "/sandbox/faults",
        HttpServerRequest.schemaBodyJson(FaultBody).pipe(
          Effect.flatMap((body) => addFault(state, closedDms, body)),
          Effect.as(HttpServerResponse.jsonUnsafe({ ok: true })),
          Effect.catch((error) => Effect.succeed(badRequest(`Invalid fault: ${String(error)}`)))
        )
      )
      yield* router.add(
        "DELETE",
        "/sandbox/faults",
        Effect.as(Effect.andThen(state.clearFaults, Effect.sync(() => closedDms.clear())), HttpServerResponse.empty())
      )
      // A member (a bot) losing permission bits in a server, as when its role is edited: every route
      // that checks them answers as the platform would (e.g. crosspost 403 50013 without MANAGE_MESSAGES).
      yield* router.add(
        "POST",
        "/sandbox/discord/permissions",
        HttpServerRequest.schemaBodyJson(PermissionsBody).pipe(
          Effect.map((body) => {
            discord.denied.set(`${body.guild_id}:${body.user_id}`, BigInt(body.deny))
            return HttpServerResponse.jsonUnsafe({ ok: true })
          }),
          Effect.catch((error) => Effect.succeed(badRequest(`Invalid permissions: ${String(error)}`)))
        )
      )
      yield* router.add("DELETE", "/sandbox/discord/permissions", Effect.sync(() => {
        discord.denied.clear()
        return HttpServerResponse.empty()
      }))
      yield* router.add("GET", "/sandbox/stats", Effect.map(state.stats, (s) => HttpServerResponse.jsonUnsafe(s)))
      yield* router.add("DELETE", "/sandbox/stats", Effect.as(state.resetStats, HttpServerResponse.empty()))
    })
  )
)

/**
 * `GET /sandbox`: what the sandbox holds, for a newcomer. Every source identifier is listed exactly
 * as the feed routes accept it (feeds as absolute URLs under PUBLIC_URL, also those created by
 * publishing), with where events are published.
 */
const IndexRoute = sandboxRoute(
  "GET",
  "/sandbox",
  Effect.gen(function*() {
    const store = yield* SourceState
    const base = yield* sandboxOrigin(store.publicOrigin)
    const discord = yield* DiscordState
    const listing = sourcesListing(base)
    const created = [...store.feeds.keys()].filter((name) => name !== "news" && name !== "atom")
    return HttpServerResponse.jsonUnsafe({
      users: SEED.users.map((u) => ({ id: u.id, username: u.username })),
      bots: botsListing(discord.config.interactionsOrigin ?? base),
      // delivery.md §10: each server's thread and forum, which the channel listings leave out.
      servers: SEED.guilds.map((g) => ({
        id: g.id,
        name: g.name,
        threads: THREADS.filter((t) => t.guildId === g.id).map((t) => ({ id: t.id, name: t.name, parent_id: t.parent_id })),
        forums: FORUMS.filter((f) => f.guildId === g.id).map((f) => {
          const hook = FORUM_WEBHOOKS.find((w) => w.channelId === f.id)!
          return {
            id: f.id,
            name: f.name,
            tags: forumTagsOf(discord, f).map((t) => ({ id: t.id, name: t.name })),
            webhook_url: `${base}${SANDBOX_DISCORD_API}/webhooks/${hook.id}/${hook.token}`
          }
        })
      })),
      discord: {
        api: SANDBOX_DISCORD_API,
        authorize: SANDBOX_DISCORD_AUTHORIZE,
        client_id: SEED.oauth.clientId,
        messages: "/sandbox/discord/messages"
      },
      sources: { ...listing, rss: [...listing.rss, ...created.map((name) => `${base}/sandbox/rss/${name}.xml`)] },
      events: "POST /sandbox/sources/{module}/{identifier}/events (identifier URL-encoded as listed; for rss the feed's short name)",
      taskboard: taskBoardListing(yield* TaskBoardState),
      routes: CONTROL_ROUTES
    })
  })
)

const AllRoutes = Layer.mergeAll(ControlRoutes, IndexRoute, DiscordRoutes, SourcesRoutes)
const States = Layer.mergeAll(SandboxState.layer, DiscordState.layer, SourceState.layer, TaskBoardState.layer)

/** Every `/sandbox` route, with its own in-memory state. Merge into the gateway's router. */
export const SandboxRoutes: Layer.Layer<never, never, HttpRouter.HttpRouter> = AllRoutes.pipe(Layer.provide(States))

/** The same routes, also exposing their state (for tests that inspect or drive it directly). */
export const SandboxRoutesWithState: Layer.Layer<SandboxState | DiscordState | SourceState | TaskBoardState, never, HttpRouter.HttpRouter> = AllRoutes
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
