import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Forms published in channels (forms-runtime.md §2): one row per start message the bot posted, so
 * `GET …/publications` lists them and `DELETE …/publications/:messageId` removes one. Deleted with
 * their form.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE form_publications (
    workflow_id bigint NOT NULL REFERENCES forms(workflow_id) ON DELETE CASCADE,
    message_id text NOT NULL,
    channel_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, message_id)
  )`
})
