/**
 * The typed client of the gateway, derived from the same HttpApi as the server. Published as the
 * `@bot-module-gateway/client` package (packages/client compiles this file and what it imports):
 *
 *   const client = yield* makeClient({ baseUrl: "http://127.0.0.1:8080", accessToken, userAgent: "my-dashboard/1.0" })
 *   const { modules } = yield* client.general.modules({ params: { appClientId: BotId.make(bot), serverId: ServerId.make(server) } })
 *
 * Errors arrive as the domain error classes (BadRequest, Unauthorized, …) decoded from the envelope.
 * Only `effect` may be imported here and in the files it reaches (src/http/Api.ts, Middleware.ts,
 * src/domain/*): the package depends on nothing else.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "./Api.ts"
import { Authorization, AuthRateLimit } from "./Middleware.ts"
import { retrying, withIdempotencyKey } from "./ClientRetry.ts"
import type { RetryOptions } from "./ClientRetry.ts"

// The contract, its resources' schemas, the branded id constructors and the error classes.
export { Api }
export { Authorization, AuthRateLimit, Idempotency, SchemaErrors } from "./Middleware.ts"
export type { RetryOptions } from "./ClientRetry.ts"
export * from "../domain/AuditLog.ts"
export * from "../domain/Errors.ts"
export * from "../domain/Feed.ts"
export * from "../domain/FeedStatus.ts"
export * from "../domain/Form.ts"
export * from "../domain/Ids.ts"
export * from "../domain/Platform.ts"
export * from "../domain/Token.ts"

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
