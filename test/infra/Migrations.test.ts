import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseLive } from "../../src/layers/infra/Database.ts"
import { runMigrations } from "../../src/layers/migrations/Migrations.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

for (const kind of dbKinds) {
  layer(testDb(kind, { fresh: true }), { excludeTestServices: true })(`migrations on ${kind}`, (it) => {
    it.effect("creates every table, and re-applying is a no-op", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql<{ table_name: string }>`
          SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`
        const names = tables.map((t) => t.table_name)
        for (const t of ["users", "bots", "token_families", "tokens", "sign_in_states", "forms", "form_steps", "feeds", "audit_entries", "taskboard_pairings"]) {
          assert.include(names, t)
        }
        const again = yield* runMigrations
        assert.deepStrictEqual(again, [])
      }))
  })
}

describe("embedded database", () => {
  it.effect("keeps data across a restart", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "gateway-db-"))
      const db = DatabaseLive({ url: undefined, dataDir: dir })
      const write = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO users (id, username) VALUES ('42', 'persisted')`
      })
      const read = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ username: string }>`SELECT username FROM users WHERE id = '42'`
      })
      yield* write.pipe(Effect.provide(Layer.fresh(db)))
      const rows = yield* read.pipe(Effect.provide(Layer.fresh(db)))
      assert.deepStrictEqual(rows.map((r) => r.username), ["persisted"])
      rmSync(dir, { recursive: true, force: true })
    }), 60_000)
})
