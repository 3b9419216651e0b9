import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Push connectors (delivery.md §9) and the disable notices' hour per user (§8):
 * - `feed_notice_users`: when each user was last sent a disable notice, by any bot (it was per
 *   bot and user in 0007; the spec says one an hour per user). The latest time of each user carries over.
 * - `push_subscriptions`: one row per (source, topic): `websub` for a video channel, `stream.online`
 *   and `stream.offline` for a streaming channel. `hook_id` names the callback (`/hooks/…?hook=`),
 *   `secret_enc` is the HMAC secret encrypted with the Cipher (`push:<hook_id>:secret`), `state`
 *   pending (asked, not verified) → active (verified; for WebSub until `lease_expires_at`) →
 *   revoked / expired (polling takes over). `next_action_at`: when the push sweep acts on the row
 *   next (retry an unverified subscribe, renew before the lease ends). No foreign key to the source:
 *   a row whose source is gone is unsubscribed by the sweep, then deleted.
 * - `push_messages`: EventSub message ids already taken, kept past the 10-minute window of valid
 *   timestamps (a repeat is dropped; an older message is refused by its timestamp).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE feed_notice_users (
    user_id text PRIMARY KEY,
    last_sent_at timestamptz
  )`
  yield* sql`INSERT INTO feed_notice_users (user_id, last_sent_at)
    SELECT user_id, max(last_sent_at) FROM feed_notice_recipients GROUP BY user_id`
  yield* sql`DROP TABLE feed_notice_recipients`

  yield* sql`CREATE TABLE push_subscriptions (
    id bigserial PRIMARY KEY,
    source_id bigint NOT NULL,
    topic text NOT NULL CHECK (topic IN ('websub', 'stream.online', 'stream.offline')),
    hook_id text NOT NULL UNIQUE,
    secret_enc text NOT NULL,
    state text NOT NULL CHECK (state IN ('pending', 'active', 'revoked', 'expired')),
    external_id text,
    lease_expires_at timestamptz,
    next_action_at timestamptz,
    reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, topic)
  )`
  yield* sql`CREATE INDEX push_subscriptions_due ON push_subscriptions (next_action_at) WHERE next_action_at IS NOT NULL`
  yield* sql`CREATE TABLE push_messages (
    hook_id text NOT NULL,
    message_id text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (hook_id, message_id)
  )`
  yield* sql`CREATE INDEX push_messages_received_at ON push_messages (received_at)`
})
