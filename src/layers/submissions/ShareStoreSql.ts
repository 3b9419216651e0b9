/**
 * The SQL of sharing (migration 0019) the share jobs and the vote buttons use, each a single
 * statement: a member's vote cast, moved or taken back; the votes counted; a card's marker written
 * once before the create; the attachments' progress; the card's URL on the submission.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { VoteDirection } from "../../services/submissions/Share.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const db = sqlFailure("The submissions storage")

export const makeShareStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    /**
     * One click: the member's vote in that direction is taken back when it is there, else cast (or
     * moved from the other direction). One statement, one row per (submission, member): clicks at
     * once never lose or double a vote.
     */
    vote: (submissionId: string, userId: string, direction: VoteDirection) =>
      sql`WITH taken AS (
          DELETE FROM submission_votes WHERE submission_id = ${submissionId} AND user_id = ${userId} AND direction = ${direction}
          RETURNING 1
        )
        INSERT INTO submission_votes (submission_id, user_id, direction)
        SELECT ${submissionId}, ${userId}, ${direction} WHERE NOT EXISTS (SELECT 1 FROM taken)
        ON CONFLICT (submission_id, user_id) DO UPDATE SET direction = EXCLUDED.direction, voted_at = now()`.pipe(Effect.asVoid, db),
    votes: (submissionId: string) =>
      sql<{ up: number; down: number }>`SELECT
          count(*) FILTER (WHERE direction = 'up')::int AS up, count(*) FILTER (WHERE direction = 'down')::int AS down
        FROM submission_votes WHERE submission_id = ${submissionId}`.pipe(
        Effect.map((rows) => ({ up: rows[0]?.up ?? 0, down: rows[0]?.down ?? 0 })),
        db
      ),
    /** The card effect's marker: `fresh` written when there is none yet; the one kept either way. */
    cardMarker: (submissionId: string, boardId: string, fresh: string) =>
      sql<{ marker: string }>`UPDATE submission_effects SET marker = COALESCE(marker, ${fresh}), updated_at = now()
        WHERE submission_id = ${submissionId} AND kind = 'card' AND target = ${boardId} RETURNING marker`.pipe(
        Effect.map((rows) => rows[0]?.marker),
        db
      ),
    /** The card made: its id on the effect (still pending: attachments may follow), its URL on the submission. */
    cardMade: (submissionId: string, boardId: string, cardId: string, url: string) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE submission_effects SET message_id = ${cardId}, updated_at = now()
          WHERE submission_id = ${submissionId} AND kind = 'card' AND target = ${boardId}`
        yield* sql`UPDATE form_submissions SET card_url = ${url} WHERE id = ${submissionId}`
      })).pipe(db),
    progress: (submissionId: string, boardId: string) =>
      sql<{ progress: number }>`SELECT progress FROM submission_effects
        WHERE submission_id = ${submissionId} AND kind = 'card' AND target = ${boardId}`.pipe(Effect.map((rows) => rows[0]?.progress ?? 0), db),
    setProgress: (submissionId: string, boardId: string, done: number) =>
      sql`UPDATE submission_effects SET progress = ${done}, updated_at = now()
        WHERE submission_id = ${submissionId} AND kind = 'card' AND target = ${boardId}`.pipe(Effect.asVoid, db)
  }
})

export type ShareStore = Effect.Success<typeof makeShareStore>
