/**
 * The DisableNoticeStore contract on every layer: memory (over the memory feeds, audit log and
 * bots), and SQL on PGlite (and PostgreSQL with TEST_DATABASE_URL) with the stores of its kind,
 * where a feed is disabled through DeliveryStore (the trigger of migration 0007 writes the notice).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { BotsSql } from "../../src/layers/platform/BotsSql.ts"
import { DeliveryStoreSql } from "../../src/layers/delivery/DeliveryStoreSql.ts"
import { DisableNoticesSql } from "../../src/layers/delivery/DisableNoticesSql.ts"
import { FeedsRepoSql } from "../../src/layers/feeds/FeedsRepoSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import { AuditLogMemory } from "../layers/AuditLogMemory.ts"
import { BotsMemory } from "../layers/BotsMemory.ts"
import { DisableNoticesMemory, DisableNoticesMemoryTable } from "../layers/DisableNoticesMemory.ts"
import { FeedsRepoMemoryShared } from "../layers/FeedsRepoMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { disableNoticesContract } from "./DisableNotices.contract.ts"

disableNoticesContract(
  "DisableNoticesMemory",
  DisableNoticesMemory.pipe(Layer.provideMerge(Layer.mergeAll(FeedsRepoMemoryShared, AuditLogMemory, BotsMemory([])))),
  {
    disable: (feedId, reason) => DisableNoticesMemoryTable.use((t) => t.disabled(feedId, reason)),
    hourPassed: (userId) => DisableNoticesMemoryTable.use((t) => t.backdate(userId, 61 * 60_000))
  }
)

for (const kind of dbKinds) {
  disableNoticesContract(
    `DisableNoticesSql on ${kind}`,
    Layer.mergeAll(DisableNoticesSql, DeliveryStoreSql, FeedsRepoSql, BotsSql, AuditLogSql).pipe(
      Layer.provideMerge(Cipher.layer(parseKeyring(generateKey()))),
      Layer.provideMerge(testDb(kind))
    ),
    {
      disable: (feedId, reason) =>
        Effect.asVoid(DeliveryStore.use((s) => s.setFeedState([feedId], ["active", "failing"], "disabled", reason))),
      hourPassed: (userId) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`UPDATE feed_notice_users SET last_sent_at = last_sent_at - interval '61 minutes' WHERE user_id = ${userId}`)
    }
  )
}
