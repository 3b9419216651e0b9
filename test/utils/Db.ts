/**
 * Databases for SQL suites: always PGlite (in memory); also PostgreSQL when TEST_DATABASE_URL is set.
 * Each PostgreSQL suite gets its own schema, so files run in parallel against one database.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, References } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { embeddedPostgres } from "../../src/layers/sql/Embedded.ts"
import { MigrationsLayer } from "../../src/layers/migrations/Migrations.ts"

export type DbKind = "pglite" | "postgres"

export const dbKinds: ReadonlyArray<DbKind> = process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"]

/** A fresh, empty PostgreSQL schema on TEST_DATABASE_URL, dropped when the scope closes. */
const postgresSchema = Layer.unwrap(Effect.gen(function*() {
  const schema = `t_${randomBytes(6).toString("hex")}`
  const url = process.env.TEST_DATABASE_URL!
  const admin = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  yield* Effect.addFinalizer(() => admin.unsafe(`DROP SCHEMA ${schema} CASCADE`).pipe(Effect.ignore))
  return PgClient.layer({ url: Redacted.make(url), maxConnections: 5, startupOptions: `-c search_path=${schema}` })
})).pipe(Layer.provide(Reactivity.layer))

export const rawDb = (kind: DbKind): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, unknown> =>
  kind === "postgres"
    ? postgresSchema
    : Layer.unwrap(Effect.map(embeddedPostgres("memory://"), (url) => PgClient.layer({ url, maxConnections: 1 })))

/** A migrated database of the given kind. */
// Migrations at Warn: the "database migrated" line of every suite would drown the test output.
export const testDb = (kind: DbKind) =>
  MigrationsLayer.pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")), Layer.provideMerge(rawDb(kind)))
