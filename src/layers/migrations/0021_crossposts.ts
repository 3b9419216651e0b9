import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Crossposting (issue #34, delivery.md §10 `crosspost`):
 * - `feed_crossposts`: the publications reserved per announcement channel, one row per delivery
 *   (`slots`: its messages, up to 3 with `split`). The budget of a channel is 10 slots in any
 *   hour, whoever's feed takes them (DeliveryCrosspostSql.ts reserves under a lock of the channel).
 *   The delivery's id as key: a delivery is never crossposted twice. No foreign key: a deleted
 *   feed's publications still count against its channel for their hour. Kept as long as the
 *   delivery log (retention).
 * - `feed_status.not_crossposted`: the feed's posted deliveries not crossposted (over the budget,
 *   or refused by the platform), since creation, like `delivered` and `skipped`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE feed_crossposts (
    delivery_id bigint PRIMARY KEY,
    channel_id text NOT NULL,
    slots integer NOT NULL CHECK (slots > 0),
    at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX feed_crossposts_channel ON feed_crossposts (channel_id, at)`
  yield* sql`CREATE INDEX feed_crossposts_at ON feed_crossposts (at)`
  yield* sql`ALTER TABLE feed_status ADD COLUMN not_crossposted bigint NOT NULL DEFAULT 0`
})
