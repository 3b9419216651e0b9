import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Every table of the gateway. Secrets are stored only as SHA-256 hashes or AES-256-GCM ciphertexts. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE users (
    id text PRIMARY KEY,
    username text NOT NULL,
    discriminator text NOT NULL DEFAULT '0',
    global_name text,
    avatar text,
    locale text NOT NULL DEFAULT 'en-US',
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE bots (
    id text PRIMARY KEY,
    name text NOT NULL,
    icon text,
    token_enc text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  // One family per sign-in: the platform's tokens of that sign-in, and every gateway token minted from it.
  yield* sql`CREATE TABLE token_families (
    id text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id),
    platform_access_enc text,
    platform_refresh_enc text,
    platform_expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX token_families_user ON token_families (user_id)`
  yield* sql`CREATE TABLE tokens (
    token_sha256 text PRIMARY KEY,
    family_id text NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('temporary', 'access', 'refresh')),
    code_challenge text,
    issued_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX tokens_family ON tokens (family_id)`
  yield* sql`CREATE TABLE sign_in_states (
    state_sha256 text PRIMARY KEY,
    cookie_sha256 text NOT NULL,
    redirect_uri text NOT NULL,
    client_state text,
    client_code_challenge text,
    platform_verifier_enc text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`
  yield* sql`CREATE SEQUENCE form_ids`
  yield* sql`CREATE TABLE forms (
    workflow_id bigint PRIMARY KEY DEFAULT nextval('form_ids'),
    bot_id text NOT NULL,
    server_id text NOT NULL,
    title text NOT NULL,
    color_hex text NOT NULL,
    channel_id text,
    fwd_channel_ids jsonb NOT NULL DEFAULT '[]',
    role_mentions jsonb NOT NULL DEFAULT '[]',
    public_mentions jsonb NOT NULL DEFAULT '[]',
    flags jsonb NOT NULL DEFAULT '{}',
    taskboard_board text NOT NULL DEFAULT '-1',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX forms_server ON forms (bot_id, server_id, workflow_id)`
  yield* sql`CREATE TABLE form_steps (
    workflow_id bigint NOT NULL REFERENCES forms(workflow_id) ON DELETE CASCADE,
    step_id integer NOT NULL,
    type text NOT NULL,
    string text NOT NULL,
    answers_validation jsonb NOT NULL DEFAULT '[]',
    char_limit_min integer NOT NULL,
    char_limit_max integer NOT NULL,
    alias text,
    taskboard_mapping text,
    PRIMARY KEY (workflow_id, step_id)
  )`
  yield* sql`CREATE TABLE feeds (
    id bigserial PRIMARY KEY,
    bot_id text NOT NULL,
    server_id text NOT NULL,
    module text NOT NULL,
    feed_identifier text NOT NULL,
    webhook_options jsonb NOT NULL,
    display_info jsonb,
    webhook_id text NOT NULL,
    webhook_token_enc text NOT NULL,
    webhook_name text NOT NULL,
    webhook_avatar text,
    webhook_channel_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (bot_id, server_id, module, feed_identifier, webhook_id)
  )`
  yield* sql`CREATE INDEX feeds_server ON feeds (bot_id, server_id, module, id)`
  yield* sql`CREATE TABLE audit_entries (
    id bigserial PRIMARY KEY,
    bot_id text NOT NULL,
    server_id text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    user_id text NOT NULL,
    user_name text NOT NULL,
    user_avatar text,
    module_name text NOT NULL,
    item_identifier bigint,
    event_type text NOT NULL CHECK (event_type IN ('GET', 'PUSH', 'PATCH', 'DELETE')),
    event_string text NOT NULL
  )`
  yield* sql`CREATE INDEX audit_server_time ON audit_entries (server_id, bot_id, at DESC, id DESC)`
  yield* sql`CREATE INDEX audit_server_module_time ON audit_entries (server_id, bot_id, module_name, at DESC, id DESC)`
  yield* sql`CREATE TABLE taskboard_pairings (
    server_id text PRIMARY KEY,
    team_id text NOT NULL,
    credentials_enc text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
})
