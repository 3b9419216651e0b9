/**
 * The sandbox's OAuth2: the authorize page (pick a seeded user, or `login_hint=<user id>` to skip the
 * page, or deny), the token endpoint (authorization_code with PKCE S256, refresh_token with rotation)
 * and revocation. Clients authenticate with HTTP Basic or form fields (`sandbox-client` /
 * `sandbox-secret`).
 */
import { Clock, Effect, Layer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { DiscordContext } from "./DiscordHttp.ts"
import { API, discordHandler } from "./DiscordHttp.ts"
import type { DiscordStore } from "./DiscordState.ts"
import { DiscordState, pkceChallenge, randomToken } from "./DiscordState.ts"
import { sandboxRoute } from "./SandboxRoute.ts"
import { findUser, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SEED } from "./Seed.ts"

export const AUTHORIZE_PATH = "/sandbox/discord/oauth2/authorize"

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const errorPage = (message: string) =>
  HttpServerResponse.html(
    `<!doctype html><html><head><meta charset="utf-8"><title>Sandbox sign-in</title></head>` +
      `<body><h1>Invalid OAuth2 request</h1><p>${escapeHtml(message)}</p></body></html>`
  ).pipe(HttpServerResponse.setStatus(400))

const redirectWith = (redirectUri: string, params: Record<string, string | undefined>) => {
  const url = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return HttpServerResponse.redirect(url.toString(), { status: 302, headers: { "referrer-policy": "no-referrer" } })
}

const LOOPBACK_HOST = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/i

/** Whether the authorize page may send a code to `redirectUri` (the registered callbacks only). */
export const redirectAllowed = (registered: ReadonlyArray<string> | undefined, redirectUri: string): boolean => {
  if (registered !== undefined) return registered.includes(redirectUri)
  const url = new URL(redirectUri)
  return url.protocol === "http:" && LOOPBACK_HOST.test(url.hostname) && url.username === "" && url.password === ""
}

const authorize = (store: DiscordStore) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const queryIndex = request.url.indexOf("?")
    const query = new URLSearchParams(queryIndex >= 0 ? request.url.slice(queryIndex + 1) : "")
    const now = yield* Clock.currentTimeMillis
    const redirectUri = query.get("redirect_uri")
    const state = query.get("state") ?? undefined
    if (query.get("client_id") !== SANDBOX_CLIENT_ID) return errorPage(`Unknown client_id (use "${SANDBOX_CLIENT_ID}").`)
    if (!redirectUri || !URL.canParse(redirectUri)) return errorPage("redirect_uri is missing or not an absolute URL.")
    // Like the real platform: a code goes only to a registered callback (never a redirect to anywhere else).
    if (!redirectAllowed(store.config.redirectUris, redirectUri)) {
      return errorPage(`Invalid OAuth2 redirect_uri: ${redirectUri} is not registered for ${SANDBOX_CLIENT_ID}.`)
    }
    if (query.get("response_type") !== "code") return redirectWith(redirectUri, { error: "unsupported_response_type", state })
    const challenge = query.get("code_challenge") ?? undefined
    if (challenge !== undefined && query.get("code_challenge_method") !== "S256") {
      return redirectWith(redirectUri, {
        error: "invalid_request",
        error_description: "code_challenge_method must be S256",
        state
      })
    }
    if (query.get("deny") === "1") {
      return redirectWith(redirectUri, {
        error: "access_denied",
        error_description: "The resource owner or authorization server denied the request",
        state
      })
    }
    const hint = query.get("login_hint")
    if (hint) {
      const user = findUser(hint)
      if (!user) return errorPage(`login_hint ${hint} is not a sandbox user.`)
      const code = randomToken(24)
      store.codes.set(code, {
        userId: user.id,
        clientId: SANDBOX_CLIENT_ID,
        redirectUri,
        scope: query.get("scope") ?? "identify",
        codeChallenge: challenge,
        expiresAt: now + store.config.authorizationCodeTtlSeconds * 1000
      })
      return redirectWith(redirectUri, { code, state })
    }
    const link = (extra: Record<string, string>) => {
      const next = new URLSearchParams(query)
      for (const [key, value] of Object.entries(extra)) next.set(key, value)
      return escapeHtml(`${AUTHORIZE_PATH}?${next.toString()}`)
    }
    const items = SEED.users.map((u) =>
      `<li><a href="${link({ login_hint: u.id })}">Sign in as ${escapeHtml(u.global_name)} (@${
        escapeHtml(u.username)
      }, ${u.id})</a></li>`
    ).join("")
    return HttpServerResponse.html(
      `<!doctype html><html><head><meta charset="utf-8"><title>Sandbox sign-in</title></head><body>` +
        `<h1>Sandbox chat platform</h1><p>Sign in to <b>${escapeHtml(SANDBOX_CLIENT_ID)}</b> with scopes ` +
        `<code>${escapeHtml(query.get("scope") ?? "identify")}</code> as:</p><ul>${items}</ul>` +
        `<p><a href="${link({ deny: "1" })}">Cancel (deny access)</a></p></body></html>`
    )
  })

const oauthError = (status: number, error: string, description?: string) =>
  HttpServerResponse.jsonUnsafe(
    description === undefined ? { error } : { error, error_description: description },
    { status, headers: { "cache-control": "no-store" } }
  )

/** The form body and the client's credentials (Basic header first, then form fields). */
const readForm = (ctx: DiscordContext) =>
  Effect.gen(function*() {
    const contentType = ctx.request.headers["content-type"] ?? ""
    if (!contentType.includes("application/x-www-form-urlencoded")) return undefined
    const text = yield* ctx.request.text.pipe(Effect.catch(() => Effect.succeed("")))
    return new URLSearchParams(text)
  })

const clientAuthenticated = (ctx: DiscordContext, form: URLSearchParams): boolean => {
  const header = ctx.request.headers["authorization"]
  let id = form.get("client_id")
  let secret = form.get("client_secret")
  if (header?.startsWith("Basic ")) {
    const decoded = Buffer.from(header.slice(6), "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon >= 0) {
      id = decodeURIComponent(decoded.slice(0, colon))
      secret = decodeURIComponent(decoded.slice(colon + 1))
    }
  }
  return id === SANDBOX_CLIENT_ID && secret === SANDBOX_CLIENT_SECRET
}

const token = (store: DiscordStore) => (ctx: DiscordContext) =>
  Effect.gen(function*() {
    const form = yield* readForm(ctx)
    if (!form) return oauthError(400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
    if (!clientAuthenticated(ctx, form)) return oauthError(401, "invalid_client")
    const ok = (body: unknown) => HttpServerResponse.jsonUnsafe(body, { headers: { "cache-control": "no-store" } })
    switch (form.get("grant_type")) {
      case "authorization_code": {
        const code = form.get("code") ?? ""
        const grant = store.codes.get(code)
        // One use: a code is spent by any attempt to redeem it.
        store.codes.delete(code)
        if (!grant || ctx.now >= grant.expiresAt) return oauthError(400, "invalid_grant", "Invalid \"code\" in request.")
        if (form.get("redirect_uri") !== grant.redirectUri) {
          return oauthError(400, "invalid_grant", "Invalid \"redirect_uri\" in request.")
        }
        if (grant.codeChallenge !== undefined) {
          const verifier = form.get("code_verifier")
          if (!verifier || pkceChallenge(verifier) !== grant.codeChallenge) {
            return oauthError(400, "invalid_grant", "Invalid \"code_verifier\" in request.")
          }
        }
        return ok(store.issueTokens(grant.userId, grant.scope, randomToken(12), ctx.now))
      }
      case "refresh_token": {
        const refreshToken = form.get("refresh_token") ?? ""
        const previous = store.refreshTokens.get(refreshToken)
        if (!previous) return oauthError(400, "invalid_grant", "Invalid \"refresh_token\" in request.")
        store.refreshTokens.delete(refreshToken)
        return ok(store.issueTokens(previous.userId, previous.scope, previous.grant, ctx.now))
      }
      default:
        return oauthError(400, "unsupported_grant_type")
    }
  })

const revoke = (store: DiscordStore) => (ctx: DiscordContext) =>
  Effect.gen(function*() {
    const form = yield* readForm(ctx)
    if (!form) return oauthError(400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
    if (!clientAuthenticated(ctx, form)) return oauthError(401, "invalid_client")
    const value = form.get("token") ?? ""
    // RFC 7009: revoking either token of a sign-in ends the whole grant; unknown tokens are fine.
    const grant = store.accessTokens.get(value)?.grant ?? store.refreshTokens.get(value)?.grant
    if (grant !== undefined) store.revokeGrant(grant)
    return HttpServerResponse.jsonUnsafe({})
  })

export const DiscordOAuthRoutes = Layer.unwrap(Effect.gen(function*() {
  const store = yield* DiscordState
  return Layer.mergeAll(
    sandboxRoute("GET", AUTHORIZE_PATH, authorize(store), { name: "GET /oauth2/authorize" }),
    sandboxRoute("POST", `${API}/oauth2/token`, discordHandler(store, "POST /oauth2/token", undefined, token(store)), {
      name: "POST /oauth2/token"
    }),
    sandboxRoute(
      "POST",
      `${API}/oauth2/token/revoke`,
      discordHandler(store, "POST /oauth2/token/revoke", undefined, revoke(store)),
      { name: "POST /oauth2/token/revoke" }
    )
  )
}))
