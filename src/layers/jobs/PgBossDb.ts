/**
 * pg-boss's database adapter (its `IDatabase`, `{ executeSql(text, values) }`) over our SqlClient,
 * so pg-boss shares the application's pool instead of opening its own.
 *
 * On the embedded PGlite database that pool has ONE connection, and that is what keeps pg-boss out
 * of the application's transactions: `sql.withTransaction` holds the connection until it commits
 * or rolls back, and a pg-boss statement, like any other statement outside that transaction, waits
 * for the pool. On PostgreSQL the same code simply borrows a connection of the pool.
 *
 * pg-boss was written against node-postgres, so this adapter speaks like it: parameters go as text
 * with no declared type (the server infers it, as for node-postgres), int8 comes back as a string,
 * failures are the server's error fields (`code`, `constraint`, `detail`, …), and a text of several
 * statements runs as one transaction (layers/jobs/SqlScript.ts).
 */
import { Cause, Effect, Exit } from "effect"
import type { Context } from "effect"
import { SqlClient } from "effect/sql"
import { isSqlError } from "effect/sql/SqlError"
import type { SqlError } from "effect/sql/SqlError"
import type { Db } from "pg-boss"
import { dependencySucceeded } from "../../services/infra/DependencyHealth.ts"
import { classifySqlError } from "../infra/SqlFailure.ts"
import { planScript } from "./SqlScript.ts"

// --- parameters, as node-postgres prepares them (pg/lib/utils.js prepareValue) ---------------------

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** A Date as timestamptz text with the local offset, as node-postgres writes it. */
const dateToString = (date: Date): string => {
  const offset = -date.getTimezoneOffset()
  const sign = offset >= 0 ? "+" : "-"
  const abs = Math.abs(offset)
  let year = date.getFullYear()
  const bc = year < 1
  if (bc) year = Math.abs(year) + 1
  return `${pad(year, 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:` +
    `${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}${bc ? " BC" : ""}`
}

const arrayLiteral = (values: ReadonlyArray<unknown>): string =>
  "{" + values.map((value) => {
    if (value === null || value === undefined) return "NULL"
    if (Array.isArray(value)) return arrayLiteral(value)
    if (ArrayBuffer.isView(value)) return "\\\\x" + Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")
    const text = String(prepareValue(value))
    return "\"" + text.replace(/\\/g, "\\\\").replace(/"/g, "\\\"") + "\""
  }).join(",") + "}"

/**
 * One parameter as node-postgres sends it: null, bytes, or text (Date as timestamptz text, array
 * as an array literal, any other object as JSON). As text with no type, the server infers the
 * type from the statement, so `$1` works against uuid, jsonb, int or timestamptz alike.
 */
export const prepareValue = (value: unknown): string | Uint8Array | null => {
  if (value === null || value === undefined) return null
  if (value instanceof Uint8Array) return value
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  if (value instanceof Date) return dateToString(value)
  if (Array.isArray(value)) return arrayLiteral(value)
  if (typeof value === "object") {
    const toPostgres = (value as { toPostgres?: unknown }).toPostgres
    return typeof toPostgres === "function" ? prepareValue(toPostgres.call(value, prepareValue)) : JSON.stringify(value)
  }
  return String(value)
}

// --- results ------------------------------------------------------------------------------------

const fromInt8 = (value: unknown): unknown =>
  typeof value === "bigint" ? value.toString() : Array.isArray(value) ? value.map(fromInt8) : value

/** Rows as node-postgres returns them: int8 (count(*), bigint columns) as strings. */
const toNodePgRows = (rows: ReadonlyArray<unknown>): Array<any> =>
  rows.map((row) => {
    if (typeof row !== "object" || row === null) return row
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(row)) out[key] = fromInt8(value)
    return out
  })

// --- running ------------------------------------------------------------------------------------

/**
 * On an error this adapter throws: the database could not serve (layers/sql/SqlFailure.ts's policy:
 * connection lost or refused, shutting down, …). A symbol, enumerable, so it survives the copies
 * pg-boss emits (`{ ...error, queue, worker }`) and appears in no log or JSON.
 */
const DATABASE_UNAVAILABLE: unique symbol = Symbol.for("gateway/DatabaseUnavailable")

/** Whether `error` (thrown by this adapter, or emitted by pg-boss from one) says the database could not serve. */
export const isDatabaseUnavailable = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { readonly [DATABASE_UNAVAILABLE]?: unknown })[DATABASE_UNAVAILABLE] === true

const markUnavailable = (error: Error): Error => {
  try {
    Object.defineProperty(error, DATABASE_UNAVAILABLE, { value: true, enumerable: true })
  } catch {
    // A frozen error stays unmarked: pg-boss's event about it is then logged, not folded.
  }
  return error
}

/** An error pg-boss can read: the server's fields (`code`, `constraint`, `detail`) on an Error. */
const toNodePgError = (cause: Cause.Cause<SqlError>): Error => {
  const error = Cause.squash(cause)
  if (isSqlError(error)) {
    const server = error.reason.cause
    const thrown = server instanceof Error ? server : new Error(error.message, { cause: error })
    return classifySqlError(error) === "unavailable" ? markUnavailable(thrown) : thrown
  }
  if (error instanceof Error) return error
  return new Error(Cause.hasInterruptsOnly(cause) ? "pg-boss statement interrupted" : String(error))
}

/**
 * Runs one pg-boss text with the SqlClient: a statement as it is (prepared only when it has
 * parameters, so pg-boss's one-off maintenance texts do not crowd our prepared-statement cache),
 * several statements as one `sql.withTransaction`, whose rows are returned together, as node-postgres
 * and pg-boss's own PGlite adapter do.
 */
export const runPgBossSql = (
  sql: SqlClient.SqlClient,
  text: string,
  values: ReadonlyArray<unknown> | undefined
): Effect.Effect<{ rows: Array<any> }, SqlError> => {
  const client = sql.withoutTransforms()
  const one = (statement: string, params: ReadonlyArray<unknown>) => {
    const query = client.unsafe<Record<string, unknown>>(statement, params.map(prepareValue))
    return params.length > 0 ? query.withoutTransform : query.unprepared
  }
  if (values !== undefined && values.length > 0) {
    return Effect.map(one(text, values), (rows) => ({ rows: toNodePgRows(rows) }))
  }
  const plan = planScript(text)
  switch (plan._tag) {
    case "Single":
      return Effect.map(one(plan.statement, []), (rows) => ({ rows: toNodePgRows(rows) }))
    case "Transaction":
      return Effect.forEach(plan.statements, (statement) => one(statement, [])).pipe(
        sql.withTransaction,
        Effect.map((results) => ({ rows: toNodePgRows(results.flat()) }))
      )
    case "Unsupported":
      return Effect.die(new Error(`pg-boss sent a script this adapter cannot run (${plan.reason})`))
  }
}

/**
 * pg-boss's `db`, running every statement as an Effect with `context`: the engine's own context
 * (no transaction: statements wait for a pool connection), or, per call, the caller's, so a job
 * sent inside `sql.withTransaction` is written by that transaction and commits or rolls back with it.
 * `traced: false` for the engine's own polling and upkeep, which would otherwise start a trace every
 * poll; a caller's statements stay in the caller's trace.
 */
export const makePgBossDb = (
  context: Context.Context<SqlClient.SqlClient>,
  options: { readonly traced?: boolean } = {}
): Db => {
  const run = Effect.runPromiseExitWith(context)
  const traced = options.traced ?? true
  return {
    executeSql: (text, values) =>
      run(Effect.flatMap(SqlClient.SqlClient, (sql) => runPgBossSql(sql, text, values)).pipe(
        // The engine reaching the database ends an outage of it (the "back" line), in a worker too.
        Effect.tap(() => dependencySucceeded("database")),
        Effect.withTracerEnabled(traced)
      )).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        throw toNodePgError(exit.cause)
      })
  }
}
