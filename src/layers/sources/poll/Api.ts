/**
 * What the platform connectors share: JSON bodies decoded with a schema (a body of the wrong shape
 * is `unreadable`), and app tokens (OAuth client credentials) through the lookup clients' token
 * cache (layers/sources/AppToken.ts: kept until shortly before expiry, renewed once on a 401).
 */
import { Effect, Schema } from "effect"
import type { HttpClientRequest } from "effect/http"
import { RequestTimeout, ServiceUnavailable } from "../../../domain/infra/Errors.ts"
import { PollFailed } from "../../../services/sources/SourcePoller.ts"
import { makeAppToken, type Token } from "../AppToken.ts"
import { failed, type Fetched, type Fetcher, json } from "./Fetch.ts"
import { RETRY_AFTER_SECONDS } from "../Upstream.ts"

/** Decodes a JSON answer; anything else means the platform is not behaving as documented. */
export const decodeJson = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, name: string) => {
  const run = Schema.decodeUnknownOption(schema)
  return (fetched: Fetched): Effect.Effect<S["Type"], PollFailed> => {
    const decoded = run(json(fetched))
    return decoded._tag === "Some"
      ? Effect.succeed(decoded.value)
      : Effect.fail(failed("unreadable", `${name} answered something the gateway cannot read (${fetched.status}).`, { status: fetched.status }))
  }
}

// AppToken.ts speaks the API's errors; a poll speaks PollFailed. These carry one into the other.
const toUpstream = (e: PollFailed): RequestTimeout | ServiceUnavailable =>
  e.kind === "timeout" ? RequestTimeout.of(e.message) : ServiceUnavailable.of(e.message, e.retryAfterSeconds ?? RETRY_AFTER_SECONDS)
const toPoll = (e: PollFailed | RequestTimeout | ServiceUnavailable): PollFailed => {
  if (e instanceof PollFailed) return e
  const problem = e.problems[0]
  const retry = (problem?.additionalProperties as { readonly retry_after?: unknown } | undefined)?.retry_after
  return failed(e._tag === "RequestTimeout" ? "timeout" : "http", problem?.message ?? "The source failed.", {
    retryAfterSeconds: typeof retry === "number" ? retry : undefined
  })
}

const TokenBody = Schema.Struct({ access_token: Schema.String, expires_in: Schema.Number })

/**
 * An app token from `request` (the platform's token endpoint), and `authed`: a request sent with
 * it, sent once more with a fresh token when the platform answers 401.
 */
export const makeTokenClient = (fetcher: Fetcher, name: string, request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function*() {
    const decode = decodeJson(TokenBody, name)
    const token = yield* makeAppToken(
      fetcher.fetch({ request, name }).pipe(
        Effect.flatMap((f) =>
          f.status === 200
            ? decode(f)
            : Effect.fail(failed("http", `${name} refused to issue the gateway an app token (${f.status}); check its client id and secret.`, { status: f.status }))
        ),
        Effect.map((t): Token => ({ accessToken: t.access_token, expiresInSeconds: t.expires_in })),
        Effect.mapError(toUpstream)
      )
    )

    const authed = (build: (accessToken: string) => Parameters<Fetcher["fetch"]>[0]): Effect.Effect<Fetched, PollFailed> =>
      Effect.suspend(() => {
        // withToken answers with its own Answer type; the full answer (bytes, final URL) is kept here.
        let last: Fetched | undefined
        return token.withToken((accessToken) =>
          fetcher.fetch(build(accessToken)).pipe(
            Effect.map((f) => {
              last = f
              return { status: f.status, headers: f.headers, body: undefined }
            })
          )
        ).pipe(
          Effect.mapError(toPoll),
          Effect.flatMap(() => last === undefined ? Effect.die(new Error("withToken answered without a request")) : Effect.succeed(last))
        )
      })

    return { authed }
  })

/** 401 after a fresh token, or 403 on the gateway's own key: the operator must fix the credentials. */
export const credentialsRefused = (name: string, status: number) =>
  failed("http", `${name} refused the gateway's credentials (${status}); the operator must check them.`, { status })
