/**
 * The one policy for database failures, used by every SQL adapter (decisions.md "Errors"):
 * - the database cannot serve now (connection lost or refused, shutting down, out of connections,
 *   a deadlock, a lock or statement time-out, credentials refused) → 503 with `Retry-After`;
 * - a value PostgreSQL refuses to store (SQLSTATE class 22 "data exception": U+0000 in text or
 *   JSON, a number out of range) in what the client sent → 400, at the field when it can be found;
 * - anything else is a bug of ours → a defect: 500 with the request id, the details only in the log.
 * Client strings should be refused before the database; this keeps the answer right when one is not.
 */
import { dependencyFailed, dependencySucceeded } from "../../services/infra/DependencyHealth.ts"
import { Effect } from "effect"
import { SqlError } from "effect/sql"
import { BadRequest, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { Problem } from "../../domain/infra/Errors.ts"

export type SqlFailureKind = "unavailable" | "rejected" | "defect"

/** The `Retry-After` of a storage that is down: about what a restart or a failover takes. */
export const STORAGE_RETRY_AFTER_SECONDS = 5

/**
 * Not now rather than never, besides the reasons the driver marks retryable: connection (08),
 * insufficient resources (53), operator intervention (57P: shutting down, cannot connect now),
 * system errors (58), and a read-only transaction (25006: a standby during a failover).
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P|58)|^25006$/

/** The SQLSTATE PostgreSQL sent, when the failure is an error answer of the server. */
export const sqlStateOf = (error: SqlError.SqlError): string | undefined => {
  const cause: unknown = error.reason.cause
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
}

export const classifySqlError = (error: SqlError.SqlError): SqlFailureKind => {
  // Wrong database credentials are the operator's to fix: for the client the storage is down.
  if (error.isRetryable || error.reason._tag === "AuthenticationError") return "unavailable"
  const code = sqlStateOf(error)
  if (code === undefined) return "defect"
  if (UNAVAILABLE_SQLSTATE.test(code)) return "unavailable"
  return code.startsWith("22") ? "rejected" : "defect"
}

/** Paths (`steps[2].string`) of the keys and strings in `input` that cannot be stored: those with U+0000. */
export const unstorablePaths = (input: unknown, path = ""): Array<string> => {
  if (typeof input === "string") return input.includes("\u0000") ? [path] : []
  if (Array.isArray(input)) return input.flatMap((value, i) => unstorablePaths(value, `${path}[${i}]`))
  if (typeof input !== "object" || input === null || input instanceof Date) return []
  return Object.entries(input).flatMap(([key, value]) => {
    const at = path === "" ? key : `${path}.${key}`
    return key.includes("\u0000") ? [at] : unstorablePaths(value, at)
  })
}

/** The 503 of a storage that cannot serve now. */
export const storageUnavailable = (storage: string): ServiceUnavailable =>
  ServiceUnavailable.of(`${storage} is unavailable; retry later.`, STORAGE_RETRY_AFTER_SECONDS)

export interface SqlFailureOptions {
  /** What the client sent, under its wire names: a refused string is reported at its path in it. */
  readonly input: unknown
  /** Where that input travelled (`body`, `query`), added to each problem as `in`. */
  readonly in?: string
}

/** The 400 of a value the database refused: one problem per unstorable string of the input. */
export const rejectedValue = (options: SqlFailureOptions): BadRequest => {
  const where = options.in === undefined ? {} : { in: options.in }
  const problems: Array<Problem> = unstorablePaths(options.input).map((path) => ({
    message: `${path === "" ? "The value" : path} contains U+0000 (the null character), which cannot be stored.`,
    additionalProperties: { path, ...where }
  }))
  return problems.length > 0
    ? BadRequest.many(problems)
    : BadRequest.of("A value of the request cannot be stored (U+0000, or a number or text out of range).")
}

/** What a failure becomes. Without `options` the statement carries nothing of the client's: a refused value is our bug. */
export const fromSqlError = (
  storage: string,
  error: SqlError.SqlError,
  options?: SqlFailureOptions
): Effect.Effect<never, ServiceUnavailable | BadRequest> => {
  const kind = classifySqlError(error)
  if (kind === "unavailable") {
    // One line when the database goes down, a count while it stays down, one when it is back.
    return dependencyFailed("database", {
      storage,
      reason: error.reason._tag,
      sqlstate: sqlStateOf(error),
      detail: error.reason.message
    }).pipe(Effect.andThen(Effect.fail(storageUnavailable(storage))))
  }
  return kind === "rejected" && options !== undefined ? Effect.fail(rejectedValue(options)) : Effect.die(error)
}

type WithoutSqlError<E> = Exclude<E, SqlError.SqlError>

/**
 * Applies the policy to every `SqlError` of an effect (other failures pass through):
 * `.pipe(sqlFailure("The forms storage"))`, or with the client's input for statements that write it.
 */
export function sqlFailure(
  storage: string
): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, WithoutSqlError<E> | ServiceUnavailable, R>
export function sqlFailure(
  storage: string,
  options: SqlFailureOptions
): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, WithoutSqlError<E> | ServiceUnavailable | BadRequest, R>
export function sqlFailure(storage: string, options?: SqlFailureOptions) {
  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, WithoutSqlError<E> | ServiceUnavailable | BadRequest, R> =>
    Effect.catch(Effect.tap(self, () => dependencySucceeded("database")), (error): Effect.Effect<never, WithoutSqlError<E> | ServiceUnavailable | BadRequest> =>
      SqlError.isSqlError(error)
        ? fromSqlError(storage, error, options)
        : Effect.fail(error as WithoutSqlError<E>))
}
