import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AUDIT_LEVEL_SECONDS } from "../audit/AuditBuckets.ts"

/**
 * Less database CPU per form write (issue #16, S3): what a create ran through the SQL-function
 * executor, which parses and plans a body again for each statement that calls it, now runs planned
 * once per connection. Answers unchanged (test/perf/PlannedOnce.test.ts).
 *
 * - `forms_steps_insert` and `forms_steps_of` (0010) were `LANGUAGE sql` functions with an aggregate,
 *   which PostgreSQL never inlines: every create, update, read and delete of a form parsed and
 *   planned their body. As PL/pgSQL they keep their plan per connection, like their callers.
 * - `audit_bucket` (0004) is IMMUTABLE, but its body called `extract(epoch FROM timestamptz)`,
 *   which is only STABLE, so the planner refused to inline it and every audit entry's counting
 *   trigger ran it (up to four times) through that executor, reading its stored body each time.
 *   The epoch of the difference from 1970-01-01 UTC (`timestamptz - timestamptz`, then
 *   `extract(epoch FROM interval)`, both IMMUTABLE) is the same exact numeric; the function is now
 *   inlined into its callers' plans. Compared with the old body on 660,009 instants from the year
 *   217 to 3722 (every bucket boundary of ±20,000 buckets ±1 µs), in two time zones: no difference.
 *
 * Measured with pgbench (10 clients, the procedure the gateway calls, 2 steps; PostgreSQL 15, 2
 * cores): database CPU per create, 10 servers 0.80–1.18 → 0.50–0.74 ms, one server 1.50–1.86 →
 * 1.11–1.34 ms (its rest is waiting on the scope's counter row).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION forms_steps_insert(p_id bigint, p_steps jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
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
END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION forms_steps_of(p_id bigint) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
DECLARE v_steps jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(to_jsonb(s) - 'workflow_id' ORDER BY s.step_id), '[]') INTO v_steps
  FROM form_steps s WHERE s.workflow_id = p_id;
  RETURN v_steps;
END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION audit_bucket(at timestamptz, level integer) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN floor(extract(epoch FROM at - timestamptz '1970-01-01 00:00:00+00') / (ARRAY[${AUDIT_LEVEL_SECONDS.join(", ")}])[level + 1])::bigint`)
})
