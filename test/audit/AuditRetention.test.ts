/** AUDIT_RETENTION_DAYS: only expired entries go, in batches, and the counts follow. */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { AuditRetention, purgeExpired } from "../../src/layers/audit/AuditRetention.ts"
import { dbKinds } from "../utils/Db.ts"
import { BOT, entry, freshServer, Seeder, sqlLayer } from "./AuditFixtures.ts"

const DAY = 86_400_000

const remaining = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ item_identifier: bigint }>`SELECT item_identifier FROM audit_entries
      WHERE server_id = ${serverId} ORDER BY item_identifier`
    const counts = yield* sql<{ level: number; n: bigint }>`SELECT level, sum(n)::int8 AS n FROM audit_counts
      WHERE server_id = ${serverId} GROUP BY level ORDER BY level`
    return { items: rows.map((r) => Number(r.item_identifier)), counts: counts.map((c) => Number(c.n)) }
  })

/** Seeds entries aged 45, 31, 30.5, 29 and 0 days (items 1..5). */
const seedAges = (serverId: string) =>
  Seeder.use(({ seed }) =>
    Effect.forEach([45, 31, 30.5, 29, 0], (age, i) => seed(entry(serverId, i + 1), new Date(Date.now() - age * DAY)), {
      discard: true
    }))

for (const kind of dbKinds) {
  layer(sqlLayer(kind), { timeout: 60_000, excludeTestServices: true })(`audit retention (${kind})`, (it) => {
    it.effect("a purge removes only expired entries, in batches, and keeps the counts exact", () =>
      Effect.gen(function*() {
        const server = freshServer()
        yield* seedAges(server)
        const deleted = yield* purgeExpired(30, { batchSize: 1, pause: "1 millis" })
        assert.isAtLeast(deleted, 3) // other suites' servers in this database may hold expired entries too
        assert.deepStrictEqual(yield* remaining(server), { items: [4, 5], counts: [2] })
        const page = yield* AuditLog.use((log) => log.query({ botId: BOT, serverId: server }, { page_size: "1" }))
        assert.deepStrictEqual([page.page_max, page.logs.map((l) => l.item_identifier)], [2, [5]])
        assert.strictEqual(yield* purgeExpired(30), 0)
      }))

    it.effect("the layer runs the purge in the background on a schedule", () =>
      Effect.gen(function*() {
        const server = freshServer()
        yield* seedAges(server)
        yield* Effect.gen(function*() {
          for (let i = 0; i < 100; i++) {
            if ((yield* remaining(server)).items.length === 2) break
            yield* Effect.sleep("50 millis")
          }
          assert.deepStrictEqual((yield* remaining(server)).items, [4, 5])
          yield* Seeder.use(({ seed }) => seed(entry(server, 6), new Date(Date.now() - 40 * DAY)))
          for (let i = 0; i < 100; i++) {
            if ((yield* remaining(server)).items.length === 2) break
            yield* Effect.sleep("50 millis")
          }
          assert.deepStrictEqual(yield* remaining(server), { items: [4, 5], counts: [2] })
        }).pipe(Effect.provide(AuditRetention(30, { every: "100 millis", batchSize: 2 })))
      }))

    it.effect("without AUDIT_RETENTION_DAYS nothing is deleted", () =>
      Effect.gen(function*() {
        const server = freshServer()
        yield* seedAges(server)
        yield* Effect.sleep("1 millis").pipe(Effect.provide(Layer.mergeAll(AuditRetention(undefined), AuditRetention(0))))
        assert.deepStrictEqual((yield* remaining(server)).items, [1, 2, 3, 4, 5])
      }))
  })
}
