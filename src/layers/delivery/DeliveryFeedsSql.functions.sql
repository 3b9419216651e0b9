-- The database functions as they are after every migration (pg_get_functiondef, schema left out).
-- Triggers on the tables DeliveryFeedsSql.ts writes: feed_deliveries (the per-feed log counts
-- FeedInsightStoreSql reads) and feed_status (the notices DisableNoticesSql sends).
-- Read-only mirror: a change goes in a new migration, then here; test/infra/SqlFunctions.test.ts
-- fails while the two differ (and prints the definition the database has).

-- feed_delivery_log_on_insert, shaped by migrations 0007_feed_insight; fired by feed_delivery_log_insert (after insert on feed_deliveries)
CREATE OR REPLACE FUNCTION feed_delivery_log_on_insert()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN 
    INSERT INTO feed_delivery_log_counts AS c (feed_id, n)
      SELECT feed_id, sum(d) FROM (SELECT feed_id, 1 AS d FROM new_rows WHERE state IN ('sent', 'failed', 'skipped')) AS deltas GROUP BY feed_id HAVING sum(d) <> 0 ORDER BY feed_id
      ON CONFLICT (feed_id) DO UPDATE SET n = c.n + EXCLUDED.n;
    DELETE FROM feed_delivery_log_counts WHERE n <= 0; RETURN NULL; END $function$;

-- feed_delivery_log_on_update, shaped by migrations 0007_feed_insight; fired by feed_delivery_log_update (after update on feed_deliveries)
CREATE OR REPLACE FUNCTION feed_delivery_log_on_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN 
    INSERT INTO feed_delivery_log_counts AS c (feed_id, n)
      SELECT feed_id, sum(d) FROM (SELECT feed_id, 1 AS d FROM new_rows WHERE state IN ('sent', 'failed', 'skipped') UNION ALL SELECT feed_id, -1 AS d FROM old_rows WHERE state IN ('sent', 'failed', 'skipped')) AS deltas GROUP BY feed_id HAVING sum(d) <> 0 ORDER BY feed_id
      ON CONFLICT (feed_id) DO UPDATE SET n = c.n + EXCLUDED.n;
    DELETE FROM feed_delivery_log_counts WHERE n <= 0; RETURN NULL; END $function$;

-- feed_delivery_log_on_delete, shaped by migrations 0007_feed_insight; fired by feed_delivery_log_delete (after delete on feed_deliveries)
CREATE OR REPLACE FUNCTION feed_delivery_log_on_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN 
    INSERT INTO feed_delivery_log_counts AS c (feed_id, n)
      SELECT feed_id, sum(d) FROM (SELECT feed_id, -1 AS d FROM old_rows WHERE state IN ('sent', 'failed', 'skipped')) AS deltas GROUP BY feed_id HAVING sum(d) <> 0 ORDER BY feed_id
      ON CONFLICT (feed_id) DO UPDATE SET n = c.n + EXCLUDED.n;
    DELETE FROM feed_delivery_log_counts WHERE n <= 0; RETURN NULL; END $function$;

-- feed_disable_notice, shaped by migrations 0007_feed_insight; fired by feed_disable_notice_update (after update of state on feed_status), feed_disable_notice_insert (after insert on feed_status)
CREATE OR REPLACE FUNCTION feed_disable_notice()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN INSERT INTO feed_disable_notices (feed_id, reason) VALUES (NEW.feed_id, NEW.reason); RETURN NULL; END $function$;
