import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Forms that run (issue #32, forms-runtime.md §1–§4):
 * - `bots`: the platform application's id and Ed25519 public key (`verify_key`, hex) that every
 *   interaction is verified with, and the hash of the `/submit` definition last registered (sent
 *   again only when it changes).
 * - `interactions_seen`: interaction ids already handled (a replay changes nothing), pruned after a day.
 * - `form_drafts`: one per (form, member): the form as it was at start (`snapshot`), the answers so
 *   far (encrypted: personal data), the next page, and the expiry. Deleted with their form.
 * - `form_submissions`: the snapshot and the encrypted answers, the review's outcome; at most one
 *   pending per (form, member). Deleted with their form.
 * - `submission_effects`: what a submission makes happen on the platform (the review message, the
 *   member's DM, later the summaries and the card), recorded before it is sent: a job that runs
 *   again finds it done and sends nothing twice.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE bots ADD COLUMN application_id text, ADD COLUMN public_key text, ADD COLUMN commands_hash text`
  yield* sql`CREATE UNIQUE INDEX bots_application ON bots (application_id)`
  yield* sql`CREATE TABLE interactions_seen (
    id text PRIMARY KEY,
    seen_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX interactions_seen_at ON interactions_seen (seen_at)`
  yield* sql`CREATE TABLE form_drafts (
    id text PRIMARY KEY,
    workflow_id bigint NOT NULL REFERENCES forms(workflow_id) ON DELETE CASCADE,
    user_id text NOT NULL,
    snapshot jsonb NOT NULL,
    answers_enc text NOT NULL,
    page integer NOT NULL DEFAULT 0,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workflow_id, user_id)
  )`
  yield* sql`CREATE TABLE form_submissions (
    id bigserial PRIMARY KEY,
    workflow_id bigint NOT NULL REFERENCES forms(workflow_id) ON DELETE CASCADE,
    bot_id text NOT NULL,
    server_id text NOT NULL,
    user_id text NOT NULL,
    user_name text NOT NULL,
    user_avatar text,
    snapshot jsonb NOT NULL,
    answers_enc text NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'denied')),
    priority text CHECK (priority IN ('low', 'medium', 'high')),
    reason_enc text,
    reviewer_id text,
    reviewer_name text,
    reviewed_at timestamptz,
    dm text CHECK (dm IN ('sent', 'closed')),
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX form_submissions_one_pending ON form_submissions (workflow_id, user_id) WHERE status = 'pending'`
  yield* sql`CREATE INDEX form_submissions_form ON form_submissions (workflow_id, status, id DESC)`
  yield* sql`CREATE TABLE submission_effects (
    submission_id bigint NOT NULL REFERENCES form_submissions(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('review_message', 'dm', 'summary', 'card')),
    target text NOT NULL DEFAULT '',
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    reason text,
    channel_id text,
    message_id text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (submission_id, kind, target)
  )`
})
