import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, References } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseLive } from "../../src/layers/infra/Database.ts"
import { buildMigratedTemplate } from "../../src/layers/infra/EmbeddedTemplate.ts"
import { migrations, runMigrations } from "../../src/layers/migrations/Migrations.ts"
import { catalogSnapshot } from "../utils/CatalogSnapshot.ts"
import { testDb } from "../utils/Db.ts"

/** The migration rows, without their times (the template's were applied at build time). */
const migrationRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ migration_id: number; name: string; created_at: Date }>`
    SELECT migration_id, name, created_at FROM gateway_migrations ORDER BY migration_id`
  return rows
})

const quiet = <A, E, R>(layer: Layer.Layer<A, E, R>) => layer.pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")))

describe("a new embedded database started from the build's migrated template", () => {
  it.live("has the schema and migration rows that migrating an empty database gives, and keeps its data across a restart", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "gateway-template-"))
      const file = join(dir, "pglite-migrated")
      yield* Effect.promise(() => buildMigratedTemplate(file))
      const startedAt = new Date()
      const fromTemplate = Layer.fresh(quiet(DatabaseLive({ url: undefined, dataDir: join(dir, "data"), embeddedTemplate: file })))

      const [catalog, rows, again] = yield* Effect.all([catalogSnapshot, migrationRows, runMigrations]).pipe(
        Effect.tap(() => SqlClient.SqlClient.use((sql) => sql`INSERT INTO users (id, username) VALUES ('42', 'kept')`)),
        Effect.provide(fromTemplate)
      )
      // Nothing was migrated at start: every row is the template's, written before this start.
      assert.deepStrictEqual(rows.map((r) => r.name), Object.keys(migrations).map((k) => k.slice(5)))
      assert.isTrue(rows.every((r) => r.created_at.getTime() < startedAt.getTime()))
      assert.deepStrictEqual(again, [])

      const [migratedCatalog, migratedRows] = yield* Effect.all([catalogSnapshot, migrationRows]).pipe(
        Effect.provide(Layer.fresh(testDb("pglite", { fresh: true })))
      )
      assert.isAbove(catalog.length, 100)
      assert.deepStrictEqual(catalog, migratedCatalog)
      assert.deepStrictEqual(rows.map((r) => [r.migration_id, r.name]), migratedRows.map((r) => [r.migration_id, r.name]))

      // The second start finds a database in the folder: it is opened, not replaced by the template.
      const kept = yield* SqlClient.SqlClient.use((sql) => sql<{ username: string }>`SELECT username FROM users`).pipe(
        Effect.provide(fromTemplate)
      )
      assert.deepStrictEqual(kept.map((r) => r.username), ["kept"])
      rmSync(dir, { recursive: true, force: true })
    }), 120_000)

  it.live("migrates from scratch when there is no template", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "gateway-template-"))
      const startedAt = new Date()
      const rows = yield* migrationRows.pipe(
        Effect.provide(Layer.fresh(quiet(DatabaseLive({ url: undefined, dataDir: dir, embeddedTemplate: join(dir, "missing") }))))
      )
      assert.strictEqual(rows.length, Object.keys(migrations).length)
      assert.isTrue(rows.every((r) => r.created_at.getTime() >= startedAt.getTime() - 1000))
      rmSync(dir, { recursive: true, force: true })
    }), 120_000)
})
