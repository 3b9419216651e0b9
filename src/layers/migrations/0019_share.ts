import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Accepted submissions shared (issue #33, forms-runtime.md §5):
 * - `submission_votes`: one row per (submission, member), its direction; a click is one statement
 *   (taken back, moved or cast), so concurrent clicks never lose a vote; the counts are counted.
 * - `form_submissions.card_url`: the task-board card made for it.
 * - `submission_effects.marker`: the unique mark a card is created with (in its description),
 *   written before the create: a job run again finds the card by it instead of making a second.
 *   `progress`: how many of the card's attachments are done.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE submission_votes (
    submission_id bigint NOT NULL REFERENCES form_submissions(id) ON DELETE CASCADE,
    user_id text NOT NULL,
    direction text NOT NULL CHECK (direction IN ('up', 'down')),
    voted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (submission_id, user_id)
  )`
  yield* sql`ALTER TABLE form_submissions ADD COLUMN card_url text`
  yield* sql`ALTER TABLE submission_effects ADD COLUMN marker text, ADD COLUMN progress integer NOT NULL DEFAULT 0`
})
