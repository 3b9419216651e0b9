import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Feed insight (delivery.md §8):
 * - the delivery log's page: an index over the finished deliveries of a feed (sent, failed,
 *   skipped), newest first, that a page reads without touching other rows, and an exact count per
 *   feed kept by statement triggers (so `page_max` never counts rows, at any size of the log);
 * - the cool-downs of the test message (per feed) and of the manual refresh (per source), shared by
 *   every gateway instance on the database;
 * - the disable notices (a direct message to a disabled feed's creator) waiting, and when each
 *   user was last sent one.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX feed_deliveries_log ON feed_deliveries (feed_id, at, id)
    WHERE state IN ('sent', 'failed', 'skipped')`
  // No foreign key: a feed's delete cascades to its deliveries, whose trigger then counts them out.
  yield* sql`CREATE TABLE feed_delivery_log_counts (
    feed_id bigint PRIMARY KEY,
    n bigint NOT NULL DEFAULT 0
  )`
  // One function per statement kind, each adding its per-feed delta in feed order (locks taken in
  // one order by every writer), then dropping the rows of feeds left with none (a deleted feed).
  const upsert = (delta: string) => `
    INSERT INTO feed_delivery_log_counts AS c (feed_id, n)
      SELECT feed_id, sum(d) FROM (${delta}) AS deltas GROUP BY feed_id HAVING sum(d) <> 0 ORDER BY feed_id
      ON CONFLICT (feed_id) DO UPDATE SET n = c.n + EXCLUDED.n;
    DELETE FROM feed_delivery_log_counts WHERE n <= 0;`
  const finished = `state IN ('sent', 'failed', 'skipped')`
  const added = `SELECT feed_id, 1 AS d FROM new_rows WHERE ${finished}`
  const removed = `SELECT feed_id, -1 AS d FROM old_rows WHERE ${finished}`
  yield* sql.unsafe(`CREATE FUNCTION feed_delivery_log_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${upsert(added)} RETURN NULL; END $$`)
  yield* sql.unsafe(`CREATE FUNCTION feed_delivery_log_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${upsert(`${added} UNION ALL ${removed}`)} RETURN NULL; END $$`)
  yield* sql.unsafe(`CREATE FUNCTION feed_delivery_log_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${upsert(removed)} RETURN NULL; END $$`)
  yield* sql.unsafe(`CREATE TRIGGER feed_delivery_log_insert AFTER INSERT ON feed_deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION feed_delivery_log_on_insert()`)
  yield* sql.unsafe(`CREATE TRIGGER feed_delivery_log_update AFTER UPDATE ON feed_deliveries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION feed_delivery_log_on_update()`)
  yield* sql.unsafe(`CREATE TRIGGER feed_delivery_log_delete AFTER DELETE ON feed_deliveries
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION feed_delivery_log_on_delete()`)
  yield* sql`INSERT INTO feed_delivery_log_counts (feed_id, n)
    SELECT feed_id, count(*) FROM feed_deliveries WHERE state IN ('sent', 'failed', 'skipped') GROUP BY feed_id`
  // Keys: `test:<feed id>`, `refresh:<source id>`; a row is free again once `until` has passed.
  yield* sql`CREATE TABLE feed_insight_cooldowns (
    key text PRIMARY KEY,
    until timestamptz NOT NULL
  )`
  // Disable notices: a row whenever a feed becomes disabled, written by the disabling transaction
  // itself (a trigger: whoever disables, and only if it commits); sent grouped per user (the
  // recipients' last message), at most one an hour (DisableNotices.ts).
  yield* sql`CREATE TABLE feed_disable_notices (
    id bigserial PRIMARY KEY,
    feed_id bigint NOT NULL,
    reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz
  )`
  yield* sql`CREATE INDEX feed_disable_notices_open ON feed_disable_notices (id) WHERE sent_at IS NULL`
  yield* sql`CREATE TABLE feed_notice_recipients (
    bot_id text NOT NULL,
    user_id text NOT NULL,
    last_sent_at timestamptz,
    PRIMARY KEY (bot_id, user_id)
  )`
  yield* sql.unsafe(`CREATE FUNCTION feed_disable_notice() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO feed_disable_notices (feed_id, reason) VALUES (NEW.feed_id, NEW.reason); RETURN NULL; END $$`)
  yield* sql.unsafe(`CREATE TRIGGER feed_disable_notice_update AFTER UPDATE OF state ON feed_status FOR EACH ROW
    WHEN (NEW.state = 'disabled' AND OLD.state <> 'disabled') EXECUTE FUNCTION feed_disable_notice()`)
  yield* sql.unsafe(`CREATE TRIGGER feed_disable_notice_insert AFTER INSERT ON feed_status FOR EACH ROW
    WHEN (NEW.state = 'disabled') EXECUTE FUNCTION feed_disable_notice()`)
})
