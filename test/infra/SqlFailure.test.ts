/**
 * The one database-error policy (src/layers/infra/SqlFailure.ts): how each failure is classified,
 * table-driven, then the real failures of PGlite/PostgreSQL (U+0000 refused, a database that is not
 * there) through `sqlFailure`, as every SQL adapter applies it.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, SqlError } from "effect/sql"
import { BadRequest, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import {
  classifySqlError,
  rejectedValue,
  sqlFailure,
  STORAGE_RETRY_AFTER_SECONDS,
  unstorablePaths
} from "../../src/layers/infra/SqlFailure.ts"
import { dbKinds, rawDb } from "../utils/Db.ts"

/** A failure as @effect/sql-pg reports it: the server's fields (SQLSTATE `code`) on the cause. */
const pgError = (Reason: new (props: { readonly cause: unknown }) => SqlError.SqlErrorReason, code?: string) =>
  new SqlError.SqlError({
    reason: new Reason({ cause: Object.assign(new Error("from the server"), code === undefined ? {} : { code }) })
  })

describe("classifySqlError", () => {
  const cases: ReadonlyArray<readonly [string, SqlError.SqlError, ReturnType<typeof classifySqlError>]> = [
    ["connection lost", pgError(SqlError.ConnectionError), "unavailable"],
    ["connection refused (08006)", pgError(SqlError.ConnectionError, "08006"), "unavailable"],
    ["credentials refused (28P01)", pgError(SqlError.AuthenticationError, "28P01"), "unavailable"],
    ["deadlock (40P01)", pgError(SqlError.DeadlockError, "40P01"), "unavailable"],
    ["serialization (40001)", pgError(SqlError.SerializationError, "40001"), "unavailable"],
    ["lock timeout (55P03)", pgError(SqlError.LockTimeoutError, "55P03"), "unavailable"],
    ["statement timeout (57014)", pgError(SqlError.StatementTimeoutError, "57014"), "unavailable"],
    ["admin shutdown (57P01)", pgError(SqlError.UnknownError, "57P01"), "unavailable"],
    ["cannot connect now (57P03)", pgError(SqlError.UnknownError, "57P03"), "unavailable"],
    ["too many connections (53300)", pgError(SqlError.UnknownError, "53300"), "unavailable"],
    ["read-only standby (25006)", pgError(SqlError.UnknownError, "25006"), "unavailable"],
    ["invalid byte sequence, U+0000 in text (22021)", pgError(SqlError.UnknownError, "22021"), "rejected"],
    ["unsupported Unicode escape, U+0000 in JSON (22P05)", pgError(SqlError.UnknownError, "22P05"), "rejected"],
    ["number out of range (22003)", pgError(SqlError.UnknownError, "22003"), "rejected"],
    ["syntax error (42601)", pgError(SqlError.SqlSyntaxError, "42601"), "defect"],
    ["permission denied (42501)", pgError(SqlError.AuthorizationError, "42501"), "defect"],
    ["unique violation (23505)", pgError(SqlError.UnknownError, "23505"), "defect"],
    ["foreign key (23503)", pgError(SqlError.ConstraintError, "23503"), "defect"],
    ["raised by a trigger (P0001)", pgError(SqlError.UnknownError, "P0001"), "defect"],
    ["no SQLSTATE (a row that cannot be decoded)", pgError(SqlError.UnknownError), "defect"]
  ]
  for (const [name, error, expected] of cases) {
    it(`${name} → ${expected}`, () => assert.strictEqual(classifySqlError(error), expected))
  }
})

describe("unstorablePaths and rejectedValue", () => {
  it("finds every string and key with U+0000, with the wire path", () => {
    const input = { title: "a\u0000", ok: "fine", steps: [{ string: "x" }, { string: "\u0000", list: ["a", "b\u0000"] }], opts: { "k\u0000": 1 }, n: 3, d: new Date(0), z: null }
    assert.deepStrictEqual(unstorablePaths(input), ["title", "steps[1].string", "steps[1].list[1]", "opts.k\u0000"])
    assert.deepStrictEqual(unstorablePaths("\u0000"), [""])
    assert.deepStrictEqual(unstorablePaths({ a: ["ok"], b: 1 }), [])
  })

  it("one problem per path (with `in` when given); without a path, one problem naming no field", () => {
    const located = rejectedValue({ input: { state: "a\u0000b" }, in: "query" })
    assert.deepStrictEqual(located.problems.map((p) => p.additionalProperties), [{ path: "state", in: "query" }])
    const unlocated = rejectedValue({ input: { n: 1 } })
    assert.strictEqual(unlocated.problems.length, 1)
    assert.isUndefined(unlocated.problems[0]!.additionalProperties)
  })
})

for (const kind of dbKinds) {
  layer(rawDb(kind), { excludeTestServices: true })(`sqlFailure on ${kind}`, (it) => {
    const insertTitle = (title: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT ${title}::text AS title, ${JSON.stringify({ title })}::jsonb AS j`)

    it.effect("U+0000 refused by the database → 400 at the field, never 503", () =>
      Effect.gen(function*() {
        const raw = yield* Effect.flip(insertTitle("a\u0000b"))
        assert.strictEqual(classifySqlError(raw as SqlError.SqlError), "rejected")
        const input = { title: "a\u0000b" }
        const mapped = yield* Effect.flip(insertTitle(input.title).pipe(sqlFailure("The test storage", { input })))
        assert.instanceOf(mapped, BadRequest)
        assert.deepStrictEqual(mapped.problems.map((p) => p.additionalProperties?.["path"]), ["title"])
      }))

    it.effect("a refused value the statement did not take from the client is a bug: a defect (500)", () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(insertTitle("a\u0000b").pipe(sqlFailure("The test storage")))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      }))

    it.effect("other failures pass through untouched", () =>
      Effect.gen(function*() {
        const failed = yield* Effect.flip(Effect.fail("mine" as const).pipe(sqlFailure("The test storage")))
        assert.strictEqual(failed, "mine")
      }))
  })
}

describe("a database that is not there", () => {
  const unreachable = PgClient.layer({ url: Redacted.make("postgres://postgres@127.0.0.1:9/none"), connectTimeout: "200 millis" }).pipe(
    Layer.provide(Reactivity.layer)
  )
  it.effect("→ 503 with retry_after (the Retry-After header), naming the storage", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const failed = yield* Effect.flip(sql`SELECT 1`.pipe(sqlFailure("The test storage", { input: {} })))
      assert.instanceOf(failed, ServiceUnavailable)
      assert.match(failed.problems[0]!.message, /^The test storage is unavailable/)
      assert.deepStrictEqual(failed.problems[0]!.additionalProperties, { retry_after: STORAGE_RETRY_AFTER_SECONDS })
    }).pipe(Effect.provide(unreachable)), { timeout: 20_000 })
})
