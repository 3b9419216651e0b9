/**
 * One query suite, several implementations: each target gives an AuditLog layer and a Seeder that
 * writes entries at chosen times (SQL: a plain INSERT, the counts triggers included; memory: the store).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { EventType } from "../../src/domain/audit/AuditLog.ts"
import { type AuditEntryInput, AuditLog } from "../../src/services/audit/AuditLog.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { AuditLogMemory, AuditLogMemoryStore } from "../layers/AuditLogMemory.ts"
import { type DbKind, dbKinds, testDb } from "../utils/Db.ts"

export class Seeder extends Context.Service<Seeder, {
  readonly seed: (entry: AuditEntryInput, at: Date) => Effect.Effect<void>
}>()("test/AuditSeeder") {}

export interface Target {
  readonly name: string
  readonly layer: Layer.Layer<AuditLog | Seeder, unknown>
}

const sqlSeeder = Layer.effect(
  Seeder,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Seeder.of({
      seed: (e, at) =>
        sql`INSERT INTO audit_entries
            (bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
          VALUES (${e.botId}, ${e.serverId}, ${at}, ${e.actor.userId}, ${e.actor.userName}, ${e.actor.avatar},
            ${e.module}, ${e.itemIdentifier}, ${e.eventType}, ${e.eventString})`.pipe(Effect.asVoid, Effect.orDie)
    })
  })
)

export const sqlLayer = (kind: DbKind) => Layer.mergeAll(AuditLogSql, sqlSeeder).pipe(Layer.provideMerge(testDb(kind)))

const memorySeeder = Layer.effect(
  Seeder,
  Effect.gen(function*() {
    const store = yield* AuditLogMemoryStore
    return Seeder.of({ seed: store.appendAt })
  })
)

export const targets: ReadonlyArray<Target> = [
  { name: "memory", layer: memorySeeder.pipe(Layer.provideMerge(AuditLogMemory)) },
  ...dbKinds.map((kind) => ({ name: `sql on ${kind}`, layer: sqlLayer(kind) }))
]

let serverSeq = 0
/** A fresh server id per test: suites share one database per block. */
export const freshServer = () => `${900_000 + process.pid * 1000 + ++serverSeq}`

export const BOT = "100"

export const entry = (
  serverId: string,
  n: number,
  overrides: Partial<{ module: string; botId: string; eventType: EventType; userName: string; avatar: string | null }> = {}
): AuditEntryInput => ({
  botId: overrides.botId ?? BOT,
  serverId,
  actor: { userId: "42", userName: overrides.userName ?? "ada", avatar: overrides.avatar === undefined ? "a1b2" : overrides.avatar },
  module: overrides.module ?? "forms",
  itemIdentifier: n,
  eventType: overrides.eventType ?? "PUSH",
  eventString: `event ${n}`
})

/** Seeds `count` entries one minute apart from `from`, item_identifier 1..count. */
export const seedMany = (serverId: string, count: number, from = Date.UTC(2024, 0, 1), step = 60_000) =>
  Seeder.use(({ seed }) =>
    Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) => seed(entry(serverId, i + 1), new Date(from + i * step)), {
      discard: true
    }))
