/**
 * The database: PostgreSQL through @effect/sql-pg when DATABASE_URL is set; otherwise an embedded
 * PGlite database in DATA_DIR served on a loopback port to the same PgClient (layers/Embedded.ts,
 * loaded only then, so production never loads PGlite).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { MigrationsLayer } from "../migrations/Migrations.ts"
import { InteractionsSqlLive } from "./InteractionsSql.ts"

export interface DatabaseOptions {
  readonly url: Redacted.Redacted<string> | undefined
  readonly dataDir: string
  /** The pool's size on PostgreSQL (DATABASE_POOL_SIZE; default 10). The embedded database serves one. */
  readonly maxConnections?: number | undefined
  /** `application_name` of the connections, as `pg_stat_activity` shows them (`gateway-api`, …). */
  readonly applicationName?: string | undefined
  /** The migrated folder a new embedded database starts from (default: the one beside the bundle, if built). */
  readonly embeddedTemplate?: string | undefined
}

const pg = (url: Redacted.Redacted<string>, maxConnections: number, applicationName: string | undefined) =>
  PgClient.layer({ url: Redacted.make(Redacted.value(url)), maxConnections, connectTimeout: "5 seconds", applicationName })

/**
 * The SqlClient, migrated; on PostgreSQL also the interactions' own pipelined pool (InteractionsSql.ts,
 * at most 2 more connections, opened when an interaction first needs one).
 */
export const DatabaseLive = (
  options: DatabaseOptions
): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError | Error> => {
  const client = options.url !== undefined
    ? Layer.merge(
      pg(options.url, options.maxConnections ?? 10, options.applicationName),
      InteractionsSqlLive(options.url, {
        applicationName: options.applicationName === undefined ? undefined : `${options.applicationName}-interactions`
      })
    )
    : Layer.unwrap(Effect.gen(function*() {
      const { bundledTemplate, embeddedPostgres } = yield* Effect.promise(() => import("./Embedded.ts"))
      // A new folder starts from the build's migrated copy (dist/pglite-migrated/) when there is one.
      const url = yield* embeddedPostgres(options.dataDir, { template: options.embeddedTemplate ?? bundledTemplate })
      return pg(url, 1, options.applicationName)
    }))
  return MigrationsLayer.pipe(Layer.provideMerge(client))
}
