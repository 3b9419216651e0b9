/**
 * The Discord client's REST pipeline (tim-smart/dfx's DiscordREST plays the same part): a `Call`
 * becomes one request (auth header, or the OAuth client's Basic auth and a form, or a JSON body),
 * sent under Discord's rate limits (DiscordRateLimits.ts) with a per-attempt timeout, and its answer
 * decoded. A GET is retried after a 5xx or a network failure, with jittered backoff, within the
 * call's wait budget; a refusal (4xx) is the caller's `PlatformRejected`, anything else a 503.
 */
import { Clock, Duration, Effect, Exit, Random, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { RequestTimeout, ServiceUnavailable } from "../../../domain/infra/Errors.ts"
import { VERSION } from "../../../domain/infra/Version.ts"
import type { PlatformError } from "../../../services/platform/ChatPlatform.ts"
import { PlatformRejected } from "../../../services/platform/ChatPlatform.ts"
import type { Answer, RouteTarget } from "./DiscordRateLimits.ts"
import { DiscordRateLimits, tokenHash } from "./DiscordRateLimits.ts"
import { ErrorBody } from "./DiscordSchemas.ts"

export interface DiscordRestOptions {
  /** Default `https://discord.com/api/v10`. */
  readonly baseUrl?: string | undefined
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** Default `DiscordBot (https://github.com/bot-module-gateway/bot-module-gateway, <version>)`. */
  readonly userAgent?: string | undefined
  /** Per attempt, including reading the body. Default 10 s. */
  readonly timeout?: Duration.Input | undefined
  /** Retries of a GET after a 5xx or a network failure. Default 2. */
  readonly readRetries?: number | undefined
  /** First backoff of those retries (doubled each time, jittered). Default 200 ms. */
  readonly retryBaseDelay?: Duration.Input | undefined
}

export const defaultUserAgent = `DiscordBot (https://github.com/bot-module-gateway/bot-module-gateway, ${VERSION})`

export type Auth =
  | { readonly _tag: "Bot" | "Bearer"; readonly token: Redacted.Redacted<string> }
  | { readonly _tag: "None" }

export interface Call {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly target: RouteTarget
  readonly auth: Auth
  /** Sent with the OAuth client's Basic auth (the token endpoints). */
  readonly form?: Record<string, string> | undefined
  readonly json?: unknown
  /** With `json`: files sent beside it as multipart (`payload_json`, `files[n]`), as the platform takes attachments. */
  readonly files?: ReadonlyArray<{ readonly filename: string; readonly content: string }> | undefined
  /** The path shows a secret: keep the request out of traces. */
  readonly secretPath?: boolean | undefined
}

/** The rate-limit identity of a call: never the raw token. */
export const identityOf = (auth: Auth): string =>
  auth._tag === "None" ? "anon" : `${auth._tag === "Bot" ? "bot" : "user"}:${tokenHash(Redacted.value(auth.token))}`

export interface DiscordRest {
  /** Sends a call under the rate limits, retrying a GET after a 5xx or network failure. */
  readonly request: <A>(call: Call, schema: Schema.ConstraintDecoder<A>) => Effect.Effect<A, PlatformError>
}

/** Needs `DiscordRateLimits` and an `HttpClient`. */
export const makeDiscordRest = Effect.fnUntraced(function*(options: DiscordRestOptions) {
  const limits = yield* DiscordRateLimits
  const http = yield* HttpClient.HttpClient
  const baseUrl = (options.baseUrl ?? "https://discord.com/api/v10").replace(/\/+$/, "")
  const userAgent = options.userAgent ?? defaultUserAgent
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "10 seconds")
  const readRetries = Math.max(0, options.readRetries ?? 2)
  const retryBaseMs = Duration.toMillis(Duration.fromInputUnsafe(options.retryBaseDelay ?? "200 millis"))

  /** One attempt: send and read the whole body within the timeout. */
  const sendOnce = (call: Call): Effect.Effect<Answer, RequestTimeout | "unreachable"> => {
    let request = HttpClientRequest.make(call.method)(`${baseUrl}${call.path}`).pipe(
      HttpClientRequest.setHeader("User-Agent", userAgent),
      HttpClientRequest.acceptJson
    )
    if (call.auth._tag !== "None") {
      request = HttpClientRequest.setHeader(request, "Authorization", `${call.auth._tag} ${Redacted.value(call.auth.token)}`)
    }
    if (call.form !== undefined) {
      request = HttpClientRequest.basicAuth(request, options.clientId, options.clientSecret).pipe(
        HttpClientRequest.bodyUrlParams(call.form)
      )
    } else if (call.files !== undefined && call.files.length > 0) {
      const data = new FormData()
      data.append("payload_json", JSON.stringify(call.json ?? {}))
      call.files.forEach((f, i) => data.append(`files[${i}]`, new Blob([f.content], { type: "text/plain; charset=utf-8" }), f.filename))
      request = HttpClientRequest.bodyFormData(request, data)
    } else if (call.json !== undefined) {
      request = HttpClientRequest.bodyJsonUnsafe(request, call.json)
    }
    return http.execute(request).pipe(
      Effect.flatMap((response) =>
        Effect.map(response.text, (body): Answer => ({ status: response.status, headers: response.headers, body }))
      ),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(RequestTimeout.of(`The chat platform did not answer within ${Duration.format(timeout)}.`))
      }),
      Effect.catchTag("HttpClientError", (error) =>
        Effect.logWarning("Chat platform unreachable").pipe(
          Effect.annotateLogs({ route: call.target.route, reason: error.reason._tag }),
          Effect.andThen(Effect.fail("unreachable" as const))
        )),
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.provideService(HttpClient.TracerDisabledWhen, () => call.secretPath === true)
    )
  }

  const rejected = (answer: Answer): PlatformRejected => {
    const parsed = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))(answer.body)
    const body = parsed._tag === "Some" ? parsed.value : {}
    const message = body.message ?? body.error_description ?? body.error ?? `HTTP ${answer.status}`
    return body.code === undefined
      ? new PlatformRejected({ status: answer.status, message })
      : new PlatformRejected({ status: answer.status, message, code: body.code })
  }

  const unavailable = (call: Call, why: string) =>
    ServiceUnavailable.of(`The chat platform is unavailable (${why}); try again shortly.`, 5).pipe((e) =>
      Effect.logWarning("Chat platform call failed").pipe(
        Effect.annotateLogs({ route: call.target.route, why }),
        Effect.andThen(Effect.fail(e))
      )
    )

  const request = <A>(call: Call, schema: Schema.ConstraintDecoder<A>): Effect.Effect<A, PlatformError> =>
    Effect.gen(function*() {
      const deadline = yield* limits.deadline
      const retries = call.method === "GET" ? readRetries : 0
      for (let attempt = 0; ; attempt++) {
        const result = yield* Effect.result(limits.run(call.target, sendOnce(call), deadline))
        let why: string
        if (result._tag === "Success") {
          const answer = result.success
          if (answer.status >= 200 && answer.status < 300) {
            const decoded = Schema.decodeUnknownExit(Schema.fromJsonString(schema))(answer.body === "" ? "null" : answer.body)
            if (Exit.isSuccess(decoded)) return decoded.value
            return yield* unavailable(call, "unexpected answer shape")
          }
          if (answer.status < 500) return yield* Effect.fail(rejected(answer))
          why = `HTTP ${answer.status}`
        } else if (result.failure === "unreachable") {
          why = "unreachable"
        } else {
          return yield* Effect.fail(result.failure)
        }
        if (attempt >= retries) return yield* unavailable(call, `${why} after ${attempt + 1} attempts`)
        // Full jitter over an exponential backoff, never past the wait budget.
        const backoff = retryBaseMs * 2 ** attempt
        const delay = Math.round(backoff / 2 + (yield* Random.next) * backoff / 2)
        if ((yield* Clock.currentTimeMillis) + delay > deadline) {
          return yield* unavailable(call, `${why}; wait budget spent`)
        }
        yield* Effect.sleep(Duration.millis(delay))
      }
    }).pipe(
      Effect.withSpan("ChatPlatform.request", { attributes: { route: call.target.route } })
    )

  return { request } satisfies DiscordRest
})
