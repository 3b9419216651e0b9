/**
 * The contract (../shared/spec/gateway-api.md + decisions.md) as one HttpApi: it produces the
 * server routes, the OpenAPI document, the docs page and the typed client. No server code here.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AuditLogPage, AuditLogQuery } from "../domain/AuditLog.ts"
import {
  BadRequest,
  Forbidden,
  NotFound,
  RequestTimeout,
  ServiceUnavailable,
  Unauthorized
} from "../domain/Errors.ts"
import { FeedModules, GameLookup, UserLookup } from "../domain/Feed.ts"
import { FeedStatus } from "../domain/FeedStatus.ts"
import { Form, FormInput, FormsResponse, TaskboardBoardsResponse, TaskboardOptionsResponse } from "../domain/Form.ts"
import { BotIdParam, FeedId, FormIdParam, ServerIdParam } from "../domain/Ids.ts"
import { text } from "../domain/Text.ts"
import { BotsResponse, ModulesResponse, Server, ServersResponse, User } from "../domain/Platform.ts"
import type { FeedModuleName } from "../domain/Platform.ts"
import { Success, TokenCheck, TokenResponse } from "../domain/Token.ts"
import { Authorization, AuthRateLimit, SchemaErrors } from "./Middleware.ts"

const upstream = [RequestTimeout.wire, ServiceUnavailable.wire] as const
// Path ids are canonical positive decimals: anything else is a 400 naming the parameter.
const serverParams = { appClientId: BotIdParam, serverId: ServerIdParam }
const moduleErrors = [NotFound.wire, Forbidden.wire, ...upstream] as const

// ---------------------------------------------------------------------------------------------
// /auth/idp
// ---------------------------------------------------------------------------------------------

const TokenHeaders = Schema.Struct({
  authorization: Schema.optionalKey(Schema.String),
  "x-code-verifier": Schema.optionalKey(Schema.String)
})

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.get("login", "/login", {
      query: {
        redirect_uri: Schema.optionalKey(Schema.String),
        state: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(512))),
        code_challenge: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{43}$/))),
        code_challenge_method: Schema.optionalKey(Schema.Literal("S256"))
      },
      success: HttpApiSchema.Empty(307),
      error: [BadRequest.wire, ...upstream]
    }).annotateMerge(OpenApi.annotations({
      summary: "Start a sign-in",
      description:
        "Redirects (307) to the identity provider's authorization page. `redirect_uri` must be on the allowlist (loopback URIs on any port). Sets the sign-in cookie."
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
      headers: TokenHeaders,
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
    }).annotate(OpenApi.Summary, "Create a form"),
    HttpApiEndpoint.patch("update", "/:formId", {
      params: formParams,
      payload: FormInput,
      success: Form,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotate(OpenApi.Summary, "Replace a form (omitted flags take their defaults)"),
    HttpApiEndpoint.delete("delete", "/:formId", { params: formParams, success: Success, error: moduleErrors })
      .annotate(OpenApi.Summary, "Delete a form")
  )
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/forms")
{}

// ---------------------------------------------------------------------------------------------
// Feed connectors: one group per module
// ---------------------------------------------------------------------------------------------

const userIdLookup = (m: "photo" | "streaming" | "microblog" | "video") =>
  HttpApiEndpoint.get("getUserId", "/getUserId/:userName", {
    params: { ...serverParams, userName: text(1, 200) },
    success: UserLookup,
    error: moduleErrors
  }).annotate(OpenApi.Summary, `Look up the external id of a ${m} ${m === "video" ? "channel" : "user"}`)

const gameIdLookup = HttpApiEndpoint.get("getGameId", "/getGameId/:gameName", {
  params: { ...serverParams, gameName: text(1, 200) },
  success: GameLookup,
  error: moduleErrors
}).annotate(OpenApi.Summary, "Look up the id of a game by name")

const feedEndpoints = <M extends FeedModuleName>(m: M) => {
  const s = FeedModules[m]
  const feedParams = { ...serverParams, feedId: FeedId }
  return [
    HttpApiEndpoint.get("list", "/feeds", { params: serverParams, success: s.feeds, error: moduleErrors })
      .annotate(OpenApi.Summary, `The ${m} feeds of a server`),
    HttpApiEndpoint.post("create", "/feeds", {
      params: serverParams,
      payload: s.create,
      success: s.feed,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotate(OpenApi.Summary, `Create a ${m} feed bound to a chat webhook`),
    HttpApiEndpoint.patch("update", "/feeds/:feedId", {
      params: feedParams,
      payload: s.update,
      success: s.feed,
      error: [BadRequest.wire, ...moduleErrors]
    }).annotate(OpenApi.Summary, `Replace the webhook_options of a ${m} feed`),
    HttpApiEndpoint.delete("delete", "/feeds/:feedId", { params: feedParams, success: Success, error: moduleErrors })
      .annotate(OpenApi.Summary, `Delete a ${m} feed`),
    HttpApiEndpoint.get("status", "/feeds/:feedId/status", { params: feedParams, success: FeedStatus, error: moduleErrors })
      .annotateMerge(OpenApi.annotations({
        summary: `The delivery status of a ${m} feed`,
        description:
          "`state` active, failing or disabled (with `reason`); the last and next poll of its source; the last message posted; items posted and skipped since creation. A feed never polled is active with nulls and zeros."
      }))
  ] as const
}

// Each module's routes under `{modules}/<m>`; a feed body may not carry unknown keys.
const feedParse = { errors: "all", onExcessProperty: "error" } as const

export class PhotoGroup extends HttpApiGroup.make("photo")
  .add(...feedEndpoints("photo"), userIdLookup("photo"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/photo")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
{}
export class ForumGroup extends HttpApiGroup.make("forum")
  .add(...feedEndpoints("forum"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/forum")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
{}
export class RssGroup extends HttpApiGroup.make("rss")
  .add(...feedEndpoints("rss"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/rss")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
{}
export class StreamingGroup extends HttpApiGroup.make("streaming")
  .add(...feedEndpoints("streaming"), userIdLookup("streaming"), gameIdLookup)
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/streaming")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
{}
export class MicroblogGroup extends HttpApiGroup.make("microblog")
  .add(...feedEndpoints("microblog"), userIdLookup("microblog"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/microblog")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
{}
export class VideoGroup extends HttpApiGroup.make("video")
  .add(...feedEndpoints("video"), userIdLookup("video"))
  .middleware(Authorization)
  .prefix("/api/v1/bots/:appClientId/servers/:serverId/modules/video")
  .annotate(HttpApi.PayloadParseOptions, feedParse)
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
{}

/** What a `ROLE=worker` process serves: the probes only (no /api, /auth or /docs). */
export class WorkerApi extends HttpApi.make("gateway").add(OpsGroup) {}

export class Api extends HttpApi.make("gateway")
  .add(AuthGroup)
  .add(GeneralGroup)
  .add(FormsGroup)
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
    version: "1.0.0",
    description:
      "Configure the modules of chat-platform bots on the servers you manage. Every non-2xx answer is the error envelope `{\"errors\":[{\"code\",\"message\",\"additionalProperties\"?}]}`. Every request carries a `User-Agent`."
  }))
{}

