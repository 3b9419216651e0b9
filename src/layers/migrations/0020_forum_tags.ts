import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A feed's webhook in a forum channel (delivery.md §10, issue #34): `feeds.forum_tags` holds the
 * forum's tags as the platform listed them (`[{ "id", "name" }]`, `[]` for a forum without tags),
 * read when the feed is created or updated and when its test message is sent; null when the
 * webhook's channel is not a forum (every feed stored before this migration).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE feeds ADD COLUMN forum_tags jsonb`
})
