/** Routes (API, OpenAPI, docs, module icons, sandbox) and serving: build the routes, then listen. */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { MODULES } from "../services/Modules.ts"
import { drain, makeEdge, ServerLimits } from "./NodeEdge.ts"

/** /docs: Scalar and the document, served locally, compressed and cacheable (DocsPage.ts). */
export { DocsRoutes } from "./DocsPage.ts"

const icon = (letter: string, hue: number) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="hsl(${hue},60%,45%)"/><text x="32" y="42" font-family="sans-serif" font-size="30" text-anchor="middle" fill="#fff">${letter}</text></svg>`

/** The `image` of each module in the modules list. */
export const AssetRoutes = HttpRouter.use(Effect.fn(function*(router) {
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
 * Serves `routes` on the Node HTTP server. The router is built before the socket listens, so no
 * request can arrive before its handler is attached. The server's limits, its enveloped parser
 * rejections and the bounded drain at shutdown are in NodeEdge.ts (`ServerLimits`).
 */
export const serve = <E, R>(routes: Layer.Layer<never, E, R>, options: { readonly port: number; readonly host: string }) =>
  Layer.unwrap(Effect.gen(function*() {
    const limits = yield* ServerLimits
    const edge = makeEdge(limits)
    const served = Layer.unwrap(Effect.map(HttpRouter.toHttpEffect(routes), (app) => HttpServer.serve(app))).pipe(
      HttpServer.withLogAddress
    )
    // Built after the server is serving, so released before it: the drain runs first, bounded by the grace.
    const drained = Layer.effectDiscard(Effect.addFinalizer(() => drain(edge, limits.shutdownGraceMs)))
    return drained.pipe(
      Layer.provideMerge(served),
      Layer.provide(NodeHttpServer.layer(() => edge.server, { port: options.port, host: options.host }))
    )
  }))
