/**
 * Interaction ids already handled (table `interactions_seen`): a replay changes nothing. A signed
 * interaction is accepted for 5 minutes either way of its timestamp, so ids older than an hour are
 * of no use: pruned at most every 10 minutes, by whichever request comes then.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { sqlFailure } from "../infra/SqlFailure.ts"
import { asyncCommit } from "./AsyncCommit.ts"

const db = sqlFailure("The interactions storage")
const PRUNE_EVERY_MS = 10 * 60 * 1000

export const makeSeenInteractions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let prunedAt = 0
  const prune = Effect.suspend(() => {
    if (Date.now() - prunedAt < PRUNE_EVERY_MS) return Effect.void
    prunedAt = Date.now()
    return sql`DELETE FROM interactions_seen WHERE seen_at < now() - interval '1 hour'`.pipe(Effect.ignore)
  })
  return (id: string) =>
    // Committed without waiting for the disk (one statement, its own transaction): an id lost in a
    // crash lets a replay through to the runtime, whose every step is safe to repeat (a saved page,
    // a stored submission and a decided review each refuse a second time).
    sql`INSERT INTO interactions_seen (id) SELECT ${id} FROM ${asyncCommit(sql)} ON CONFLICT (id) DO NOTHING RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.tap(() => prune),
      db
    )
})
