/**
 * The Idempotency middleware (issue #30): a POST, PATCH or DELETE with an `Idempotency-Key` runs
 * once per user and key for 24 h (IdempotencyStore); a retry with the same method, path and body gets
 * the first answer again with `Idempotent-Replayed: true`. Choices the draft leaves open:
 * - kept: 2xx and 4xx answers except 408, 409 and 429 (those, a 5xx or a defect: nothing is kept,
 *   the write is rolled back where it is atomic, and the key can be retried);
 * - the fingerprint is the method, the path with its query, and the SHA-256 of the body's bytes;
 * - atomic (the key commits with the write, in one transaction): the routes whose work is one
 *   transaction of the database, forms create/update/delete and feeds delete. Feeds create/update
 *   and the feed actions (test, refresh) also call the chat platform or queue a job: their key is
 *   claimed first and their answer stored when they end.
 */
import { createHash } from "node:crypto"
import { Cause, Effect, Exit, Layer, Result } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { BadRequest, Conflict, reasonPhrase, UnprocessableContent } from "../../domain/infra/Errors.ts"
import type { Problem } from "../../domain/infra/Errors.ts"
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from "../../domain/infra/IdempotencyKey.ts"
import { IdempotencyStore } from "../../services/infra/IdempotencyStore.ts"
import type { KeptAnswer } from "../../services/infra/IdempotencyStore.ts"
import { FeedModuleName } from "../../domain/platform/Platform.ts"
import { CurrentPrincipal, Idempotency } from "../contract/Middleware.ts"

const MUTATING = new Set(["POST", "PATCH", "DELETE"])
/** Answers a retry should not get again: it should try again. */
const NOT_KEPT = new Set([408, 409, 429])
/** The status of each error class of the envelope (domain/Errors.ts). */
const ERROR_STATUS: Record<string, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  RequestTimeout: 408,
  Conflict: 409,
  UnprocessableContent: 422,
  TooManyRequests: 429,
  ServiceUnavailable: 503
}

const keptStatus = (status: number) => status >= 200 && status < 500 && !(status >= 300 && status < 400) && !NOT_KEPT.has(status)

/** The feed modules' groups (one per module, named as the module). */
const FEED_GROUPS: ReadonlySet<string> = new Set(FeedModuleName.literals)

/**
 * Whether the route's work is one transaction of the database (the key then commits with it), by
 * the endpoint's `identifier`: an endpoint is a function object, and its `name` is the function's
 * ("HttpApiEndpoint"), which once made every key a claimed one.
 */
export const isAtomic = (group: HttpApiGroup.Top, endpoint: HttpApiEndpoint.Top) =>
  group.identifier === "forms"
    ? ["create", "update", "delete"].includes(endpoint.identifier)
    : FEED_GROUPS.has(group.identifier) && endpoint.identifier === "delete"

const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")

const decoder = new TextDecoder()

/** The answer a success response keeps: its status, `Content-Type` and body text (a stream: not kept). */
const keptResponse = (response: HttpServerResponse.HttpServerResponse): KeptAnswer | undefined => {
  if (!keptStatus(response.status)) return undefined
  const body = response.body
  if (body._tag === "Empty") return { status: response.status, headers: {}, body: "" }
  if (body._tag !== "Uint8Array") return undefined
  return { status: response.status, headers: { "content-type": body.contentType }, body: body.text ?? decoder.decode(body.body) }
}

/** The envelope an error of the contract is answered with (the same the framework encodes). */
const keptError = (error: unknown): KeptAnswer | undefined => {
  if (typeof error !== "object" || error === null || !("_tag" in error) || !("problems" in error)) return undefined
  const status = ERROR_STATUS[String(error._tag)]
  // Stryker disable next-line ConditionalExpression: keptStatus(undefined) is false, so an unknown error keeps nothing either way
  if (status === undefined || !keptStatus(status)) return undefined
  const code = reasonPhrase[status]!
  const errors = (error.problems as ReadonlyArray<Problem>).map((p) =>
    p.additionalProperties === undefined ? { code, message: p.message } : { code, message: p.message, additionalProperties: p.additionalProperties }
  )
  return { status, headers: { "content-type": "application/json" }, body: JSON.stringify({ errors }) }
}

/** What a request's end keeps for its key: a kept status's answer, or nothing (the key can be retried). */
export const keep = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>): KeptAnswer | undefined => {
  if (Exit.isSuccess(exit)) return keptResponse(exit.value)
  const error = Cause.findError(exit.cause)
  return Result.isSuccess(error) && !Cause.hasDies(exit.cause) ? keptError(error.success) : undefined
}

/** A kept answer, sent again with `Idempotent-Replayed: true`. */
export const replay = (answer: KeptAnswer) => {
  const headers = { ...answer.headers, "idempotent-replayed": "true" }
  return answer.body === "" && answer.headers["content-type"] === undefined
    ? HttpServerResponse.empty({ status: answer.status, headers })
    : HttpServerResponse.text(answer.body, { status: answer.status, headers, contentType: answer.headers["content-type"] ?? "application/json" })
}

export const IdempotencyLive = Layer.effect(
  Idempotency,
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    return Idempotency.of((httpEffect, { endpoint, group }) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        // Stryker disable next-line ConditionalExpression: only the mutating endpoints carry this middleware (Api.ts); kept should that change
        if (!MUTATING.has(request.method)) return yield* httpEffect
        const parsed = parseIdempotencyKey(request.headers[IDEMPOTENCY_HEADER])
        if (Result.isFailure(parsed)) return yield* Effect.fail(BadRequest.of(parsed.failure, { header: "Idempotency-Key" }))
        const key = parsed.success
        if (key === undefined) return yield* httpEffect
        // A body that cannot be read (too large, cut) fails the same way in the handler: no key is used.
        const body = yield* Effect.result(request.arrayBuffer)
        if (Result.isFailure(body)) return yield* httpEffect
        const principal = yield* CurrentPrincipal
        const fingerprint = sha256(`${request.method} ${request.url}\n${sha256(new Uint8Array(body.success))}`)
        const outcome = yield* store.run({ userId: principal.userId, key, fingerprint }, isAtomic(group, endpoint), httpEffect, keep)
        switch (outcome._tag) {
          case "Ran":
            return yield* outcome.exit
          case "Replay":
            return replay(outcome.answer)
          case "Mismatch":
            return yield* Effect.fail(UnprocessableContent.of(
              "This Idempotency-Key was used for another request (method, path or body) in the last 24 hours: use a new key for a new request.",
              { header: "Idempotency-Key" }
            ))
          case "InFlight":
            return yield* Effect.fail(Conflict.of(
              "A request with this Idempotency-Key is still being processed; retry once it has been answered.",
              { header: "Idempotency-Key" }
            ))
        }
      })
    )
  })
)
