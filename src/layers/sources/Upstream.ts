/**
 * One way to call an upstream (external source or task board): a time-out, and every transport,
 * 5xx, 429 and credential fault turned into the contract's errors naming the upstream. Callers get
 * the status and the parsed JSON body and decide what 404/400 mean for them.
 */
import { Duration, Effect, Schema } from "effect"
import type { Option } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { dependencyFailed, dependencySucceeded } from "../../services/infra/DependencyHealth.ts"
import { countUpstream, upstreamRoute } from "../../services/infra/Metrics.ts"

export const DEFAULT_TIMEOUT: Duration.Input = "10 seconds"

/** Every 503 carries Retry-After (decisions.md "Errors"): this when the upstream named no wait. */
export const RETRY_AFTER_SECONDS = 10
/** A source without configuration, or whose credentials are refused, needs an operator: ask for a longer wait. */
export const RETRY_AFTER_MISCONFIGURED_SECONDS = 60

/** Who is called: the names used in every message (`"streaming"`, `"Twitch"`). */
export interface Upstream {
  readonly client: HttpClient.HttpClient
  /** The gateway's name for it: a module name or `"task board"`. */
  readonly source: string
  /** The real service, for people reading the message. */
  readonly service: string
  readonly timeout: Duration.Input
}

export type Failure = RequestTimeout | ServiceUnavailable

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  readonly body: unknown
}

const describe = (u: Upstream) => `The ${u.source} source (${u.service})`

export const notConfigured = (source: string, variables: string) =>
  ServiceUnavailable.of(`The ${source} source is not configured (set ${variables}).`, RETRY_AFTER_MISCONFIGURED_SECONDS)

export const timedOut = (u: Upstream) =>
  RequestTimeout.of(`${describe(u)} did not answer within ${Duration.format(Duration.fromInputUnsafe(u.timeout))}; retry.`)

export const unavailable = (u: Upstream, what: string, retryAfterSeconds: number = RETRY_AFTER_SECONDS) =>
  ServiceUnavailable.of(`${describe(u)} ${what}.`, Math.max(1, retryAfterSeconds))

/** The name under which an upstream's outages are logged (DependencyHealth: one line down, one back). */
export const dependencyOf = (u: Upstream) => `${u.source} (${u.service})`

/** Seconds from a `Retry-After` header (seconds form only), else undefined. */
export const retryAfter = (headers: Readonly<Record<string, string>>): number | undefined => {
  const value = headers["retry-after"]
  if (value === undefined) return undefined
  const n = Number(value)
  return Number.isFinite(n) && n >= 0 ? Math.ceil(n) : undefined
}

/**
 * Sends the request and reads its body, all within the time-out. 5xx and 429 become
 * ServiceUnavailable (with the upstream's Retry-After); anything else is returned, 401 included
 * (an app token may be renewed on it). Use `send` unless you handle 401 yourself.
 */
export const sendRaw = (u: Upstream, request: HttpClientRequest.HttpClientRequest): Effect.Effect<Answer, RequestTimeout | ServiceUnavailable> => {
  // Counted by platform and route template (services/infra/Metrics.ts): `error` when no answer came.
  const count = (status: number | undefined) => countUpstream(u.service.toLowerCase(), upstreamRoute(request.method, request.url), status)
  return u.client.execute(request).pipe(
    Effect.flatMap((response) =>
      response.text.pipe(
        Effect.map((text): Answer => ({ status: response.status, headers: response.headers, body: parseJson(text) }))
      )
    ),
    Effect.tap((answer) => count(answer.status)),
    Effect.catch((error) =>
      dependencyFailed(dependencyOf(u), { source: u.source, reason: error.reason._tag }).pipe(
        Effect.andThen(count(undefined)),
        Effect.andThen(Effect.fail(unavailable(u, "is unreachable")))
      )
    ),
    Effect.timeoutOrElse({
      duration: u.timeout,
      orElse: () =>
        dependencyFailed(dependencyOf(u), { source: u.source, reason: "timeout" }).pipe(
          Effect.andThen(count(undefined)),
          Effect.andThen(Effect.fail(timedOut(u)))
        )
    }),
    Effect.flatMap((answer) =>
      answer.status >= 500 || answer.status === 429
        ? dependencyFailed(dependencyOf(u), { source: u.source, status: answer.status }).pipe(
          Effect.andThen(Effect.fail(unavailable(u, `answered ${answer.status}`, retryAfter(answer.headers))))
        )
        : Effect.as(dependencySucceeded(dependencyOf(u)), answer)
    )
  )
}

/** A 401 means the gateway's own credentials were refused: ServiceUnavailable, logged. */
export const refuseUnauthorized = (u: Upstream) => (answer: Answer): Effect.Effect<Answer, ServiceUnavailable> =>
  answer.status === 401
    ? dependencyFailed(`${dependencyOf(u)} credentials`, { source: u.source, status: 401 }).pipe(
      Effect.andThen(Effect.fail(unavailable(u, "refused the gateway's credentials", RETRY_AFTER_MISCONFIGURED_SECONDS)))
    )
    : Effect.as(dependencySucceeded(`${dependencyOf(u)} credentials`), answer)

/** `sendRaw`, and a 401 is ServiceUnavailable. */
export const send = (u: Upstream, request: HttpClientRequest.HttpClientRequest): Effect.Effect<Answer, RequestTimeout | ServiceUnavailable> =>
  sendRaw(u, request).pipe(Effect.flatMap(refuseUnauthorized(u)))

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Decodes an answer's body; a body of the wrong shape means the upstream is not behaving. */
export const decode = <S extends Schema.ConstraintDecoder<unknown>>(u: Upstream, schema: S) => {
  const run = Schema.decodeUnknownOption(schema)
  return (body: unknown): Effect.Effect<S["Type"], ServiceUnavailable> => {
    const decoded: Option.Option<S["Type"]> = run(body)
    return decoded._tag === "Some"
      ? Effect.as(dependencySucceeded(`${dependencyOf(u)} answers`), decoded.value)
      : dependencyFailed(`${dependencyOf(u)} answers`, { source: u.source, reason: "unexpected body" }).pipe(
        Effect.andThen(Effect.fail(unavailable(u, "answered something unexpected")))
      )
  }
}

/** Joins a base URL and a path without doubling or losing the slash. */
export const join = (base: string, path: string) => `${base.replace(/\/+$/, "")}${path.startsWith("/") ? path : `/${path}`}`

export const get = (base: string, path: string, options?: HttpClientRequest.Options.NoUrl) =>
  HttpClientRequest.get(join(base, path), { acceptJson: true, ...options })
