/** Migrations run at start (and in tests); each is a module numbered `NNNN_name`. */
import { Effect, Layer } from "effect"
import { Migrator } from "effect/sql"
import initial from "./0001_initial.ts"
import audit from "./0004_audit.ts"

export const migrations = {
  "0001_initial": initial,
  "0004_audit": audit
}

const run = Migrator.make({})

export const runMigrations = run({ loader: Migrator.fromRecord(migrations), table: "gateway_migrations" })

/** Applies pending migrations when built; re-applying is a no-op. */
export const MigrationsLayer = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) =>
      applied.length === 0 ? Effect.void : Effect.logInfo("database migrated", { applied: applied.map(([, n]) => n) })
    )
  )
)
