/**
 * The external-source twins (SourcesRoutes) served over real HTTP on a loopback port, plus a few
 * test-only routes (a redirect), and the sandbox state for fault injection. `SandboxUrl` holds the
 * origin the clients are pointed at.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { SandboxState } from "../../src/sandbox/SandboxRoute.ts"
import { SourcesRoutes } from "../../src/sandbox/sources/Sources.ts"

export class SandboxUrl extends Context.Service<SandboxUrl, string>()("test/SandboxUrl") {}

const TestRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/test/redirect-to-rss", HttpServerResponse.redirect("/sandbox/rss/news.xml", { status: 301 })),
  HttpRouter.add("GET", "/test/redirect-loop", HttpServerResponse.redirect("/test/redirect-loop", { status: 302 }))
)

const Server = HttpRouter.serve(Layer.mergeAll(SourcesRoutes, TestRoutes), { disableLogger: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

const Url = Layer.effect(SandboxUrl, HttpServer.addressFormattedWith((url) => Effect.succeed(url)))

/** The server, its URL, the shared SandboxState (faults), and an HttpClient. */
export const SandboxServer = Layer.mergeAll(Url, SandboxState.layer, FetchHttpClient.layer).pipe(
  Layer.provideMerge(Server),
  Layer.provideMerge(SandboxState.layer)
)

/** Makes the next `count` calls of the route answer `kind` ("hang", "500", "401", "429"). */
export const fault = (route: string, kind: "hang" | "500" | "401" | "429", count = 1) =>
  SandboxState.use((s) => s.addFault({ route, kind, retryAfter: 3, global: false }, count))
