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

export interface DatabaseOptions {
  readonly url: Redacted.Redacted<string> | undefined
  readonly dataDir: string
  readonly maxConnections?: number
}

const pg = (url: Redacted.Redacted<string>, maxConnections: number) =>
  PgClient.layer({ url: Redacted.make(Redacted.value(url)), maxConnections, connectTimeout: "5 seconds" })

/** The SqlClient, migrated. */
export const DatabaseLive = (
  options: DatabaseOptions
): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError | Error> => {
  const client = options.url !== undefined
    ? pg(options.url, options.maxConnections ?? 10)
    : Layer.unwrap(Effect.gen(function*() {
      const { embeddedPostgres } = yield* Effect.promise(() => import("./Embedded.ts"))
      const url = yield* embeddedPostgres(options.dataDir)
      return pg(url, 1)
    }))
  return MigrationsLayer.pipe(Layer.provideMerge(client))
}
