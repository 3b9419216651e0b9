/** Routes (API, OpenAPI, docs, module icons, sandbox) and serving: build the routes, then listen. */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { MODULES } from "../../services/platform/Modules.ts"
import { faviconIco } from "./Favicon.ts"
import { drain, makeEdge, ServerLimits } from "./NodeEdge.ts"

/** /docs: Scalar and the document, served locally, compressed and cacheable (DocsPage.ts). */
export { DocsRoutes } from "./DocsPage.ts"

const icon = (letter: string, hue: number) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="hsl(${hue},60%,45%)"/><text x="32" y="42" font-family="sans-serif" font-size="30" text-anchor="middle" fill="#fff">${letter}</text></svg>`

/** The `image` of each module in the modules list, and the gateway's icon (Favicon.ts). */
export const AssetRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const favicon = faviconIco()
  yield* router.add(
    "GET",
    "/favicon.ico",
    HttpServerResponse.uint8Array(favicon, { contentType: "image/x-icon", headers: { "cache-control": "public, max-age=86400" } })
  )
  for (const [i, m] of MODULES.entries()) {
    const body = icon(m.full_name[0]!, i * 50)
    yield* router.add(
      "GET",
      `/assets/modules/${m.name}.svg`,
      HttpServerResponse.text(body, { contentType: "image/svg+xml", headers: { "cache-control": "public, max-age=86400" } })
    )
  }
}))

/**
 * The gateway's `Context.Reference`s: settings with a default that code reads from whatever fiber it
 * runs in (DependencyHealth from a request's, say), so a request keeps them. A test checks that every
 * `Context.Reference` declared in src/ is listed here (test/perf/RequestContext.test.ts).
 */
export const requestReferences: ReadonlySet<string> = new Set([
  "gateway/DependencyHealth",
  "gateway/FeedDelivery",
  "gateway/FeedInsight",
  "gateway/InteractionsSql",
  "gateway/JobDrainTimeout",
  "gateway/RateLimitCarry",
  "gateway/RedisSocketTuning",
  "gateway/SandboxConfig",
  "gateway/SandboxTaskBoardConfig",
  "gateway/ServerLimits"
])

/**
 * What a request's fiber starts with: the server's context without the gateway's own services
 * (`gateway/…` keys that are not References). No route reads a service from its request: each takes
 * what it uses when it is built (`serve` takes only `RequestFree` routes, so the type checker refuses
 * one that needs a service at request time), and every HttpApi group puts its build-time context back
 * on its own requests (HttpApiBuilder merges it), so handlers and their middleware see every service
 * as before. What it saves: that merge copies the request's context into a new map on every request,
 * and a request carried ~57 entries instead of ~22.
 */
export const requestContext = <R>(context: Context.Context<R>): Context.Context<R> => {
  const kept = new Map<string, unknown>()
  for (const [key, value] of context.mapUnsafe) {
    if (!key.startsWith("gateway/") || requestReferences.has(key)) kept.set(key, value)
  }
  return Context.makeUnsafe(kept)
}

/**
 * Routes whose handlers and global middleware need no service at request time (`HttpRouter` types a
 * handler's needs as `Request<"Requires", …>`); otherwise the type names what one needs.
 */
export type RequestFree<R> = [HttpRouter.Request.Only<"Requires", R> | HttpRouter.Request.Only<"GlobalRequires", R>] extends [never]
  ? unknown
  : { readonly "a route needs these services at request time; take them when it is built": HttpRouter.Request.Only<"Requires", R> | HttpRouter.Request.Only<"GlobalRequires", R> }

/**
 * Serves `routes` on the Node HTTP server. The router is built before the socket listens, so no
 * request can arrive before its handler is attached. The server's limits, its enveloped parser
 * rejections and the bounded drain at shutdown are in NodeEdge.ts (`ServerLimits`).
 */
export const serve = <E, R>(
  routes: Layer.Layer<never, E, R> & RequestFree<R>,
  options: { readonly port: number; readonly host: string }
) =>
  Layer.unwrap(Effect.gen(function*() {
    const limits = yield* ServerLimits
    const edge = makeEdge(limits)
    // The router is built with every service; each request runs with `requestContext` (above).
    const served = Layer.unwrap(Effect.map(
      HttpRouter.toHttpEffect(routes),
      // Serving needs the server and its scope; what the routes need at request time is nothing (RequestFree).
      (app) =>
        Layer.effectDiscard(Effect.updateContext(
          HttpServer.serveEffect(app),
          (context: Context.Context<HttpServer.HttpServer | Scope.Scope>) => requestContext(context) as never
        ))
    )).pipe(
      HttpServer.withLogAddress
    )
    // Built after the server is serving, so released before it: the drain runs first, bounded by the grace.
    const drained = Layer.effectDiscard(Effect.addFinalizer(() => drain(edge, limits.shutdownGraceMs, limits.idleLingerMs)))
    return drained.pipe(
      Layer.provideMerge(served),
      Layer.provide(NodeHttpServer.layer(() => edge.server, { port: options.port, host: options.host }))
    )
  }))
