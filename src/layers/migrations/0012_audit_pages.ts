import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AUDIT_COUNT_MODULES, AUDIT_DENSE, AUDIT_LEVEL_SECONDS } from "../audit/AuditBuckets.ts"

/**
 * Audit pages for less CPU (issue #16, S5). `audit_page` keeps its signature, its answer and the
 * walk of 0010_one_statement; what changes is what a page costs PostgreSQL. Measured on 1,000,000
 * entries of one server, most of it was planning: each call planned every statement anew (custom
 * plans), and a deep page's walk made ~70 nested calls (`audit_query_buckets`, `audit_query_count`).
 * - Generic plans (`plan_cache_mode`), planned once per connection. For the page read, a generic
 *   plan that does not know the server may pick `audit_at` and filter a busier server's entries out
 *   (measured: 300,000 rows read for a 10-entry page); without sorts (`enable_sort`,
 *   `enable_incremental_sort` off) only the (server, bot[, module], at DESC, id DESC) indexes give
 *   the order, so those are the plans. No JIT for these small statements.
 * - `audit_page_walk` finds the page (the query's total; read before `to_at`, from the k-th entry) on
 *   `audit_count_shards` alone: one query per level, where a bucket wholly inside [start, end]
 *   counts as its counter; only a bucket a bound cuts calls `audit_query_count`, which keeps the
 *   default settings (custom plans) as before, since it counts on entries.
 * - k below AUDIT_DIRECT (the first pages): read from the newest entry with OFFSET k, no walk.
 * PostgreSQL CPU per page (S5's pages, page_size 50): 160-460 µs before, 40-120 µs after.
 * test/audit/AuditPages.test.ts checks every bucket boundary against OFFSET, and the read's index.
 */
const SECONDS = `(ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}]::bigint[])`
/** Below this offset, skipping entries through the index costs less than walking the counters (measured). */
const AUDIT_DIRECT = 200
const moduleCount = `CASE p_module ${AUDIT_COUNT_MODULES.map((m) => `WHEN '${m}' THEN s.${m}`).join(" ")} ELSE s.n END`
const ENTRY = `id bigint, at timestamptz, user_id text, user_name text, user_avatar text, module_name text,
  item_identifier bigint, event_type text, event_string text`
const COLUMNS = "id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string"
const NONE = "NULL::bigint, NULL::timestamptz, NULL, NULL, NULL, NULL, NULL::bigint, NULL, NULL"

/** The level's buckets in [v_lo, v_hi) newest first, with their entries (n) and the query's count (c). */
const buckets = `
  SELECT b.bucket, b.n, CASE
      WHEN (p_start IS NULL OR to_timestamp(b.bucket * v_seconds) >= p_start)
        AND (p_end IS NULL OR to_timestamp((b.bucket + 1) * v_seconds) <= p_end) THEN b.c
      ELSE audit_query_count(p_server_id, p_bot_id, p_module, p_start, p_end, v_level, b.bucket, b.n, b.c)
    END AS c
  FROM (
    SELECT s.bucket, sum(s.n)::int8 AS n, sum(${moduleCount})::int8 AS c FROM audit_count_shards s
    WHERE s.server_id = p_server_id AND s.bot_id = p_bot_id AND s.level = v_level AND s.bucket >= v_lo AND s.bucket < v_hi
    GROUP BY s.bucket ORDER BY s.bucket DESC
  ) b
  ORDER BY b.bucket DESC`

/** The query's entries before v_to_at, newest first, from the k-th: two texts, so each plan keeps its index. */
const read = `
  IF p_module IS NULL THEN
    RETURN QUERY SELECT v_total, true, ${COLUMNS} FROM audit_entries WHERE server_id = p_server_id AND bot_id = p_bot_id
      AND at >= coalesce(p_start, '-infinity') AND at <= coalesce(p_end, 'infinity') AND at < v_to_at
      ORDER BY at DESC, id DESC LIMIT p_limit OFFSET v_k;
  ELSE
    RETURN QUERY SELECT v_total, true, ${COLUMNS} FROM audit_entries WHERE module_name = p_module AND server_id = p_server_id
      AND bot_id = p_bot_id AND at >= coalesce(p_start, '-infinity') AND at <= coalesce(p_end, 'infinity') AND at < v_to_at
      ORDER BY at DESC, id DESC LIMIT p_limit OFFSET v_k;
  END IF;`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Counting entries stays on custom plans, also when called from the walk below (which runs under
  // the settings of its caller, `audit_page`).
  yield* sql`ALTER FUNCTION audit_query_count(text, text, text, timestamptz, timestamptz, integer, bigint, bigint, bigint)
    SET plan_cache_mode = auto SET enable_sort = on SET enable_incremental_sort = on`
  yield* sql.unsafe(`CREATE FUNCTION audit_page_walk(p_server_id text, p_bot_id text, p_module text, p_start timestamptz,
    p_end timestamptz, p_offset bigint, OUT total bigint, OUT located boolean, OUT k bigint, OUT to_at timestamptz)
  LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
  v_level integer := 2; v_seconds bigint := ${SECONDS}[3]; r record;
  v_lo bigint := -9223372036854775807; v_hi bigint := 9223372036854775807;
  v_bucket bigint; v_n bigint; v_found boolean := false;
BEGIN
  total := 0; located := true; k := p_offset; to_at := 'infinity';
  IF p_start IS NOT NULL THEN v_lo := audit_bucket(p_start, 2); END IF;
  IF p_end IS NOT NULL THEN v_hi := audit_bucket(p_end, 2) + 1; END IF;
  -- Every 32-day bucket: the total, and the bucket holding entry k (k then counts inside it).
  FOR r IN ${buckets} LOOP
    total := total + r.c;
    IF v_bucket IS NULL THEN
      IF k < r.c THEN v_bucket := r.bucket; v_n := r.n; ELSE k := k - r.c; END IF;
    END IF;
  END LOOP;
  IF p_offset >= total THEN RETURN; END IF;
  IF p_offset < ${AUDIT_DIRECT} THEN k := p_offset; RETURN; END IF;
  -- Newest first, down to one sparse bucket or hour, read from its end.
  LOOP
    to_at := to_timestamp((v_bucket + 1) * v_seconds);
    EXIT WHEN v_level = 0 OR v_n <= ${AUDIT_DENSE};
    v_lo := v_bucket * (v_seconds / ${SECONDS}[v_level]);
    v_hi := (v_bucket + 1) * (v_seconds / ${SECONDS}[v_level]);
    v_level := v_level - 1;
    v_seconds := ${SECONDS}[v_level + 1];
    IF p_start IS NOT NULL THEN v_lo := greatest(v_lo, audit_bucket(p_start, v_level)); END IF;
    IF p_end IS NOT NULL THEN v_hi := least(v_hi, audit_bucket(p_end, v_level) + 1); END IF;
    v_found := false;
    FOR r IN ${buckets} LOOP
      IF k >= r.c THEN k := k - r.c; CONTINUE; END IF;
      v_found := true; v_bucket := r.bucket; v_n := r.n;
      EXIT;
    END LOOP;
    IF NOT v_found THEN
      -- Counts and entries disagreed (not expected: one snapshot).
      located := false;
      RETURN;
    END IF;
  END LOOP;
END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION audit_page(p_server_id text, p_bot_id text, p_module text, p_start timestamptz,
    p_end timestamptz, p_offset bigint, p_limit integer)
  RETURNS TABLE (total bigint, located boolean, ${ENTRY}) LANGUAGE plpgsql STABLE
  SET plan_cache_mode = force_generic_plan SET enable_sort = off SET enable_incremental_sort = off SET jit = off AS $$
#variable_conflict use_column
DECLARE v_total bigint; v_located boolean; v_k bigint; v_to_at timestamptz;
BEGIN
  SELECT w.total, w.located, w.k, w.to_at INTO v_total, v_located, v_k, v_to_at
  FROM audit_page_walk(p_server_id, p_bot_id, p_module, p_start, p_end, p_offset) w;
  IF v_total = 0 OR p_offset >= v_total OR NOT v_located THEN
    RETURN QUERY SELECT v_total, v_located, ${NONE};
    RETURN;
  END IF;
  ${read}
END $$`)
})
