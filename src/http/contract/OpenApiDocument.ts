/**
 * The served OpenAPI document: the contract (Api.ts) plus what only the server knows (its public
 * URL, the package version) and the answers every route shares, which the gateway's edge produces
 * outside the HttpApi (http/edge/Envelope.ts, http/edge/RateLimit.ts): 413/415/500, `default`, and the
 * response headers. Applied as an `OpenApi.Transform` annotation; the client bundle never loads this.
 */
import { OpenApi } from "effect/http-api"
import { Api } from "./Api.ts"

import { VERSION } from "../../domain/infra/Version.ts"
import { idempotencyKeyParameter } from "../../domain/infra/IdempotencyKey.ts"
export { VERSION }

type Json = Record<string, any>

const envelope = { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } }
const header = (name: string) => ({ $ref: `#/components/headers/${name}` })

const HEADERS: Json = {
  "X-Request-Id": {
    description: "The request's id (the caller's `X-Request-Id` when it is 1–128 safe characters, else a new UUID); also in the access log.",
    schema: { type: "string" }
  },
  "WWW-Authenticate": { description: "`Bearer error=\"invalid_token\"`.", schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } },
  RateLimit: {
    description: "What is left of the caller's quota (IETF draft-ietf-httpapi-ratelimit-headers): `\"<policy>\";r=<remaining>;t=<seconds to reset>`.",
    schema: { type: "string" }
  },
  "RateLimit-Policy": {
    description: "The quota that applies: `\"<policy>\";q=<limit>;w=<window seconds>` (`api` per user per minute, `auth` per hour).",
    schema: { type: "string" }
  }
}

const SHARED_RESPONSES: Record<string, { readonly description: string; readonly methods?: ReadonlyArray<string> }> = {
  "413": { description: "The body is over the size limit.", methods: ["post", "patch", "put"] },
  "415": { description: "The body is not JSON.", methods: ["post", "patch", "put"] },
  "500": { description: "An unexpected failure (logged with the request id; no internals in the answer)." },
  default: { description: "Any other answer (405, 408, 431, …): the error envelope with the status's reason phrase as `code`." }
}

/** `X_1` identical to `X` (the same schema reached twice): one name, every `$ref` rewritten. */
const dedupeSchemas = (spec: Json) => {
  const schemas: Json = spec.components.schemas
  const renames = new Map<string, string>()
  for (const key of Object.keys(schemas)) {
    const m = /^(.+)_(\d+)$/.exec(key)
    if (m !== null && schemas[m[1]!] !== undefined && JSON.stringify(schemas[key]) === JSON.stringify(schemas[m[1]!])) {
      renames.set(`#/components/schemas/${key}`, `#/components/schemas/${m[1]}`)
      delete schemas[key]
    }
  }
  if (renames.size === 0) return spec
  return JSON.parse(JSON.stringify(spec), (k, v) => (k === "$ref" && renames.has(v) ? renames.get(v) : v))
}

/** `anyOf` of one schema → that schema; `anyOf` with `{}` (anything) → `{}`. */
const simplifyComposition = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(simplifyComposition)
  if (node === null || typeof node !== "object") return
  const o = node as Json
  for (const v of Object.values(o)) simplifyComposition(v)
  if (Array.isArray(o.anyOf)) {
    if (o.anyOf.some((s: unknown) => s !== null && typeof s === "object" && Object.keys(s).length === 0)) {
      delete o.anyOf
    } else if (o.anyOf.length === 1 && Object.keys(o.anyOf[0]).every((k) => !(k in o) || k === "anyOf")) {
      const [only] = o.anyOf
      delete o.anyOf
      Object.assign(o, only)
    }
  }
}

const addHeaders = (response: Json, names: ReadonlyArray<string>) => {
  response.headers ??= {}
  for (const name of names) response.headers[name] ??= header(name)
}

const rateLimited = (path: string) => path.startsWith("/api/") || path.startsWith("/auth/")

/** The `/auth` tokens travel in `Authorization` too: a security scheme, not an ignored header parameter. */
const TOKEN_SCHEME = {
  type: "http",
  scheme: "bearer",
  description:
    "`Authorization: <token>` (`Bearer ` optional): the temporary token for POST /auth/idp/token, an access token for /token/check and /token/revoke."
}

/**
 * The four header forms of an `/api` access token (domain/auth/AccessToken.ts), each a scheme, so a
 * validating proxy admits every one: the middleware declares `bearer` and `accessToken`; these are
 * the bare Authorization value and X-Access-Token's `Bearer ` spelling (an apiKey scheme on the same
 * header: OpenAPI cannot describe a value's prefix).
 */
const API_TOKEN_SCHEMES = {
  authorizationBare: { type: "apiKey", name: "Authorization", in: "header", description: "`Authorization: <access_token>` (without `Bearer `)." },
  accessTokenBearer: { type: "apiKey", name: "X-Access-Token", in: "header", description: "`X-Access-Token: Bearer <access_token>`." }
}
const API_TOKEN_SECURITY = [{ bearer: [] }, { authorizationBare: [] }, { accessToken: [] }, { accessTokenBearer: [] }]

export const tidy = (spec: Json, options: { readonly publicUrl: string; readonly version: string }): Json => {
  spec.info.version = options.version
  spec.info.license = { name: "MIT", identifier: "MIT" }
  spec.servers = [{ url: options.publicUrl.replace(/\/+$/, ""), description: "This gateway (PUBLIC_URL)" }]
  spec.components.headers = { ...spec.components.headers, ...HEADERS }
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (typeof op !== "object" || op === null || !("responses" in op)) continue
      const params: Array<Json> = op.parameters ?? []
      // Every write of /api/v1 takes an Idempotency-Key (http/edge/IdempotencyLive.ts).
      if (path.startsWith("/api/v1/") && ["post", "patch", "delete"].includes(method)) {
        op.parameters = params
        params.push({ ...idempotencyKeyParameter })
      }
      if (params.some((p) => p.in === "header" && p.name.toLowerCase() === "authorization")) {
        op.parameters = params.filter((p) => !(p.in === "header" && p.name.toLowerCase() === "authorization"))
        spec.components.securitySchemes.authToken ??= TOKEN_SCHEME
        op.security = [{ authToken: [] }]
      }
      if (Array.isArray(op.security) && op.security.some((s: Json) => "bearer" in s)) {
        Object.assign(spec.components.securitySchemes, API_TOKEN_SCHEMES)
        op.security = API_TOKEN_SECURITY
      }
      for (const [status, shared] of Object.entries(SHARED_RESPONSES)) {
        if (shared.methods !== undefined && !shared.methods.includes(method)) continue
        op.responses[status] ??= { description: shared.description, content: envelope }
      }
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const names = ["X-Request-Id"]
        if (status === "401") names.push("WWW-Authenticate")
        if (status === "429" || status === "503") names.push("Retry-After")
        if (rateLimited(path) && (status.startsWith("2") || status === "429")) names.push("RateLimit", "RateLimit-Policy")
        addHeaders(response, names)
      }
    }
  }
  simplifyComposition(spec.components.schemas)
  return dedupeSchemas(spec)
}

/** The contract as served at /openapi.json and on /docs, for a gateway reached at `publicUrl`. */
export const documentedApi = (publicUrl: string) =>
  Api.annotate(OpenApi.Transform, (spec) => tidy(spec, { publicUrl, version: VERSION }))
