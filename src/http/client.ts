/**
 * The typed client of the gateway, derived from the same HttpApi as the server:
 *
 *   const client = yield* makeClient({ baseUrl: "http://127.0.0.1:8080", accessToken, userAgent: "my-dashboard/1.0" })
 *   const { modules } = yield* client.general.modules({ params: { appClientId, serverId } })
 *
 * Errors arrive as the domain error classes (BadRequest, Unauthorized, …) decoded from the envelope.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "./Api.ts"
import { Authorization, AuthRateLimit } from "./Middleware.ts"

export { Api }
export * from "../domain/Errors.ts"

export interface ClientOptions {
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …` on `/api` routes. */
  readonly accessToken?: string | undefined
  /** Every request must identify its client. */
  readonly userAgent: string
}

export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(Api, {
    transformClient: (client) =>
      client.pipe(HttpClient.mapRequest((request) =>
        HttpClientRequest.setHeader(HttpClientRequest.prependUrl(request, options.baseUrl), "user-agent", options.userAgent)
      ))
  }).pipe(
    Effect.provide(Layer.mergeAll(
      HttpApiMiddleware.layerClient(Authorization, ({ next, request }) =>
        next(options.accessToken === undefined ? request : HttpClientRequest.bearerToken(request, options.accessToken))),
      HttpApiMiddleware.layerClient(AuthRateLimit, ({ next, request }) => next(request)),
      FetchHttpClient.layer
    ))
  )
