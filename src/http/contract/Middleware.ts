/** HttpApi middleware services of the contract (no server code here: the client imports this file). */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { BadRequest, ServiceUnavailable, TooManyRequests, Unauthorized } from "../../domain/infra/Errors.ts"
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

/** Counts `/auth` requests per token family (a valid gateway token) or client address (decisions.md: 120 per hour). */
export class AuthRateLimit extends HttpApiMiddleware.Service<AuthRateLimit>()("gateway/AuthRateLimit", {
  error: [TooManyRequests.wire, ServiceUnavailable.wire]
}) {}

export { CurrentPrincipal }
export type { Principal } from "../../domain/auth/Principal.ts"
