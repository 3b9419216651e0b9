import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Exact audit counts at scale. `audit_counts` holds, per (server, bot) and epoch-aligned bucket, the
 * number of entries (`n`) and the number per module (one column each). Levels: 2 = 32 days, 1 = day,
 * 0 = hour. Level 2 rows always exist; the children of a bucket exist exactly while it holds more
 * than AUDIT_DENSE entries, so a small server costs a row per month, and a busy one is still never
 * counted or skipped more than AUDIT_DENSE entries (or one hour) at a time through the index.
 * Row triggers keep this exact in the transaction of every insert or delete.
 * `audit_at` lets the retention job find expired entries without scanning the table.
 * Queries use (server, bot, at DESC, id DESC) and, with a module, (module, server, bot, at DESC, id DESC).
 */
export const AUDIT_DENSE = 1000
export const AUDIT_LEVEL_SECONDS = [3600, 86400, 2764800] as const
export const AUDIT_COUNT_MODULES = ["forms", "photo", "forum", "rss", "streaming", "microblog", "video"] as const

const counts = ["n", ...AUDIT_COUNT_MODULES]
const seconds = `(ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}])`

// Row-level BEFORE triggers: SQL run inside them sees the rows processed earlier in the same
// statement but not the current one, so a backfill plus this row's own increment is exact even for
// multi-row inserts and deletes. Counter rows are always locked top-down (block, day, hour).
const onInsert = `
  FOR lvl IN REVERSE 2..0 LOOP
    INSERT INTO audit_counts AS c (server_id, bot_id, level, bucket, ${counts.join(", ")})
    VALUES (NEW.server_id, NEW.bot_id, lvl, audit_bucket(NEW.at, lvl), 1,
      ${AUDIT_COUNT_MODULES.map((m) => `(NEW.module_name = '${m}')::int`).join(", ")})
    ON CONFLICT (server_id, bot_id, level, bucket) DO UPDATE SET
      ${counts.map((c) => `${c} = c.${c} + EXCLUDED.${c}`).join(", ")}
    RETURNING n INTO total;
    EXIT WHEN total <= ${AUDIT_DENSE} OR lvl = 0;
    IF total = ${AUDIT_DENSE + 1} THEN
      -- The bucket just became dense: its children, from the entries already there; this row is added next.
      INSERT INTO audit_counts AS c (server_id, bot_id, level, bucket, ${counts.join(", ")})
      SELECT NEW.server_id, NEW.bot_id, lvl - 1, audit_bucket(e.at, lvl - 1), count(*),
        ${AUDIT_COUNT_MODULES.map((m) => `count(*) FILTER (WHERE e.module_name = '${m}')`).join(", ")}
      FROM audit_entries e
      WHERE e.server_id = NEW.server_id AND e.bot_id = NEW.bot_id
        AND e.at >= to_timestamp(audit_bucket(NEW.at, lvl) * ${seconds}[lvl + 1])
        AND e.at < to_timestamp((audit_bucket(NEW.at, lvl) + 1) * ${seconds}[lvl + 1])
      GROUP BY 4 ORDER BY 4
      ON CONFLICT (server_id, bot_id, level, bucket) DO UPDATE SET ${counts.map((c) => `${c} = EXCLUDED.${c}`).join(", ")};
    END IF;
  END LOOP;
  RETURN NEW;`

const onDelete = `
  FOR lvl IN REVERSE 2..0 LOOP
    UPDATE audit_counts SET ${counts.map((c) => `${c} = ${c} - ${c === "n" ? "1" : `(OLD.module_name = '${c}')::int`}`).join(", ")}
    WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = lvl AND bucket = audit_bucket(OLD.at, lvl)
    RETURNING n INTO total;
    EXIT WHEN NOT FOUND;
    IF total <= 0 THEN
      DELETE FROM audit_counts WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level = lvl AND bucket = audit_bucket(OLD.at, lvl);
    END IF;
    EXIT WHEN total < ${AUDIT_DENSE} OR lvl = 0;
    IF total = ${AUDIT_DENSE} THEN
      -- The bucket is no longer dense: its descendants go.
      DELETE FROM audit_counts
      WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level < lvl
        AND bucket >= audit_bucket(OLD.at, lvl) * (${seconds}[lvl + 1] / ${seconds}[level + 1])
        AND bucket < (audit_bucket(OLD.at, lvl) + 1) * (${seconds}[lvl + 1] / ${seconds}[level + 1]);
      EXIT;
    END IF;
  END LOOP;
  RETURN OLD;`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE audit_counts (
    server_id text NOT NULL,
    bot_id text NOT NULL,
    level smallint NOT NULL,
    bucket bigint NOT NULL,
    n bigint NOT NULL,
    ${AUDIT_COUNT_MODULES.map((m) => `${m} bigint NOT NULL DEFAULT 0`).join(",\n    ")},
    PRIMARY KEY (server_id, bot_id, level, bucket)
  )`)
  yield* sql`CREATE INDEX audit_at ON audit_entries (at)`
  // Module first: with (server, bot, module, at) a cached generic plan of an all-modules query may
  // pick that index and scan every entry of the server; a leading module column rules it out.
  yield* sql`DROP INDEX audit_server_module_time`
  yield* sql`CREATE INDEX audit_module_server_time ON audit_entries (module_name, server_id, bot_id, at DESC, id DESC)`
  // Exact (numeric) epoch: the bucket of an entry one microsecond before a boundary stays below it.
  yield* sql.unsafe(`CREATE FUNCTION audit_bucket(at timestamptz, level integer) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN floor(extract(epoch FROM at) / (ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}])[level + 1])::bigint`)
  yield* sql.unsafe(`CREATE FUNCTION audit_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE total bigint;
BEGIN${onInsert}
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION audit_counts_sub() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE total bigint;
BEGIN${onDelete}
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION audit_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE audit_counts;
  RETURN NULL;
END $$`)
  yield* sql`CREATE TRIGGER audit_counts_on_insert BEFORE INSERT ON audit_entries
    FOR EACH ROW EXECUTE FUNCTION audit_counts_add()`
  yield* sql`CREATE TRIGGER audit_counts_on_delete BEFORE DELETE ON audit_entries
    FOR EACH ROW EXECUTE FUNCTION audit_counts_sub()`
  yield* sql`CREATE TRIGGER audit_counts_on_truncate AFTER TRUNCATE ON audit_entries
    FOR EACH STATEMENT EXECUTE FUNCTION audit_counts_clear()`
  // Entries are append-only: an update would silently desynchronise the counts.
  yield* sql.unsafe(`CREATE FUNCTION audit_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit entries are append-only';
END $$`)
  yield* sql`CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries
    FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_immutable()`
})
