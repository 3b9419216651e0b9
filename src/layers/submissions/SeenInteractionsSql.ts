/**
 * Interaction ids already handled (table `interactions_seen`): a replay changes nothing. The id is
 * recorded by the first statement an interaction runs: on its own (`firstSeen`), or as the `seen`
 * CTE of the statement that also reads what the interaction needs (`withSeen`; SubmissionsRepoSql's
 * `open*`), so a page costs one round trip, not two. A signed interaction is accepted for 5 minutes
 * either way of its timestamp, so ids older than an hour are of no use: pruned at most every 10
 * minutes, by whichever interaction comes then (`prune`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { interactionsSql } from "../infra/InteractionsSql.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"
import { asyncCommit } from "./AsyncCommit.ts"

const db = sqlFailure("The interactions storage")
const PRUNE_EVERY_MS = 10 * 60 * 1000

/**
 * `WITH seen AS (the id's insert) <query>`: `query` reads `(SELECT count(*) FROM seen)` (1 the first
 * time, 0 for a replay). Committed without waiting for the disk (one statement, its own transaction;
 * the query beside it only reads): an id lost in a crash lets a replay through to the runtime, whose
 * every step is safe to repeat (a saved page, a stored submission and a decided review each refuse a
 * second time).
 */
export const withSeen = <A extends object>(sql: SqlClient.SqlClient, interactionId: string, query: Statement.Fragment) =>
  sql<A & { readonly first_seen: number }>`WITH seen AS (INSERT INTO interactions_seen (id) SELECT ${interactionId} FROM ${asyncCommit(sql)}
      ON CONFLICT (id) DO NOTHING RETURNING id)
    ${query}`

/** The `first_seen` column of a `withSeen` query. */
export const firstSeenColumn = (sql: SqlClient.SqlClient) => sql`(SELECT count(*) FROM seen)::int AS first_seen`

export const makeSeenInteractions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const isql = yield* interactionsSql
  let prunedAt = 0
  // Started beside the interaction's answer, not awaited by it: a slow DELETE must not make the
  // member whose page was already stored hear "busy; try again".
  const prune = Effect.suspend(() => {
    if (Date.now() - prunedAt < PRUNE_EVERY_MS) return Effect.void
    prunedAt = Date.now()
    return Effect.asVoid(Effect.forkDetach(sql`DELETE FROM interactions_seen WHERE seen_at < now() - interval '1 hour'`.pipe(Effect.ignore)))
  })
  return {
    /** True the first time `id` is seen (recorded now), false after. */
    firstSeen: (id: string) =>
      withSeen<object>(isql, id, isql`SELECT ${firstSeenColumn(isql)}`).pipe(
        Effect.map((rows) => rows[0]?.first_seen === 1),
        db
      ),
    prune
  }
})
