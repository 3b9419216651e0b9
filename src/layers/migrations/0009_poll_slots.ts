import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A source's poll jobs carry the slot they were planned for (services/delivery/DeliveryQueues.ts); the
 * source remembers which slot its last poll covered, written with the poll's result, so a poll job
 * delivered again (its worker died after the poll was recorded, before the job was marked done)
 * does not poll the source a second time for one slot:
 * - `polled_slot`: the planned time of the last poll job whose result (or failure) was recorded.
 * - `successor_slot`: the slot of the poll that an unchanged poll planned after it; that poll is
 *   recorded and its successor sent in two statements (no transaction), so a job found already
 *   covered sends this successor again (same job id: a no-op when it was sent).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE feed_sources ADD COLUMN polled_slot timestamptz, ADD COLUMN successor_slot timestamptz`
})
