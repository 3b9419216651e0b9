import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AUDIT_COUNT_MODULES, AUDIT_DENSE, AUDIT_LEVEL_SECONDS } from "../audit/AuditBuckets.ts"

/**
 * One statement per request on the hot paths (issue #16): form reads and writes, and audit pages.
 *
 * A form write in one round trip (issue #16): each function does in one call what FormsRepoSql
 * did in a transaction of five to nine statements — the limit's lock and count, the form, its
 * steps and its audit entry — and answers the form as stored with its steps (`steps`, a JSON
 * array, one object per row of `form_steps`). Called alone, the call is its own transaction.
 * - Plain PL/pgSQL statements, VOLATILE: in READ COMMITTED each statement takes a fresh snapshot,
 *   so the count read after its row lock, or the steps after the form's, see what the writer that
 *   held the lock committed (as the separate statements did; one CTE could not).
 * - The per-scope limit: `form_counts` holds each (bot, server)'s number of forms, kept exact by
 *   triggers on `forms` (any writer, any path). A create locks its scope's row (FOR UPDATE waits for
 *   a concurrent creator's commit, then reads its count), checks it and inserts: O(1) where the
 *   advisory lock + count(*) grew with the scope's forms (measured: 20 writers of one scope holding
 *   ~7,000 forms, 55–65 creates/s; without the count ~2,000/s).
 * - No row: the create hit its limit, or the form is not one of the scope.
 * - The audit entry (when `p_user_id` is given) reads `<verb> form <title as JSON> (#<id>)`, the
 *   title as stored: `to_json(text)` escapes exactly as JSON.stringify does (services/forms/FormsRepo.ts
 *   `formEventString`, the same text for the other layers).
 */
/**
 * An audit page in one round trip: `audit_page` is the walk of AuditLogSql (see its header) run in
 * the database, STABLE, so every count and the page are read from one snapshot (counts and entries
 * always agree). Its first row carries `total` (the query's entries); `located` false (never
 * expected) sends the reader to the exact OFFSET path. A bucket's count for the query is its
 * counter when the time range holds it whole; else, while it is dense, the sum of its children's;
 * else a count on the index (never more than AUDIT_DENSE entries, or one hour). The page is found
 * walking buckets newest first down to one sparse bucket or hour, read from its end with an OFFSET.
 */
const SECONDS = `(ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}]::bigint[])`
const moduleCount = `CASE p_module ${AUDIT_COUNT_MODULES.map((m) => `WHEN '${m}' THEN ${m}`).join(" ")} ELSE n END`
const ENTRY = `id bigint, at timestamptz, user_id text, user_name text, user_avatar text, module_name text,
  item_identifier bigint, event_type text, event_string text`
/** Entries of the query (owner, module, start, end) in [v_from_at, v_to_at); two texts, so each plan keeps its index. */
const entriesOf = (select: string, tail: string) => `
  IF p_module IS NULL THEN
    ${select} FROM audit_entries WHERE server_id = p_server_id AND bot_id = p_bot_id
      AND at >= greatest(v_from_at, coalesce(p_start, '-infinity')) AND at <= coalesce(p_end, 'infinity') AND at < v_to_at ${tail};
  ELSE
    ${select} FROM audit_entries WHERE module_name = p_module AND server_id = p_server_id AND bot_id = p_bot_id
      AND at >= greatest(v_from_at, coalesce(p_start, '-infinity')) AND at <= coalesce(p_end, 'infinity') AND at < v_to_at ${tail};
  END IF;`

const FORM = `workflow_id bigint, title text, color_hex text, channel_id text, fwd_channel_ids jsonb,
  role_mentions jsonb, public_mentions jsonb, flags jsonb, taskboard_board text, created_at timestamptz, steps jsonb`

const AUDIT_PARAMS = `p_user_id text, p_user_name text, p_user_avatar text, p_event_type text, p_verb text`

const FORM_PARAMS = `p_title text, p_color_hex text, p_channel_id text, p_fwd_channel_ids jsonb, p_role_mentions jsonb,
  p_public_mentions jsonb, p_flags jsonb, p_taskboard_board text, p_steps jsonb`

/** The audit entry of the write, in its statement (the counting triggers of 0004 run in it too). */
const audit = `
  IF p_user_id IS NOT NULL THEN
    INSERT INTO audit_entries (bot_id, server_id, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
    VALUES (f.bot_id, f.server_id, p_user_id, p_user_name, p_user_avatar, 'forms', f.workflow_id, p_event_type,
      p_verb || ' form ' || to_json(f.title)::text || ' (#' || f.workflow_id || ')');
  END IF;`

const answer = `RETURN QUERY SELECT f.workflow_id, f.title, f.color_hex, f.channel_id, f.fwd_channel_ids, f.role_mentions,
    f.public_mentions, f.flags, f.taskboard_board, f.created_at, steps;`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE form_counts (
    bot_id text NOT NULL,
    server_id text NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (bot_id, server_id)
  )`
  yield* sql.unsafe(`CREATE FUNCTION form_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO form_counts AS c (bot_id, server_id, n) VALUES (NEW.bot_id, NEW.server_id, 1)
  ON CONFLICT (bot_id, server_id) DO UPDATE SET n = c.n + 1;
  RETURN NULL;
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION form_counts_sub() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE form_counts SET n = n - 1 WHERE bot_id = OLD.bot_id AND server_id = OLD.server_id;
  RETURN NULL;
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION form_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM form_counts;
  RETURN NULL;
END $$`)
  // The triggers first: they lock out writers of forms until this migration commits, so the
  // backfill below counts every form there is.
  yield* sql`CREATE TRIGGER form_counts_on_insert AFTER INSERT ON forms FOR EACH ROW EXECUTE FUNCTION form_counts_add()`
  yield* sql`CREATE TRIGGER form_counts_on_delete AFTER DELETE ON forms FOR EACH ROW EXECUTE FUNCTION form_counts_sub()`
  yield* sql`CREATE TRIGGER form_counts_on_truncate AFTER TRUNCATE ON forms FOR EACH STATEMENT EXECUTE FUNCTION form_counts_clear()`
  // Scopes are not reassigned: an UPDATE of bot_id or server_id would desynchronise the counts.
  yield* sql.unsafe(`CREATE FUNCTION forms_scope_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a form''s bot_id and server_id do not change';
END $$`)
  yield* sql`CREATE TRIGGER forms_scope_fixed BEFORE UPDATE OF bot_id, server_id ON forms
    FOR EACH ROW WHEN (OLD.bot_id IS DISTINCT FROM NEW.bot_id OR OLD.server_id IS DISTINCT FROM NEW.server_id)
    EXECUTE FUNCTION forms_scope_fixed()`
  yield* sql`INSERT INTO form_counts (bot_id, server_id, n) SELECT bot_id, server_id, count(*) FROM forms GROUP BY 1, 2`
  // `p_steps`: [{ step_id, type, string, answers_validation, char_limit_min, char_limit_max, alias, taskboard_mapping }].
  yield* sql.unsafe(`CREATE FUNCTION forms_steps_insert(p_id bigint, p_steps jsonb) RETURNS jsonb LANGUAGE sql AS $$
    WITH s AS (
      INSERT INTO form_steps (workflow_id, step_id, type, string, answers_validation, char_limit_min, char_limit_max, alias, taskboard_mapping)
      SELECT p_id, s.step_id, s.type, s.string, s.answers_validation, s.char_limit_min, s.char_limit_max, s.alias, s.taskboard_mapping
      FROM jsonb_to_recordset(p_steps) AS s(step_id integer, type text, string text, answers_validation jsonb,
        char_limit_min integer, char_limit_max integer, alias text, taskboard_mapping text)
      RETURNING *
    )
    SELECT coalesce(jsonb_agg(to_jsonb(s) - 'workflow_id' ORDER BY s.step_id), '[]') FROM s
  $$`)
  yield* sql.unsafe(`CREATE FUNCTION forms_steps_of(p_id bigint) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(to_jsonb(s) - 'workflow_id' ORDER BY s.step_id), '[]') FROM form_steps s WHERE s.workflow_id = p_id
  $$`)
  yield* sql.unsafe(`CREATE FUNCTION forms_create(p_bot_id text, p_server_id text, p_limit bigint, ${FORM_PARAMS}, ${AUDIT_PARAMS})
  RETURNS TABLE (${FORM}) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE f forms%ROWTYPE; steps jsonb; v_count bigint;
BEGIN
  IF p_limit IS NOT NULL THEN
    -- The scope's counter row, locked until commit: creates of one scope are serialised, and each
    -- reads the count its predecessor committed (a new snapshot per statement, after the lock).
    INSERT INTO form_counts (bot_id, server_id, n) VALUES (p_bot_id, p_server_id, 0) ON CONFLICT DO NOTHING;
    SELECT n INTO v_count FROM form_counts WHERE bot_id = p_bot_id AND server_id = p_server_id FOR UPDATE;
    IF v_count >= p_limit THEN RETURN; END IF;
  END IF;
  INSERT INTO forms (bot_id, server_id, title, color_hex, channel_id, fwd_channel_ids, role_mentions, public_mentions, flags, taskboard_board)
  VALUES (p_bot_id, p_server_id, p_title, p_color_hex, p_channel_id, p_fwd_channel_ids, p_role_mentions, p_public_mentions, p_flags, p_taskboard_board)
  RETURNING * INTO f;
  steps := forms_steps_insert(f.workflow_id, p_steps);
  ${audit}
  ${answer}
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION forms_update(p_id bigint, p_bot_id text, p_server_id text, ${FORM_PARAMS}, ${AUDIT_PARAMS})
  RETURNS TABLE (${FORM}) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE f forms%ROWTYPE; steps jsonb;
BEGIN
  -- The row lock serialises writers of one form; the next statements see the steps the previous one committed.
  UPDATE forms SET title = p_title, color_hex = p_color_hex, channel_id = p_channel_id, fwd_channel_ids = p_fwd_channel_ids,
    role_mentions = p_role_mentions, public_mentions = p_public_mentions, flags = p_flags, taskboard_board = p_taskboard_board,
    updated_at = now()
  WHERE workflow_id = p_id AND bot_id = p_bot_id AND server_id = p_server_id
  RETURNING * INTO f;
  IF NOT FOUND THEN RETURN; END IF;
  DELETE FROM form_steps WHERE workflow_id = p_id;
  steps := forms_steps_insert(p_id, p_steps);
  ${audit}
  ${answer}
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION forms_delete(p_id bigint, p_bot_id text, p_server_id text, ${AUDIT_PARAMS})
  RETURNS TABLE (${FORM}) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE f forms%ROWTYPE; steps jsonb;
BEGIN
  SELECT * INTO f FROM forms WHERE workflow_id = p_id AND bot_id = p_bot_id AND server_id = p_server_id FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  steps := forms_steps_of(p_id);
  DELETE FROM forms WHERE workflow_id = p_id;
  ${audit}
  ${answer}
END $$`)
  // A single-form read with its audit entry (decisions.md: single-form reads are audited).
  yield* sql.unsafe(`CREATE FUNCTION forms_read(p_id bigint, p_bot_id text, p_server_id text, ${AUDIT_PARAMS})
  RETURNS TABLE (${FORM}) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE f forms%ROWTYPE; steps jsonb;
BEGIN
  SELECT * INTO f FROM forms WHERE workflow_id = p_id AND bot_id = p_bot_id AND server_id = p_server_id;
  IF NOT FOUND THEN RETURN; END IF;
  steps := forms_steps_of(p_id);
  ${audit}
  ${answer}
END $$`)
  // The buckets of `p_level` in [p_from, p_to) that meet [p_start, p_end], newest first: total and query counters.
  yield* sql.unsafe(`CREATE FUNCTION audit_query_buckets(p_server_id text, p_bot_id text, p_module text, p_start timestamptz,
    p_end timestamptz, p_level integer, p_from bigint, p_to bigint)
  RETURNS TABLE (bucket bigint, n bigint, c bigint) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE v_from bigint := p_from; v_to bigint := p_to;
BEGIN
  IF p_start IS NOT NULL THEN v_from := greatest(v_from, audit_bucket(p_start, p_level)); END IF;
  IF p_end IS NOT NULL THEN v_to := least(v_to, audit_bucket(p_end, p_level) + 1); END IF;
  IF v_from >= v_to THEN RETURN; END IF;
  RETURN QUERY SELECT s.bucket, sum(s.n)::int8, sum(${moduleCount})::int8 FROM audit_count_shards s
    WHERE s.server_id = p_server_id AND s.bot_id = p_bot_id AND s.level = p_level AND s.bucket >= v_from AND s.bucket < v_to
    GROUP BY s.bucket ORDER BY s.bucket DESC;
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION audit_query_count(p_server_id text, p_bot_id text, p_module text, p_start timestamptz,
    p_end timestamptz, p_level integer, p_bucket bigint, p_n bigint, p_c bigint)
  RETURNS bigint LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
  v_from_at timestamptz := to_timestamp(p_bucket * ${SECONDS}[p_level + 1]);
  v_to_at timestamptz := to_timestamp((p_bucket + 1) * ${SECONDS}[p_level + 1]);
  v_ratio bigint; v_total bigint := 0; v_count bigint; r record;
BEGIN
  IF v_from_at >= coalesce(p_start, '-infinity') AND v_to_at <= coalesce(p_end, 'infinity') THEN RETURN p_c; END IF;
  IF p_level = 0 OR p_n <= ${AUDIT_DENSE} THEN
    ${entriesOf("SELECT count(*) INTO v_count", "")}
    RETURN v_count;
  END IF;
  v_ratio := ${SECONDS}[p_level + 1] / ${SECONDS}[p_level];
  FOR r IN SELECT * FROM audit_query_buckets(p_server_id, p_bot_id, p_module, p_start, p_end, p_level - 1,
    p_bucket * v_ratio, (p_bucket + 1) * v_ratio) LOOP
    v_total := v_total + audit_query_count(p_server_id, p_bot_id, p_module, p_start, p_end, p_level - 1, r.bucket, r.n, r.c);
  END LOOP;
  RETURN v_total;
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION audit_page(p_server_id text, p_bot_id text, p_module text, p_start timestamptz,
    p_end timestamptz, p_offset bigint, p_limit integer)
  RETURNS TABLE (total bigint, located boolean, ${ENTRY}) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
  v_total bigint := 0; v_count bigint; k bigint := p_offset; r record;
  v_level integer := 2; v_from bigint := -9223372036854775807; v_to bigint := 9223372036854775807;
  v_found boolean := false; v_descend boolean;
  v_from_at timestamptz := '-infinity'; v_to_at timestamptz := 'infinity';
  t_bucket bigint[] := '{}'; t_n bigint[] := '{}'; t_count bigint[] := '{}';
BEGIN
  FOR r IN SELECT * FROM audit_query_buckets(p_server_id, p_bot_id, p_module, p_start, p_end, 2, v_from, v_to) LOOP
    v_count := audit_query_count(p_server_id, p_bot_id, p_module, p_start, p_end, 2, r.bucket, r.n, r.c);
    t_bucket := t_bucket || r.bucket; t_n := t_n || r.n; t_count := t_count || v_count;
    v_total := v_total + v_count;
  END LOOP;
  IF v_total = 0 OR p_offset >= v_total THEN
    RETURN QUERY SELECT v_total, true, NULL::bigint, NULL::timestamptz, NULL, NULL, NULL, NULL, NULL::bigint, NULL, NULL;
    RETURN;
  END IF;
  IF p_offset = 0 THEN
    v_found := true;
  ELSE
    -- Newest first: skip whole buckets, stop in the one holding entry k; read it if sparse, else go down.
    FOR i IN 1..coalesce(array_length(t_bucket, 1), 0) LOOP
      IF k >= t_count[i] THEN k := k - t_count[i]; CONTINUE; END IF;
      v_to_at := to_timestamp((t_bucket[i] + 1) * ${SECONDS}[3]);
      IF t_n[i] <= ${AUDIT_DENSE} THEN
        v_found := true;
      ELSE
        v_level := 1; v_from := t_bucket[i] * (${SECONDS}[3] / ${SECONDS}[2]); v_to := (t_bucket[i] + 1) * (${SECONDS}[3] / ${SECONDS}[2]);
      END IF;
      EXIT;
    END LOOP;
    WHILE NOT v_found AND v_level < 2 LOOP
      v_descend := false;
      FOR r IN SELECT * FROM audit_query_buckets(p_server_id, p_bot_id, p_module, p_start, p_end, v_level, v_from, v_to) LOOP
        v_count := audit_query_count(p_server_id, p_bot_id, p_module, p_start, p_end, v_level, r.bucket, r.n, r.c);
        IF k >= v_count THEN k := k - v_count; CONTINUE; END IF;
        v_to_at := to_timestamp((r.bucket + 1) * ${SECONDS}[v_level + 1]);
        IF v_level = 0 OR r.n <= ${AUDIT_DENSE} THEN
          v_found := true;
        ELSE
          v_descend := true;
          v_from := r.bucket * (${SECONDS}[v_level + 1] / ${SECONDS}[v_level]);
          v_to := (r.bucket + 1) * (${SECONDS}[v_level + 1] / ${SECONDS}[v_level]);
          v_level := v_level - 1;
        END IF;
        EXIT;
      END LOOP;
      EXIT WHEN NOT v_descend;
    END LOOP;
  END IF;
  IF NOT v_found THEN
    RETURN QUERY SELECT v_total, false, NULL::bigint, NULL::timestamptz, NULL, NULL, NULL, NULL, NULL::bigint, NULL, NULL;
    RETURN;
  END IF;
  ${entriesOf(`RETURN QUERY SELECT v_total, true, id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string`,
    "ORDER BY at DESC, id DESC LIMIT p_limit OFFSET k")}
END $$`)
})
