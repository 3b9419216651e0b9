/**
 * The FeedInsightStore contract on every layer: memory (over its own log), and SQL on PGlite (and
 * PostgreSQL with TEST_DATABASE_URL), whose deliveries are the rows of `feed_deliveries` as the
 * delivery engine leaves them (the log's count is kept by that table's triggers).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { FeedInsightStoreSql } from "../../src/layers/insight/FeedInsightStoreSql.ts"
import { FeedInsightMemoryLog, FeedInsightStoreMemory } from "../layers/FeedInsightStoreMemory.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { feedInsightStoreContract } from "./FeedInsightStore.contract.ts"

let memoryFeeds = 0
feedInsightStoreContract("FeedInsightStoreMemory", FeedInsightStoreMemory, {
  newFeed: Effect.sync(() => String(++memoryFeeds)),
  record: (feedId, rows) => FeedInsightMemoryLog.use((log) => Effect.forEach(rows, (r) => log.record(feedId, r), { discard: true })),
  update: (feedId, itemId, change) => FeedInsightMemoryLog.use((log) => log.update(feedId, itemId, change)),
  removeFeed: (feedId) => FeedInsightMemoryLog.use((log) => log.removeFeed(feedId))
})

let sqlFeeds = 0
const sql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Effect.flatMap(SqlClient.SqlClient, f)

for (const kind of dbKinds) {
  feedInsightStoreContract(`FeedInsightStoreSql on ${kind}`, FeedInsightStoreSql.pipe(Layer.provideMerge(testDb(kind))), {
    newFeed: sql((sql) => {
      const n = ++sqlFeeds
      return Effect.map(
        sql<{ id: unknown }>`INSERT INTO feeds (bot_id, server_id, module, feed_identifier, webhook_options,
            webhook_id, webhook_token_enc, webhook_name, webhook_channel_id)
          VALUES ('200000000000000002', '300000000000000001', 'rss', ${`https://news.test/insight-${n}.xml`}, '{}'::jsonb,
            ${`35000000000000${String(n).padStart(4, "0")}`}, 'unused', 'hook', '310000000000000002')
          RETURNING id`,
        (rows) => String(rows[0]!.id)
      )
    }),
    // One statement a row, so the ids ascend in the order given.
    record: (feedId, rows) =>
      sql((sql) =>
        Effect.forEach(rows, (r) =>
          sql`INSERT INTO feed_deliveries (feed_id, item_id, title, url, state, reason, message_id, webhook_id, event_at, at)
            VALUES (${feedId}, ${r.itemId}, ${r.title ?? null}, ${r.url ?? null}, ${r.state}, ${r.reason ?? null},
              ${r.messageId ?? null}, ${`wh-${feedId}`}, ${r.at}, ${r.at})`, { discard: true })),
    update: (feedId, itemId, c) =>
      sql((sql) =>
        sql`UPDATE feed_deliveries SET state = ${c.state}, at = ${c.at}, reason = ${c.reason}, message_id = ${c.messageId}
          WHERE feed_id = ${feedId} AND item_id = ${itemId}`),
    removeFeed: (feedId) => sql((sql) => sql`DELETE FROM feeds WHERE id = ${feedId}`)
  })
}
