import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A claim on the refresh of a sign-in's platform tokens, shared by every instance: the one that
 * sets `platform_refresh_claimed_until` calls the platform; the others wait for its result, so
 * concurrent requests on several instances make one refresh there (decisions.md "Sign-in and tokens").
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE token_families ADD COLUMN platform_refresh_claimed_until timestamptz`
})
