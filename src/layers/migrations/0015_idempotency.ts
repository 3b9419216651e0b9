import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Idempotency keys (issue #30; services/infra/IdempotencyStore.ts, layers/infra/IdempotencyStoreSql.ts):
 * per user and key, what the first request was (`fingerprint`: method, path, hash of the body) and
 * its answer. `status` NULL: the first request is still running (a claimed, non-transactional
 * route). The answer's body is encrypted with the keyring (an answer may carry a webhook URL).
 * Rows older than 24 h are ignored by every read and deleted in batches (`created_at` index).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS idempotency_keys (
    user_id text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    status integer,
    headers jsonb,
    body_enc text,
    PRIMARY KEY (user_id, key)
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS idempotency_keys_created_at ON idempotency_keys (created_at)`
})
