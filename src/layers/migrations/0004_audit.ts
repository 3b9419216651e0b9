import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AUDIT_COUNT_MODULES, AUDIT_DENSE, AUDIT_LEVEL_SECONDS, AUDIT_SHARDS } from "../audit/AuditBuckets.ts"

/**
 * Exact audit counts at scale. `audit_count_shards` holds, per (server, bot), epoch-aligned bucket
 * and shard, a part of the number of entries (`n`) and of the number per module (one column each);
 * a bucket's counts are the sums over its shards (view `audit_counts`). Levels: 2 = 32 days,
 * 1 = day, 0 = hour.
 * - A sparse month (at most AUDIT_DENSE entries) is one row, shard 0, updated under its row lock.
 * - The insert that makes a month dense sets `dense` on that row and builds the month's days and
 *   hours from its entries; from then on every insert adds to its month, day and hour in the shard
 *   of its connection (1..AUDIT_SHARDS), so concurrent writers of one server no longer queue on one
 *   counter row until commit. The row of shard 0 is then only read (the `dense` flag).
 * - Inserts hold a shared advisory lock on the month; a delete holds it exclusively, so it sees the
 *   sums of every shard exact, and turns the month back into one sparse row when it drops to
 *   AUDIT_DENSE or fewer entries.
 * The view shows the invariant the readers rely on: level-2 rows for every month with entries, the
 * children of a bucket exactly while it holds more than AUDIT_DENSE entries (a dense month keeps all
 * its days and hours counted; the view hides the hours of its sparse days). A busy server is thus
 * never counted or skipped more than AUDIT_DENSE entries (or one hour) at a time through the index.
 * Row triggers keep this exact in the transaction of every insert or delete.
 * `audit_at` lets the retention job find expired entries without scanning the table.
 * Queries use (server, bot, at DESC, id DESC) and, with a module, (module, server, bot, at DESC, id DESC).
 * The constants live in layers/audit/AuditBuckets.ts, which the reader (AuditLogSql) shares.
 */

const counts = ["n", ...AUDIT_COUNT_MODULES]
const seconds = `(ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}])`
const key = (row: "NEW" | "OLD") => `${row}.server_id, ${row}.bot_id, 2::smallint, audit_bucket(${row}.at, 2)`
const one = (row: "NEW" | "OLD", sign: "" | "-") =>
  [`${sign}1`, ...AUDIT_COUNT_MODULES.map((m) => `${sign}(${row}.module_name = '${m}')::int`)].join(", ")
const add = (row: "NEW" | "OLD", sign: "+" | "-") =>
  counts.map((c) => `${c} = ${c} ${sign} ${c === "n" ? "1" : `(${row}.module_name = '${c}')::int`}`).join(", ")
const addExcluded = counts.map((c) => `${c} = c.${c} + EXCLUDED.${c}`).join(", ")
const sums = (alias: string) => counts.map((c) => `sum(${alias}.${c})::int8 AS ${c}`).join(", ")
const month = (row: "NEW" | "OLD") =>
  `server_id = ${row}.server_id AND bot_id = ${row}.bot_id AND level = 2 AND bucket = audit_bucket(${row}.at, 2)`
/** The month's advisory lock key (a collision only makes two months share a lock). */
const lockKey = (row: "NEW" | "OLD") => `hashtextextended(${row}.server_id || '/' || ${row}.bot_id, audit_bucket(${row}.at, 2))`

// Row-level BEFORE triggers: SQL run inside them sees the rows processed earlier in the same
// statement but not the current one, so a backfill plus this row's own increment is exact even for
// multi-row inserts and deletes. Locks are taken in one order: the month's advisory lock, its
// shard-0 row, then shard rows (months top-down: month, day, hour).
const onInsert = `
  PERFORM pg_advisory_xact_lock_shared(${lockKey("NEW")});
  LOOP
    UPDATE audit_count_shards SET ${add("NEW", "+")}
    WHERE ${month("NEW")} AND shard = 0 AND NOT dense
    RETURNING n INTO total;
    EXIT WHEN FOUND;
    SELECT dense INTO is_dense FROM audit_count_shards WHERE ${month("NEW")} AND shard = 0;
    IF NOT FOUND THEN
      INSERT INTO audit_count_shards (server_id, bot_id, level, bucket, shard, ${counts.join(", ")})
      VALUES (${key("NEW")}, 0, ${one("NEW", "")})
      ON CONFLICT DO NOTHING;
      IF FOUND THEN RETURN NEW; END IF;
    ELSIF is_dense THEN
      total := NULL;
      EXIT;
    END IF;
    -- Another transaction created the month meanwhile: count on its row.
  END LOOP;
  IF total IS NOT NULL THEN
    IF total <= ${AUDIT_DENSE} THEN RETURN NEW; END IF;
    -- The month just became dense: its days and hours, from the entries already there; this row is added next.
    UPDATE audit_count_shards SET dense = true WHERE ${month("NEW")} AND shard = 0;
    FOR lvl IN REVERSE 1..0 LOOP
      INSERT INTO audit_count_shards AS c (server_id, bot_id, level, bucket, shard, ${counts.join(", ")})
      SELECT NEW.server_id, NEW.bot_id, lvl, audit_bucket(e.at, lvl), 0, count(*),
        ${AUDIT_COUNT_MODULES.map((m) => `count(*) FILTER (WHERE e.module_name = '${m}')`).join(", ")}
      FROM audit_entries e
      WHERE e.server_id = NEW.server_id AND e.bot_id = NEW.bot_id
        AND e.at >= to_timestamp(audit_bucket(NEW.at, 2) * ${seconds}[3])
        AND e.at < to_timestamp((audit_bucket(NEW.at, 2) + 1) * ${seconds}[3])
      GROUP BY 4 ORDER BY 4
      ON CONFLICT (server_id, bot_id, level, bucket, shard) DO UPDATE SET ${counts.map((c) => `${c} = EXCLUDED.${c}`).join(", ")};
    END LOOP;
  END IF;
  -- A dense month: this row goes to the shard of this connection, at every level still to count.
  FOR lvl IN REVERSE (CASE WHEN total IS NULL THEN 2 ELSE 1 END)..0 LOOP
    INSERT INTO audit_count_shards AS c (server_id, bot_id, level, bucket, shard, ${counts.join(", ")})
    VALUES (NEW.server_id, NEW.bot_id, lvl, audit_bucket(NEW.at, lvl), 1 + pg_backend_pid() % ${AUDIT_SHARDS}, ${one("NEW", "")})
    ON CONFLICT (server_id, bot_id, level, bucket, shard) DO UPDATE SET ${addExcluded};
  END LOOP;
  RETURN NEW;`

const onDelete = `
  -- Exclusive: no insert of this month is in flight, so the sums over the shards are exact.
  PERFORM pg_advisory_xact_lock(${lockKey("OLD")});
  UPDATE audit_count_shards SET ${add("OLD", "-")}
  WHERE ${month("OLD")} AND shard = 0 AND NOT dense
  RETURNING n INTO total;
  IF FOUND THEN
    IF total <= 0 THEN
      DELETE FROM audit_count_shards WHERE ${month("OLD")} AND shard = 0;
    END IF;
    RETURN OLD;
  END IF;
  PERFORM FROM audit_count_shards WHERE ${month("OLD")} AND shard = 0;
  IF NOT FOUND THEN RETURN OLD; END IF;
  FOR lvl IN REVERSE 2..0 LOOP
    INSERT INTO audit_count_shards AS c (server_id, bot_id, level, bucket, shard, ${counts.join(", ")})
    VALUES (OLD.server_id, OLD.bot_id, lvl, audit_bucket(OLD.at, lvl), 0, ${one("OLD", "-")})
    ON CONFLICT (server_id, bot_id, level, bucket, shard) DO UPDATE SET ${addExcluded};
  END LOOP;
  SELECT sum(n) INTO total FROM audit_count_shards WHERE ${month("OLD")};
  IF total <= ${AUDIT_DENSE} THEN
    -- The month is no longer dense: back to one row, its days and hours go.
    UPDATE audit_count_shards SET dense = false, (${counts.join(", ")}) = (
      SELECT ${counts.map((c) => `sum(${c})::int8`).join(", ")} FROM audit_count_shards WHERE ${month("OLD")})
    WHERE ${month("OLD")} AND shard = 0;
    DELETE FROM audit_count_shards WHERE ${month("OLD")} AND shard <> 0;
    DELETE FROM audit_count_shards
    WHERE server_id = OLD.server_id AND bot_id = OLD.bot_id AND level < 2
      AND bucket >= audit_bucket(OLD.at, 2) * (${seconds}[3] / ${seconds}[level + 1])
      AND bucket < (audit_bucket(OLD.at, 2) + 1) * (${seconds}[3] / ${seconds}[level + 1]);
    IF total <= 0 THEN
      DELETE FROM audit_count_shards WHERE ${month("OLD")};
    END IF;
  END IF;
  RETURN OLD;`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE audit_count_shards (
    server_id text NOT NULL,
    bot_id text NOT NULL,
    level smallint NOT NULL,
    bucket bigint NOT NULL,
    shard smallint NOT NULL,
    dense boolean NOT NULL DEFAULT false,
    n bigint NOT NULL,
    ${AUDIT_COUNT_MODULES.map((m) => `${m} bigint NOT NULL DEFAULT 0`).join(",\n    ")},
    PRIMARY KEY (server_id, bot_id, level, bucket, shard)
  )`)
  // The counts as the readers see them (the sums over the shards), and the invariant of the header.
  yield* sql.unsafe(`CREATE VIEW audit_count_sums AS
    SELECT server_id, bot_id, level, bucket, ${sums("s")}
    FROM audit_count_shards s GROUP BY server_id, bot_id, level, bucket`)
  yield* sql.unsafe(`CREATE VIEW audit_counts AS
    SELECT c.* FROM audit_count_sums c
    WHERE c.n > 0 AND (c.level = 2 OR EXISTS (
      SELECT FROM audit_count_sums p
      WHERE p.server_id = c.server_id AND p.bot_id = c.bot_id AND p.level = c.level + 1 AND p.n > ${AUDIT_DENSE}
        AND c.bucket >= p.bucket * (${seconds}[c.level + 2] / ${seconds}[c.level + 1])
        AND c.bucket < (p.bucket + 1) * (${seconds}[c.level + 2] / ${seconds}[c.level + 1])))`)
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
DECLARE total bigint; is_dense boolean;
BEGIN${onInsert}
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION audit_counts_sub() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE total bigint;
BEGIN${onDelete}
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION audit_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE audit_count_shards;
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
