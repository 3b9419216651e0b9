import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The forms hot paths, second pass (issue #16).
 *
 * A data version per scope, for the cached forms list (services/forms/Forms.ts): `form_counts.version`,
 * a random UUID replaced by the triggers in the statement of every write that changes what the
 * list shows — a form inserted or deleted (the counter's own triggers), or its id, title, colour or
 * flags updated. A reader that holds the list of version v reads the version in one tiny statement
 * and serves its copy while it is still v: a write on any instance commits its new version with its
 * data, so the next read anywhere sees the change. Random, never a sequence: a value is never
 * handed out twice, not even by a database that crashed before flushing it. No row (never a form,
 * or after TRUNCATE): no version, every read reads the forms.
 *
 * A create that releases its scope's row before the commit flush: `forms_create_durable` (CALL)
 * does what `forms_create` (0010) does, then COMMITs with `synchronous_commit = off` — the counter
 * row's lock, which serialises the scope's creates so that the limit stays exact, is released once
 * the commit is in memory — and was meant only then to wait for durability, in a second transaction
 * that takes a transaction id. It does not wait: that transaction writes no WAL before its commit
 * record, and PostgreSQL commits such a transaction asynchronously whatever `synchronous_commit`
 * says, so this procedure answers before the create's flush, and an immediate stop of the database
 * loses creates already answered (issue #30). Migration 0014 redefines it to wait (its second
 * transaction writes a WAL record); the 181 → 768 creates/s measured here (50 writers of one scope,
 * against 0010's function, PostgreSQL 15) were without any flush wait: see 0014 and bench/README.md
 * for what the durable one costs. Only callable outside a transaction (FormsRepoSql picks
 * `forms_create` in one).
 */
const FORM_PARAMS = `p_title text, p_color_hex text, p_channel_id text, p_fwd_channel_ids jsonb, p_role_mentions jsonb,
  p_public_mentions jsonb, p_flags jsonb, p_taskboard_board text, p_steps jsonb`

const AUDIT_PARAMS = `p_user_id text, p_user_name text, p_user_avatar text, p_event_type text, p_verb text`

// INOUT parameters are the procedure's one answer row: the form as stored, as `forms_create` answers it.
const FORM_OUT = `INOUT workflow_id bigint DEFAULT NULL, INOUT title text DEFAULT NULL, INOUT color_hex text DEFAULT NULL,
  INOUT channel_id text DEFAULT NULL, INOUT fwd_channel_ids jsonb DEFAULT NULL, INOUT role_mentions jsonb DEFAULT NULL,
  INOUT public_mentions jsonb DEFAULT NULL, INOUT flags jsonb DEFAULT NULL, INOUT taskboard_board text DEFAULT NULL,
  INOUT created_at timestamptz DEFAULT NULL, INOUT steps jsonb DEFAULT NULL`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE form_counts ADD COLUMN version uuid NOT NULL DEFAULT gen_random_uuid()`
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION form_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO form_counts AS c (bot_id, server_id, n) VALUES (NEW.bot_id, NEW.server_id, 1)
  ON CONFLICT (bot_id, server_id) DO UPDATE SET n = c.n + 1, version = gen_random_uuid();
  RETURN NULL;
END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION form_counts_sub() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE form_counts SET n = n - 1, version = gen_random_uuid() WHERE bot_id = OLD.bot_id AND server_id = OLD.server_id;
  RETURN NULL;
END $$`)
  yield* sql.unsafe(`CREATE FUNCTION form_counts_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE form_counts SET version = gen_random_uuid() WHERE bot_id = NEW.bot_id AND server_id = NEW.server_id;
  RETURN NULL;
END $$`)
  // Only what the list shows (FormsRepoSql.listSince): a PATCH of steps alone leaves the row unlocked.
  yield* sql`CREATE TRIGGER form_counts_on_update AFTER UPDATE ON forms FOR EACH ROW
    WHEN (OLD.workflow_id IS DISTINCT FROM NEW.workflow_id OR OLD.title IS DISTINCT FROM NEW.title
      OR OLD.color_hex IS DISTINCT FROM NEW.color_hex OR OLD.flags IS DISTINCT FROM NEW.flags)
    EXECUTE FUNCTION form_counts_touch()`
  yield* sql.unsafe(`CREATE PROCEDURE forms_create_durable(p_bot_id text, p_server_id text, p_limit bigint, ${FORM_PARAMS},
    ${AUDIT_PARAMS}, ${FORM_OUT}) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE r record;
BEGIN
  SET LOCAL synchronous_commit = off;
  SELECT * INTO r FROM forms_create(p_bot_id, p_server_id, p_limit, p_title, p_color_hex, p_channel_id, p_fwd_channel_ids,
    p_role_mentions, p_public_mentions, p_flags, p_taskboard_board, p_steps, p_user_id, p_user_name, p_user_avatar, p_event_type, p_verb);
  -- No row: the limit is reached, nothing was written (NULLs answered).
  IF NOT FOUND THEN RETURN; END IF;
  workflow_id := r.workflow_id; title := r.title; color_hex := r.color_hex; channel_id := r.channel_id;
  fwd_channel_ids := r.fwd_channel_ids; role_mentions := r.role_mentions; public_mentions := r.public_mentions;
  flags := r.flags; taskboard_board := r.taskboard_board; created_at := r.created_at; steps := r.steps;
  COMMIT;
  -- Meant to flush the create's commit; a transaction that writes no WAL commits without a flush (fixed in 0014).
  PERFORM txid_current();
END $$`)
})
