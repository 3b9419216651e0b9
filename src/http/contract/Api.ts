/**
 * The contract (../shared/spec/gateway-api.md + decisions.md) as one HttpApi: it produces the
 * server routes, the OpenAPI document, the docs page and the typed client. No server code here.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AuditLogPage, AuditLogQuery } from "../../domain/audit/AuditLog.ts"
import { BadRequest, ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import { Form, FormInput, FormsResponse, TaskboardBoardsResponse, TaskboardOptionsResponse } from "../../domain/forms/Form.ts"
import { BotIdParam, FormIdParam } from "../../domain/infra/Ids.ts"
import { BotsResponse, ModulesResponse, Server, ServersResponse, User } from "../../domain/platform/Platform.ts"
import { Success, TokenCheck, TokenResponse } from "../../domain/auth/Token.ts"
import { Authorization, AuthRateLimit, Idempotency, SchemaErrors } from "./Middleware.ts"
import { bodyExample, formExample } from "./Examples.ts"

import { moduleErrors, serverParams, upstream } from "./ApiParams.ts"
import { ForumGroup, MicroblogGroup, PhotoGroup, RssGroup, StreamingGroup, VideoGroup } from "./FeedsApi.ts"
import { SubmissionsGroup } from "./SubmissionsApi.ts"

export { ForumGroup, MicroblogGroup, PhotoGroup, RssGroup, StreamingGroup, SubmissionsGroup, VideoGroup }


// ---------------------------------------------------------------------------------------------
// /auth/idp
// ---------------------------------------------------------------------------------------------

// `authorization` is documented as the `authToken` security scheme (http/contract/OpenApiDocument.ts).
const TokenHeaders = Schema.Struct({ authorization: Schema.optionalKey(Schema.String) })
const ExchangeHeaders = Schema.Struct({
  authorization: Schema.optionalKey(Schema.String),
  "x-code-verifier": Schema.optionalKey(Schema.String)
})

/**
 * The login's query is taken as sent and checked by the sign-in service (services/auth/AuthSignIn.ts),
 * every parameter together with `redirect_uri`'s allowlist in one 400 that names each (decisions.md
 * "Errors"): a schema here would answer its first failure alone. The document states the rules the
 * service checks (`maxLength` counts code points in JSON Schema, as the service does).
 */
const LOGIN_RULES: Record<string, Record<string, unknown>> = {
  state: { maxLength: 512 },
  code_challenge: { pattern: "^[A-Za-z0-9_-]{43}$" },
  code_challenge_method: { enum: ["S256"] }
}
const documentLoginRules = OpenApi.Transform.of((op) => {
  for (const p of op.parameters ?? []) {
    if (p.in === "query" && LOGIN_RULES[p.name] !== undefined) p.schema = { ...p.schema, ...LOGIN_RULES[p.name] }
  }
  return op
})

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.get("login", "/login", {
      query: {
        redirect_uri: Schema.optionalKey(Schema.String),
        state: Schema.optionalKey(Schema.String),
        code_challenge: Schema.optionalKey(Schema.String),
        code_challenge_method: Schema.optionalKey(Schema.String)
      },
      success: HttpApiSchema.Empty(307),
      error: [BadRequest.wire, ...upstream]
    }).annotateMerge(OpenApi.annotations({
      summary: "Start a sign-in",
      description:
        "Redirects (307) to the identity provider's authorization page (open it in a browser). `redirect_uri` must be on the allowlist (loopback URIs on any port). Sets the sign-in cookie.",
      transform: documentLoginRules
    })),
    HttpApiEndpoint.get("callback", "/callback", {
      query: {
        code: Schema.optionalKey(Schema.String),
        state: Schema.optionalKey(Schema.String),
        error: Schema.optionalKey(Schema.String),
        error_description: Schema.optionalKey(Schema.String)
      },
      success: HttpApiSchema.Empty(302),
      error: [BadRequest.wire, ...upstream]
    }).annotateMerge(OpenApi.annotations({
      summary: "Identity provider callback",
      description: "Called by the identity provider. Redirects (302) to the client's redirect_uri with `code` and `state`, or with `error`."
    })),
    HttpApiEndpoint.post("token", "/token", {
      headers: ExchangeHeaders,
      success: TokenResponse,
      error: [Unauthorized.wire, ...upstream]
    }).annotateMerge(OpenApi.annotations({
      summary: "Exchange the temporary token for an access and a refresh token",
      description: "`Authorization: <temporary_token>`; `X-Code-Verifier` when the login used PKCE."
    })),
    HttpApiEndpoint.post("check", "/token/check", {
      headers: TokenHeaders,
      success: TokenCheck,
      error: [Unauthorized.wire, ServiceUnavailable.wire]
    }).annotate(OpenApi.Summary, "Report the time left on an access token"),
    HttpApiEndpoint.post("refresh", "/token/refresh", {
      headers: Schema.Struct({ "x-refresh-token": Schema.optionalKey(Schema.String) }),
      success: TokenResponse,
      error: [Unauthorized.wire, ServiceUnavailable.wire]
    }).annotate(OpenApi.Summary, "Rotate: a new access token and refresh token for a refresh token"),
    HttpApiEndpoint.post("revoke", "/token/revoke", {
      headers: TokenHeaders,
      success: Success,
      error: [ServiceUnavailable.wire]
    }).annotate(OpenApi.Summary, "Revoke an access token and its refresh token")
  )
  .middleware(AuthRateLimit)
  .prefix("/auth/idp")
  .annotate(OpenApi.Description, "Sign-in and the token lifecycle. Rate limit: 120 per hour, counted per token family for a valid gateway token, else per client address.")
{}

// ---------------------------------------------------------------------------------------------
// /api/v1 general
// ---------------------------------------------------------------------------------------------

export class GeneralGroup extends HttpApiGroup.make("general")
  .add(
    HttpApiEndpoint.get("user", "/user", { success: User, error: moduleErrors })
      .annotate(OpenApi.Summary, "The signed-in user"),
    HttpApiEndpoint.get("bots", "/bots", { success: BotsResponse, error: [...upstream] })
      .annotate(OpenApi.Summary, "The available bots"),
    HttpApiEndpoint.get("servers", "/bots/:appClientId/servers", {
      params: { appClientId: BotIdParam },
      success: ServersResponse,
      error: moduleErrors
    }).annotate(OpenApi.Summary, "The servers of a bot that the user may manage"),
    HttpApiEndpoint.get("server", "/bots/:appClientId/servers/:serverId", {
      params: serverParams,
      success: Server,
      error: moduleErrors
    }).annotate(OpenApi.Summary, "One server, with its channels and roles"),
    HttpApiEndpoint.get("modules", "/bots/:appClientId/servers/:serverId/modules", {
      params: serverParams,
      success: ModulesResponse,
      error: moduleErrors
    }).annotate(OpenApi.Summary, "The modules of a server, with the user's availability"),
    HttpApiEndpoint.get("logs", "/bots/:appClientId/servers/:serverId/logs", {
      params: serverParams,
      query: AuditLogQuery,
      success: AuditLogPage,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "The audit log of a server",
      description:
        "Newest first. Needs VIEW_AUDIT_LOG. `start`/`end`: ISO 8601 or Unix seconds (13+ digits: milliseconds). `page_size` 1–100 (default 10), `page` ≥ 1 (default 1)."
    }))
  )
  .middleware(Authorization)
  .prefix("/api/v1")
  .annotate(OpenApi.Description, "The signed-in user, the bots, their servers and a server's modules and audit log.")
{}

// ---------------------------------------------------------------------------------------------
// Forms
// ---------------------------------------------------------------------------------------------

const formParams = { ...serverParams, formId: FormIdParam }

export class FormsGroup extends HttpApiGroup.make("forms")
  .add(
    HttpApiEndpoint.get("taskboardOptions", "/taskboardOptions", {
      params: serverParams,
      success: TaskboardOptionsResponse,
      error: moduleErrors
    }).annotate(OpenApi.Summary, "The task-board option values"),
    HttpApiEndpoint.get("taskboardBoards", "/taskboardBoards", {
      params: serverParams,
      success: TaskboardBoardsResponse,
      error: moduleErrors
    }).annotate(OpenApi.Summary, "The task boards of the server's paired team (0 first), or only -1"),
    HttpApiEndpoint.get("list", "/", { params: serverParams, success: FormsResponse, error: moduleErrors })
      .annotate(OpenApi.Summary, "The forms of a server"),
    HttpApiEndpoint.get("template", "/new", { params: serverParams, success: Form, error: moduleErrors })
      .annotate(OpenApi.Summary, "A new-form template with the contract's defaults"),
    HttpApiEndpoint.get("get", "/:formId", { params: formParams, success: Form, error: moduleErrors })
      .annotate(OpenApi.Summary, "One form (audited as GET)"),
    HttpApiEndpoint.post("create", "/", {
      params: serverParams,
      payload: FormInput,
      success: Form,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotate(OpenApi.Summary, "Create a form").annotate(OpenApi.Transform, bodyExample(formExample)).middleware(Idempotency),
    HttpApiEndpoint.patch("update", "/:formId", {
      params: formParams,
      payload: FormInput,
      success: Form,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotate(OpenApi.Summary, "Replace a form (omitted flags take their defaults)")
      .annotate(OpenApi.Transform, bodyExample(formExample)).middleware(Idempotency),
    HttpApiEndpoint.delete("delete", "/:formId", { params: formParams, success: Success, error: moduleErrors })
      .annotate(OpenApi.Summary, "Delete a form").middleware(Idempotency)
  )
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/forms")
  .annotate(OpenApi.Description, "The forms module: forms with their steps, and the task-board options of the server's paired team.")
{}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

export class OpsGroup extends HttpApiGroup.make("ops", { topLevel: true })
  .add(
    HttpApiEndpoint.get("healthz", "/healthz", { success: Schema.Struct({ status: Schema.Literal("ok") }) })
      .annotate(OpenApi.Summary, "Liveness"),
    HttpApiEndpoint.get("readyz", "/readyz", {
      success: Schema.Struct({ status: Schema.Literal("ready") }),
      error: ServiceUnavailable.wire
    }).annotate(OpenApi.Summary, "Readiness: the database and the job engine answer")
  )
  .annotate(OpenApi.Description, "Probes for orchestrators: no token, not rate limited.")
{}

/** What a `ROLE=worker` process serves: the probes only (no /api, /auth or /docs). */
export class WorkerApi extends HttpApi.make("gateway").add(OpsGroup) {}

export class Api extends HttpApi.make("gateway")
  .add(AuthGroup)
  .add(GeneralGroup)
  .add(FormsGroup)
  .add(SubmissionsGroup)
  .add(PhotoGroup)
  .add(ForumGroup)
  .add(RssGroup)
  .add(StreamingGroup)
  .add(MicroblogGroup)
  .add(VideoGroup)
  .add(OpsGroup)
  .middleware(SchemaErrors)
  .annotate(HttpApi.PayloadParseOptions, { errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "Bot Module Configuration Gateway",
    description:
      "Configure the modules of chat-platform bots on the servers you manage. Every non-2xx answer is the error envelope `{\"errors\":[{\"code\",\"message\",\"additionalProperties\"?}]}`. Every request carries a `User-Agent`."
  }))
{}

