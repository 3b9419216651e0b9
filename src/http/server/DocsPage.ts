/**
 * The /docs page (Scalar) served from this process only: no CDN, no font host. The page is small
 * and revalidated (ETag); Scalar's script and the OpenAPI document are assets under content-hashed
 * URLs, cached for a year (`immutable`). Every answer is pre-compressed once (brotli, gzip) and
 * chosen by Accept-Encoding. Everything is built on the first request, not at start-up.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiGroup, HttpApiScalar, OpenApi } from "effect/http-api"
import type { Asset } from "./StaticAsset.ts"
import { asset, IMMUTABLE, respond } from "./StaticAsset.ts"

/** The Scalar bundle that effect ships (HttpApiScalar.layer inlines it in its page): taken from that page. */
const scalarScript = Effect.gen(function*() {
  const app = yield* HttpRouter.toHttpEffect(HttpApiScalar.layer(HttpApi.make("scalar"), { path: "/" }))
  const response = yield* app.pipe(
    Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request("http://localhost/")))
  )
  const html = yield* Effect.promise(() => HttpServerResponse.toWeb(response).text())
  const start = html.indexOf("<script>")
  const end = html.indexOf("</script>", start)
  if (start < 0 || end < 0) return yield* Effect.die(new Error("the Scalar page has no inline script"))
  return html.slice(start + "<script>".length, end)
}).pipe(Effect.scoped)

const escapeJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c")
const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;")

const build = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  Effect.gen(function*() {
    const spec = OpenApi.fromApi(api)
    const script = asset(yield* scalarScript, "text/javascript; charset=utf-8", IMMUTABLE)
    const document = asset(JSON.stringify(spec), "application/json", IMMUTABLE)
    const scriptPath = `/docs/assets/scalar-${script.etag.slice(1, -1)}.js`
    const documentPath = `/docs/assets/openapi-${document.etag.slice(1, -1)}.json`
    // No third-party host: Scalar's fonts (fonts.scalar.com) off, the page uses the system fonts; no
    // developer toolbar (its Share button posts the document to registry.scalar.com). The token box
    // of the `bearer` scheme is open from the start.
    const config = {
      _integration: "html",
      url: documentPath,
      withDefaultFonts: false,
      showDeveloperTools: "never",
      hideClientButton: true,
      authentication: { preferredSecurityScheme: "bearer" }
    }
    const page = asset(
      `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(spec.info.title)}</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <div id="api-reference-container"></div>
    <script src="${scriptPath}"></script>
    <script>window.Scalar.createApiReference(document.getElementById("api-reference-container"), ${escapeJson(config)})</script>
  </body>
</html>`,
      "text/html; charset=utf-8",
      "no-cache"
    )
    return new Map<string, Asset>([["/docs", page], [scriptPath, script], [documentPath, document]])
  })

/** GET /docs and its assets, for the document of `api` (http/contract/OpenApiDocument.ts `documentedApi`). */
export const DocsRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  HttpRouter.use(Effect.fn(function*(router) {
    const assets = yield* Effect.cached(build(api))
    const serve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const all = yield* assets
      const path = request.url.split("?")[0]!
      const found = all.get(path)
      return found === undefined ? HttpServerResponse.empty({ status: 404 }) : respond(found, request)
    })
    yield* router.add("GET", "/docs", serve)
    yield* router.add("GET", "/docs/assets/*", serve)
  }))
