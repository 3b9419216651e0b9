-- The database functions as they are after every migration (pg_get_functiondef, schema left out).
-- FormsRepoSql.ts calls forms_create, forms_create_durable, forms_read, forms_update, forms_delete and forms_steps_insert; the rest are
-- their helpers and the triggers on forms, which they write.
-- Read-only mirror: a change goes in a new migration, then here; test/infra/SqlFunctions.test.ts
-- fails while the two differ (and prints the definition the database has).

-- forms_create, shaped by migrations 0010_one_statement
CREATE OR REPLACE FUNCTION forms_create(p_bot_id text, p_server_id text, p_limit bigint, p_title text, p_color_hex text, p_channel_id text, p_fwd_channel_ids jsonb, p_role_mentions jsonb, p_public_mentions jsonb, p_flags jsonb, p_taskboard_board text, p_steps jsonb, p_user_id text, p_user_name text, p_user_avatar text, p_event_type text, p_verb text)
 RETURNS TABLE(workflow_id bigint, title text, color_hex text, channel_id text, fwd_channel_ids jsonb, role_mentions jsonb, public_mentions jsonb, flags jsonb, taskboard_board text, created_at timestamp with time zone, steps jsonb)
 LANGUAGE plpgsql
AS $function$
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
  
  IF p_user_id IS NOT NULL THEN
    INSERT INTO audit_entries (bot_id, server_id, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
    VALUES (f.bot_id, f.server_id, p_user_id, p_user_name, p_user_avatar, 'forms', f.workflow_id, p_event_type,
      p_verb || ' form ' || to_json(f.title)::text || ' (#' || f.workflow_id || ')');
  END IF;
  RETURN QUERY SELECT f.workflow_id, f.title, f.color_hex, f.channel_id, f.fwd_channel_ids, f.role_mentions,
    f.public_mentions, f.flags, f.taskboard_board, f.created_at, steps;
END $function$;

-- forms_create_durable, shaped by migrations 0011_forms_read, 0014_durable_create
CREATE OR REPLACE PROCEDURE forms_create_durable(IN p_bot_id text, IN p_server_id text, IN p_limit bigint, IN p_title text, IN p_color_hex text, IN p_channel_id text, IN p_fwd_channel_ids jsonb, IN p_role_mentions jsonb, IN p_public_mentions jsonb, IN p_flags jsonb, IN p_taskboard_board text, IN p_steps jsonb, IN p_user_id text, IN p_user_name text, IN p_user_avatar text, IN p_event_type text, IN p_verb text, INOUT workflow_id bigint DEFAULT NULL::bigint, INOUT title text DEFAULT NULL::text, INOUT color_hex text DEFAULT NULL::text, INOUT channel_id text DEFAULT NULL::text, INOUT fwd_channel_ids jsonb DEFAULT NULL::jsonb, INOUT role_mentions jsonb DEFAULT NULL::jsonb, INOUT public_mentions jsonb DEFAULT NULL::jsonb, INOUT flags jsonb DEFAULT NULL::jsonb, INOUT taskboard_board text DEFAULT NULL::text, INOUT created_at timestamp with time zone DEFAULT NULL::timestamp with time zone, INOUT steps jsonb DEFAULT NULL::jsonb)
 LANGUAGE plpgsql
AS $procedure$
#variable_conflict use_column
DECLARE r record;
BEGIN
  -- The create commits without waiting for its flush: the scope's counter row is free once it is in memory.
  SET LOCAL synchronous_commit = off;
  SELECT * INTO r FROM forms_create(p_bot_id, p_server_id, p_limit, p_title, p_color_hex, p_channel_id, p_fwd_channel_ids,
    p_role_mentions, p_public_mentions, p_flags, p_taskboard_board, p_steps, p_user_id, p_user_name, p_user_avatar, p_event_type, p_verb);
  -- No row: the limit is reached, nothing was written (NULLs answered).
  IF NOT FOUND THEN RETURN; END IF;
  workflow_id := r.workflow_id; title := r.title; color_hex := r.color_hex; channel_id := r.channel_id;
  fwd_channel_ids := r.fwd_channel_ids; role_mentions := r.role_mentions; public_mentions := r.public_mentions;
  flags := r.flags; taskboard_board := r.taskboard_board; created_at := r.created_at; steps := r.steps;
  COMMIT;
  -- A transaction that writes a WAL record (no table, no lock): its commit, at the end of the CALL, is synchronous
  -- as the session says and flushes the WAL past the create's commit. Without the record nothing would wait.
  PERFORM pg_logical_emit_message(true, 'gateway.flush', ''::text);
END $procedure$;

-- forms_read, shaped by migrations 0010_one_statement
CREATE OR REPLACE FUNCTION forms_read(p_id bigint, p_bot_id text, p_server_id text, p_user_id text, p_user_name text, p_user_avatar text, p_event_type text, p_verb text)
 RETURNS TABLE(workflow_id bigint, title text, color_hex text, channel_id text, fwd_channel_ids jsonb, role_mentions jsonb, public_mentions jsonb, flags jsonb, taskboard_board text, created_at timestamp with time zone, steps jsonb)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
DECLARE f forms%ROWTYPE; steps jsonb;
BEGIN
  SELECT * INTO f FROM forms WHERE workflow_id = p_id AND bot_id = p_bot_id AND server_id = p_server_id;
  IF NOT FOUND THEN RETURN; END IF;
  steps := forms_steps_of(p_id);
  
  IF p_user_id IS NOT NULL THEN
    INSERT INTO audit_entries (bot_id, server_id, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
    VALUES (f.bot_id, f.server_id, p_user_id, p_user_name, p_user_avatar, 'forms', f.workflow_id, p_event_type,
      p_verb || ' form ' || to_json(f.title)::text || ' (#' || f.workflow_id || ')');
  END IF;
  RETURN QUERY SELECT f.workflow_id, f.title, f.color_hex, f.channel_id, f.fwd_channel_ids, f.role_mentions,
    f.public_mentions, f.flags, f.taskboard_board, f.created_at, steps;
END $function$;

-- forms_update, shaped by migrations 0010_one_statement
CREATE OR REPLACE FUNCTION forms_update(p_id bigint, p_bot_id text, p_server_id text, p_title text, p_color_hex text, p_channel_id text, p_fwd_channel_ids jsonb, p_role_mentions jsonb, p_public_mentions jsonb, p_flags jsonb, p_taskboard_board text, p_steps jsonb, p_user_id text, p_user_name text, p_user_avatar text, p_event_type text, p_verb text)
 RETURNS TABLE(workflow_id bigint, title text, color_hex text, channel_id text, fwd_channel_ids jsonb, role_mentions jsonb, public_mentions jsonb, flags jsonb, taskboard_board text, created_at timestamp with time zone, steps jsonb)
 LANGUAGE plpgsql
AS $function$
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
  
  IF p_user_id IS NOT NULL THEN
    INSERT INTO audit_entries (bot_id, server_id, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
    VALUES (f.bot_id, f.server_id, p_user_id, p_user_name, p_user_avatar, 'forms', f.workflow_id, p_event_type,
      p_verb || ' form ' || to_json(f.title)::text || ' (#' || f.workflow_id || ')');
  END IF;
  RETURN QUERY SELECT f.workflow_id, f.title, f.color_hex, f.channel_id, f.fwd_channel_ids, f.role_mentions,
    f.public_mentions, f.flags, f.taskboard_board, f.created_at, steps;
END $function$;

-- forms_delete, shaped by migrations 0010_one_statement
CREATE OR REPLACE FUNCTION forms_delete(p_id bigint, p_bot_id text, p_server_id text, p_user_id text, p_user_name text, p_user_avatar text, p_event_type text, p_verb text)
 RETURNS TABLE(workflow_id bigint, title text, color_hex text, channel_id text, fwd_channel_ids jsonb, role_mentions jsonb, public_mentions jsonb, flags jsonb, taskboard_board text, created_at timestamp with time zone, steps jsonb)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
DECLARE f forms%ROWTYPE; steps jsonb;
BEGIN
  SELECT * INTO f FROM forms WHERE workflow_id = p_id AND bot_id = p_bot_id AND server_id = p_server_id FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  steps := forms_steps_of(p_id);
  DELETE FROM forms WHERE workflow_id = p_id;
  
  IF p_user_id IS NOT NULL THEN
    INSERT INTO audit_entries (bot_id, server_id, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
    VALUES (f.bot_id, f.server_id, p_user_id, p_user_name, p_user_avatar, 'forms', f.workflow_id, p_event_type,
      p_verb || ' form ' || to_json(f.title)::text || ' (#' || f.workflow_id || ')');
  END IF;
  RETURN QUERY SELECT f.workflow_id, f.title, f.color_hex, f.channel_id, f.fwd_channel_ids, f.role_mentions,
    f.public_mentions, f.flags, f.taskboard_board, f.created_at, steps;
END $function$;

-- forms_steps_insert, shaped by migrations 0010_one_statement, 0013_planned_once
CREATE OR REPLACE FUNCTION forms_steps_insert(p_id bigint, p_steps jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE v_steps jsonb;
BEGIN
  WITH s AS (
    INSERT INTO form_steps (workflow_id, step_id, type, string, answers_validation, char_limit_min, char_limit_max, alias, taskboard_mapping)
    SELECT p_id, s.step_id, s.type, s.string, s.answers_validation, s.char_limit_min, s.char_limit_max, s.alias, s.taskboard_mapping
    FROM jsonb_to_recordset(p_steps) AS s(step_id integer, type text, string text, answers_validation jsonb,
      char_limit_min integer, char_limit_max integer, alias text, taskboard_mapping text)
    RETURNING *
  )
  SELECT coalesce(jsonb_agg(to_jsonb(s) - 'workflow_id' ORDER BY s.step_id), '[]') INTO v_steps FROM s;
  RETURN v_steps;
END $function$;

-- forms_steps_of, shaped by migrations 0010_one_statement, 0013_planned_once
CREATE OR REPLACE FUNCTION forms_steps_of(p_id bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE v_steps jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(to_jsonb(s) - 'workflow_id' ORDER BY s.step_id), '[]') INTO v_steps
  FROM form_steps s WHERE s.workflow_id = p_id;
  RETURN v_steps;
END $function$;

-- forms_scope_fixed, shaped by migrations 0010_one_statement; fired by forms_scope_fixed (before update of bot_id, server_id on forms)
CREATE OR REPLACE FUNCTION forms_scope_fixed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'a form''s bot_id and server_id do not change';
END $function$;

-- form_counts_add, shaped by migrations 0010_one_statement, 0011_forms_read; fired by form_counts_on_insert (after insert on forms)
CREATE OR REPLACE FUNCTION form_counts_add()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO form_counts AS c (bot_id, server_id, n) VALUES (NEW.bot_id, NEW.server_id, 1)
  ON CONFLICT (bot_id, server_id) DO UPDATE SET n = c.n + 1, version = gen_random_uuid();
  RETURN NULL;
END $function$;

-- form_counts_sub, shaped by migrations 0010_one_statement, 0011_forms_read; fired by form_counts_on_delete (after delete on forms)
CREATE OR REPLACE FUNCTION form_counts_sub()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE form_counts SET n = n - 1, version = gen_random_uuid() WHERE bot_id = OLD.bot_id AND server_id = OLD.server_id;
  RETURN NULL;
END $function$;

-- form_counts_clear, shaped by migrations 0010_one_statement; fired by form_counts_on_truncate (after truncate on forms)
CREATE OR REPLACE FUNCTION form_counts_clear()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  DELETE FROM form_counts;
  RETURN NULL;
END $function$;

-- form_counts_touch, shaped by migrations 0011_forms_read; fired by form_counts_on_update (after update on forms)
CREATE OR REPLACE FUNCTION form_counts_touch()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE form_counts SET version = gen_random_uuid() WHERE bot_id = NEW.bot_id AND server_id = NEW.server_id;
  RETURN NULL;
END $function$;
