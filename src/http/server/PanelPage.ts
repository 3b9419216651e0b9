/**
 * The control panel at /app (src/panel, bundled by scripts/build-panel.mjs into <dist>/panel). Every
 * path under /app is the single-page app's shell (small, revalidated); its script and style are
 * assets under content-hashed URLs, cached for a year and pre-compressed (the same as /docs,
 * DocsPage.ts). The shell names PUBLIC_URL (the sign-in's redirect_uri is PUBLIC_URL/app/callback)
 * and, outside the sandbox, the platform's icon host. A strict CSP: the gateway's own script only.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { envelope } from "../edge/Envelope.ts"
import { asset, IMMUTABLE, respond } from "./StaticAsset.ts"
import type { Asset } from "./StaticAsset.ts"

export interface PanelOptions {
  readonly publicUrl: string
  /** The chat platform's image host for server and bot icons; undefined shows initials (the sandbox has none). */
  readonly iconHost?: string | undefined
  /** Where to look for the bundle (tests); by default beside the gateway's bundle, then dist/panel. */
  readonly bundleDirs?: ReadonlyArray<string> | undefined
}

/** Where the bundle is: beside dist/main.mjs, or dist/panel when running from src/http. */
const candidates = () => [new URL("./panel/", import.meta.url), new URL("../../../dist/panel/", import.meta.url)].map((u) => fileURLToPath(u))

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;")

const securityHeaders = (iconHost: string | undefined) => ({
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    // https: a feed's message shows its images (embed image and thumbnail, avatar) from the sources' hosts, as the platform does.
    `img-src 'self' data: https:${iconHost === undefined ? "" : ` ${iconHost}`}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join("; "),
  "x-content-type-options": "nosniff",
  // The callback's URL carries the sign-in code: never in a Referer.
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
})

const load = (options: PanelOptions): Map<string, Asset> | undefined => {
  const dir = (options.bundleDirs ?? candidates()).find((d) => existsSync(`${d}app.js`) && existsSync(`${d}app.css`))
  if (dir === undefined) return undefined
  const script = asset(readFileSync(`${dir}app.js`, "utf8"), "text/javascript; charset=utf-8", IMMUTABLE)
  const style = asset(readFileSync(`${dir}app.css`, "utf8"), "text/css; charset=utf-8", IMMUTABLE)
  const scriptPath = `/app/assets/app-${script.etag.slice(1, -1)}.js`
  const stylePath = `/app/assets/app-${style.etag.slice(1, -1)}.css`
  const shell = asset(
    `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <title>Gateway control panel</title>
    <meta name="gateway-public-url" content="${escapeHtml(options.publicUrl)}" />
    <meta name="gateway-icon-cdn" content="${escapeHtml(options.iconHost ?? "")}" />
    <link rel="stylesheet" href="${stylePath}" />
    <script type="module" src="${scriptPath}"></script>
  </head>
  <body>
    <div id="app"></div>
    <noscript>The control panel needs JavaScript. The API is documented at <a href="/docs">/docs</a>.</noscript>
  </body>
</html>`,
    "text/html; charset=utf-8",
    "no-cache"
  )
  return new Map<string, Asset>([["shell", shell], [scriptPath, script], [stylePath, style]])
}

/** No bundle: an operator's fix (a build), so the envelope every error has, with a Retry-After like every 503. */
const notBuilt = () =>
  envelope(503, "The control panel is not built: run `npm run build` (or `npm start`), then reload.", { retry_after: 60 })

/** GET /app, /app/* (the shell) and /app/assets/* (the bundle). */
export const PanelRoutes = (options: PanelOptions) =>
  HttpRouter.use(Effect.fn(function*(router) {
    let assets: Map<string, Asset> | undefined // kept once found; looked for again while missing
    const headers = securityHeaders(options.iconHost)
    const serve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      assets ??= load(options)
      if (assets === undefined) return notBuilt()
      const path = request.url.split("?")[0]!
      if (path.startsWith("/app/assets/")) {
        const found = assets.get(path)
        return found === undefined ? HttpServerResponse.empty({ status: 404 }) : respond(found, request)
      }
      return HttpServerResponse.setHeaders(respond(assets.get("shell")!, request), headers)
    })
    // `/app/*` also matches `/app` itself (declaring both is refused by the router).
    yield* router.add("GET", "/app/*", serve)
  }))
