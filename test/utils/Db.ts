/**
 * Databases for SQL suites: always PGlite (in memory); also PostgreSQL when TEST_DATABASE_URL is set.
 * Each PostgreSQL suite gets its own schema, so files run in parallel against one database.
 * A PGlite starts from a saved data folder (PgliteTemplate.ts): an empty one, or one with every
 * migration applied; TEST_PGLITE_TEMPLATE=0 starts every one with its own initdb instead.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, References } from "effect"
import type { Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { embeddedPostgres } from "../../src/layers/infra/Embedded.ts"
import { MigrationsLayer } from "../../src/layers/migrations/Migrations.ts"
import { InteractionsSqlLive } from "../../src/layers/infra/InteractionsSql.ts"
import { template } from "./PgliteTemplate.ts"
import type { TemplateKind } from "./PgliteTemplate.ts"

export type DbKind = "pglite" | "postgres"

export const dbKinds: ReadonlyArray<DbKind> = process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"]

/** A fresh, empty PostgreSQL schema on TEST_DATABASE_URL, dropped when the scope closes. */
const postgresSchema = Layer.unwrap(Effect.gen(function*() {
  const schema = `t_${randomBytes(6).toString("hex")}`
  const url = process.env.TEST_DATABASE_URL!
  const admin = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  yield* Effect.addFinalizer(() => admin.unsafe(`DROP SCHEMA ${schema} CASCADE`).pipe(Effect.ignore))
  const startupOptions = `-c search_path=${schema}`
  // The interactions' own pipelined pool too, as the gateway has on PostgreSQL (layers/infra/InteractionsSql.ts).
  return Layer.merge(
    PgClient.layer({ url: Redacted.make(url), maxConnections: 5, startupOptions }),
    InteractionsSqlLive(Redacted.make(url), { startupOptions, applicationName: `${schema}-interactions` })
  )
})).pipe(Layer.provide(Reactivity.layer))

/**
 * A fresh PostgreSQL database of its own on TEST_DATABASE_URL's server, dropped when the scope
 * closes. For tests that read what VACUUM removes: its horizon is per database, so a transaction of
 * another suite in the shared database (with three test workers, there always is one) keeps every
 * row deleted after it started, whatever schema they are in.
 */
const postgresDatabase = Layer.unwrap(Effect.gen(function*() {
  const name = `t_${randomBytes(6).toString("hex")}`
  const shared = new URL(process.env.TEST_DATABASE_URL!)
  const admin = yield* PgClient.make({ url: Redacted.make(shared.href), maxConnections: 1 })
  // template0: no session is ever connected to it, so concurrent creates never find it in use.
  yield* admin.unsafe(`CREATE DATABASE ${name} TEMPLATE template0`)
  yield* Effect.addFinalizer(() => admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
  const own = new URL(shared.href)
  own.pathname = `/${name}`
  return Layer.merge(
    PgClient.layer({ url: Redacted.make(own.href), maxConnections: 5 }),
    InteractionsSqlLive(Redacted.make(own.href), { applicationName: `${name}-interactions` })
  )
})).pipe(Layer.provide(Reactivity.layer))

const useTemplates = process.env.TEST_PGLITE_TEMPLATE !== "0"

/** A PGlite in memory started from the saved folder `from` (its URL, as embeddedPostgres answers). */
export const embeddedFrom = (from: TemplateKind): Effect.Effect<Redacted.Redacted<string>, Error, Scope.Scope> =>
  Effect.gen(function*() {
    if (!useTemplates) return yield* embeddedPostgres("memory://")
    const loadDataDir = yield* Effect.tryPromise({
      try: () => template(from),
      catch: (cause) => new Error(`no PGlite template: ${String(cause)}`)
    })
    return yield* embeddedPostgres("memory://", { loadDataDir })
  })

const pglite = (from: TemplateKind) =>
  Layer.unwrap(Effect.map(embeddedFrom(from), (url) => PgClient.layer({ url, maxConnections: 1 })))

/** An empty database (nothing created in it) of the given kind. */
export const rawDb = (kind: DbKind): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, unknown> =>
  kind === "postgres" ? postgresSchema : pglite("empty")

/**
 * A migrated database of the given kind. On PGlite it starts with every migration applied, and
 * the migrations find nothing to do; `fresh`: an empty one they all run on (tests of the migrations).
 * `ownDatabase`: on PostgreSQL, a database of its own rather than a schema of the shared one.
 */
// Migrations at Warn: the "database migrated" line of every suite would drown the test output.
export const testDb = (kind: DbKind, options: { readonly fresh?: boolean; readonly ownDatabase?: boolean } = {}) =>
  MigrationsLayer.pipe(
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
    Layer.provideMerge(
      kind === "postgres" ? (options.ownDatabase === true ? postgresDatabase : postgresSchema)
      : options.fresh === true ? rawDb(kind) : pglite("migrated")
    )
  )
