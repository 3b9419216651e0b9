/**
 * How the feed connectors report what is wrong with a request: a 400 at the field it concerns, and
 * independent checks run together, beside the body's schema problems, so that every 400 of a write
 * is reported at once.
 */
import { Effect, Option, Result } from "effect"
import type { Problem, UpstreamError } from "../../domain/infra/Errors.ts"
import { BadRequest } from "../../domain/infra/Errors.ts"
import type { Forbidden, NotFound } from "../../domain/infra/Errors.ts"

export type FeedsError = BadRequest | Forbidden | NotFound | UpstreamError

/** A 400 at `path` (`feed_identifier`, `webhook_url`, `webhook_options.filter_game[1]`…). */
export const bad = (path: string, message: string) => BadRequest.of(message, { path })

/** Runs independent checks and reports every 400 together; any other failure wins. */
export const collect = <A, B, R1, R2>(
  a: Effect.Effect<A, FeedsError, R1>,
  b: (a: Option.Option<A>) => Effect.Effect<B, FeedsError, R2>
): Effect.Effect<readonly [A, B], FeedsError, R1 | R2> =>
  Effect.gen(function*() {
    const ra = yield* Effect.result(a)
    const rb = yield* Effect.result(b(Result.isSuccess(ra) ? Option.some(ra.success) : Option.none()))
    const failures: Array<FeedsError> = [
      ...(Result.isFailure(ra) ? [ra.failure] : []),
      ...(Result.isFailure(rb) ? [rb.failure] : [])
    ]
    const other = failures.find((e) => e._tag !== "BadRequest")
    if (other !== undefined) return yield* Effect.fail(other)
    const problems: Array<Problem> = failures.flatMap((e) => e._tag === "BadRequest" ? e.problems : [])
    if (problems.length > 0 || !Result.isSuccess(ra) || !Result.isSuccess(rb)) {
      return yield* Effect.fail(BadRequest.many(problems))
    }
    return [ra.success, rb.success] as const
  })

/**
 * A check that does not run because its field failed its schema (whose problem is already in the
 * answer): no problem of its own, and no value. Only for a body its schema refused.
 */
export const skipped: Effect.Effect<never, BadRequest> = Effect.fail(BadRequest.many([]))

/**
 * `self` (a write's checks), answered with `problems` (what the body's schema refused) in the same
 * 400: the checks' own 400s are added to them, any other failure wins (as in `collect`), and with
 * schema problems the write never goes on. Without any, `self` as it is.
 */
export const besides = <A, R>(
  problems: ReadonlyArray<Problem>,
  self: Effect.Effect<A, FeedsError, R>
): Effect.Effect<A, FeedsError, R> =>
  problems.length === 0 ? self : Effect.flatMap(Effect.result(self), (r) =>
    Result.isSuccess(r)
      ? Effect.fail(BadRequest.many(problems))
      : Effect.fail(r.failure._tag === "BadRequest" ? BadRequest.many([...problems, ...r.failure.problems]) : r.failure))
