/** HttpApi middleware services of the contract (no server code here: the client imports this file). */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, ServiceUnavailable, TooManyRequests, Unauthorized, UnprocessableContent } from "../../domain/infra/Errors.ts"
import { CurrentPrincipal } from "../../domain/auth/Principal.ts"

// `http({ scheme: "bearer" })`, not `HttpApiSecurity.bearer` ("Bearer"): the document's scheme must be the
// lower-case token OpenAPI tools match (Scalar draws its token box only for `bearer`); the server
// compares schemes case-insensitively either way.
const bearerDoc = HttpApiSecurity.http({ scheme: "bearer" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "`Authorization: Bearer <access_token>`. The same token is accepted bare (`authorizationBare`) and in `X-Access-Token` (`accessToken`, `accessTokenBearer`)."
  )
)
const accessTokenDoc = HttpApiSecurity.apiKey({ key: "X-Access-Token", in: "header" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "`X-Access-Token: <access_token>`."
  )
)

/**
 * Every `/api` request: resolves the access token (four equivalent header forms, parsed in
 * domain/auth/AccessToken.ts), counts the request against the user's rate limit, provides the principal.
 */
export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: CurrentPrincipal }>()(
  "gateway/Authorization",
  {
    error: [Unauthorized.wire, TooManyRequests.wire, ServiceUnavailable.wire],
    security: { bearer: bearerDoc, accessToken: accessTokenDoc },
    requiredForClient: true
  }
) {}

/** Turns request decoding failures into a 400 envelope with one element and path per problem. */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("gateway/SchemaErrors", {
  error: BadRequest.wire
}) {}

/**
 * Safe retries of POST, PATCH and DELETE (`Idempotency-Key`, http/edge/IdempotencyLive.ts): runs inside
 * Authorization (the key is the signed-in user's). 400 for an ill-formed key, 409 while the key's
 * first request runs, 422 for the key of another request. Nothing for the client to add.
 */
export class Idempotency extends HttpApiMiddleware.Service<Idempotency, { requires: CurrentPrincipal }>()("gateway/Idempotency", {
  error: [BadRequest.wire, Conflict.wire, UnprocessableContent.wire, ServiceUnavailable.wire]
}) {}

/** Counts `/auth` requests per token family (a valid gateway token) or client address (decisions.md: 120 per hour). */
export class AuthRateLimit extends HttpApiMiddleware.Service<AuthRateLimit>()("gateway/AuthRateLimit", {
  error: [TooManyRequests.wire, ServiceUnavailable.wire]
}) {}

export { CurrentPrincipal }
export type { Principal } from "../../domain/auth/Principal.ts"
