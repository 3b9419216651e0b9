/**
 * The typed client of the gateway, derived from the same HttpApi as the server. Published as the
 * `@bot-module-gateway/client` package (packages/client compiles this file and what it imports):
 *
 *   const client = yield* makeClient({ baseUrl: "http://127.0.0.1:8080", accessToken, userAgent: "my-dashboard/1.0" })
 *   const { modules } = yield* client.general.modules({ params: { appClientId: BotId.make(bot), serverId: ServerId.make(server) } })
 *
 * Errors arrive as the domain error classes (BadRequest, Unauthorized, …) decoded from the envelope.
 * Only `effect` may be imported here and in the files it reaches (src/http/contract/Api.ts, Middleware.ts,
 * src/domain/*): the package depends on nothing else.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "./contract/Api.ts"
import { Authorization, AuthRateLimit } from "./contract/Middleware.ts"
import { retrying, withIdempotencyKey } from "./contract/ClientRetry.ts"
import type { RetryOptions } from "./contract/ClientRetry.ts"

// The contract, its resources' schemas, the branded id constructors and the error classes.
export { Api }
export { Authorization, AuthRateLimit, Idempotency, SchemaErrors } from "./contract/Middleware.ts"
export type { RetryOptions } from "./contract/ClientRetry.ts"
export * from "../domain/audit/AuditLog.ts"
export * from "../domain/infra/Errors.ts"
export * from "../domain/feeds/Feed.ts"
export * from "../domain/feeds/FeedStatus.ts"
export * from "../domain/forms/Form.ts"
export { issueProblems } from "../domain/forms/FormProblems.ts"
export * from "../domain/insight/FeedInsight.ts"
export * from "../domain/infra/Ids.ts"
export * from "../domain/platform/Platform.ts"
export * from "../domain/auth/Token.ts"
export * from "../domain/submissions/Submission.ts"

export interface ClientOptions {
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …` on `/api` routes. */
  readonly accessToken?: string | undefined
  /** Every request must identify its client. */
  readonly userAgent: string
  /**
   * Retries (ClientRetry.ts): each write under /api/ carries a fresh Idempotency-Key and is sent
   * again with it after a connection reset or a 503 (Retry-After honoured). Default 3 attempts.
   */
  readonly retry?: RetryOptions | undefined
}

/** The client of every route, grouped as the API is (`client.auth`, `client.general`, `client.forms`, `client.rss`, …). */
export type Client = HttpApiClient.ForApi<typeof Api>

export const makeClient = (options: ClientOptions): Effect.Effect<Client> =>
  HttpApiClient.make(Api, {
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest((request) =>
          withIdempotencyKey(HttpClientRequest.setHeader(HttpClientRequest.prependUrl(request, options.baseUrl), "user-agent", options.userAgent))
        ),
        retrying(options.retry)
      )
  }).pipe(
    Effect.provide(Layer.mergeAll(
      HttpApiMiddleware.layerClient(Authorization, ({ next, request }) =>
        next(options.accessToken === undefined ? request : HttpClientRequest.bearerToken(request, options.accessToken))),
      HttpApiMiddleware.layerClient(AuthRateLimit, ({ next, request }) => next(request)),
      FetchHttpClient.layer
    ))
  )
