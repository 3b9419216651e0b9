import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A durable create that is durable (issue #30, item 1): `forms_create_durable` (0011) returns only
 * once the create's commit record is flushed, and still releases the scope's counter row first.
 *
 * 0011 committed the create with `synchronous_commit = off` and then took a transaction id
 * (`txid_current()`) in a second transaction, expecting that transaction's synchronous commit to
 * flush the WAL past the create's. It did not: PostgreSQL commits a transaction that wrote no WAL
 * before its commit record asynchronously whatever `synchronous_commit` says
 * (RecordTransactionCommit: `wrote_xlog` false), so nothing waited, and an immediate stop lost
 * creates already answered 200 (4 of 6,303 in the drill; the flush position was behind the
 * insert position after 20 of 20 CALLs).
 *
 * Now the second transaction writes one WAL record of its own: a transactional logical-decoding
 * message (`pg_logical_emit_message(true, ...)`, an empty one under the prefix `gateway.flush`).
 * That assigns it a transaction id and makes it a writer, so its commit is synchronous as the
 * session says (`on` by default; with synchronous standbys it also waits for them) and flushes the
 * WAL up to its own commit record — which comes after the create's, so the create's with it. Why
 * this record and not a row: it touches no table, so no lock or buffer is shared between writers
 * (a scope's creates still flush together, one WAL flush serving many), nothing is left to vacuum,
 * and it needs no privilege beyond the EXECUTE that PUBLIC has on the function (checked as a
 * non-superuser, PostgreSQL 15 at `wal_level` minimal and replica, and on PGlite). Logical-decoding
 * consumers that ask for messages see an empty one per create, under that prefix.
 *
 * What other sessions may still see, for the flush's duration, is a create not yet durable (its
 * count and list entry): a crash in that instant loses it, and its own caller, still waiting for
 * the flush, gets an error, never a 200. A session with `synchronous_commit = off` (set by whoever
 * configured the database or role) gets no flush, as for any of its writes.
 */
const FORM_PARAMS = `p_title text, p_color_hex text, p_channel_id text, p_fwd_channel_ids jsonb, p_role_mentions jsonb,
  p_public_mentions jsonb, p_flags jsonb, p_taskboard_board text, p_steps jsonb`

const AUDIT_PARAMS = `p_user_id text, p_user_name text, p_user_avatar text, p_event_type text, p_verb text`

// The same signature as 0011's, so that CREATE OR REPLACE replaces it.
const FORM_OUT = `INOUT workflow_id bigint DEFAULT NULL, INOUT title text DEFAULT NULL, INOUT color_hex text DEFAULT NULL,
  INOUT channel_id text DEFAULT NULL, INOUT fwd_channel_ids jsonb DEFAULT NULL, INOUT role_mentions jsonb DEFAULT NULL,
  INOUT public_mentions jsonb DEFAULT NULL, INOUT flags jsonb DEFAULT NULL, INOUT taskboard_board text DEFAULT NULL,
  INOUT created_at timestamptz DEFAULT NULL, INOUT steps jsonb DEFAULT NULL`

/** The procedure's current definition (FormsRepoSql calls it outside a transaction). */
const FORMS_CREATE_DURABLE = `CREATE OR REPLACE PROCEDURE forms_create_durable(p_bot_id text, p_server_id text, p_limit bigint,
    ${FORM_PARAMS}, ${AUDIT_PARAMS}, ${FORM_OUT}) LANGUAGE plpgsql AS $$
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
END $$`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(FORMS_CREATE_DURABLE)
})
