/** PublicationsRepo on SQL (migration 0018): a form's start messages, newest first. */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PublicationsRepo } from "../../services/submissions/Publications.ts"
import type { StoredPublication } from "../../services/submissions/Publications.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const db = sqlFailure("The publications storage")

interface Row {
  readonly workflow_id: bigint | number | string
  readonly channel_id: string
  readonly message_id: string
  readonly created_at: Date
}

const toPublication = (r: Row): StoredPublication => ({
  workflowId: Number(r.workflow_id),
  channelId: r.channel_id,
  messageId: r.message_id,
  createdAt: r.created_at
})

export const PublicationsRepoSql = Layer.effect(PublicationsRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return PublicationsRepo.of({
    add: (p, within) =>
      sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql<Row>`INSERT INTO form_publications (workflow_id, message_id, channel_id)
          VALUES (${p.workflowId}, ${p.messageId}, ${p.channelId})
          ON CONFLICT (workflow_id, message_id) DO UPDATE SET channel_id = EXCLUDED.channel_id
          RETURNING *`
        yield* within
        return toPublication(row!)
      })).pipe(db),
    list: (workflowId) =>
      sql<Row>`SELECT * FROM form_publications WHERE workflow_id = ${workflowId} ORDER BY created_at DESC, message_id DESC`.pipe(
        Effect.map((rows) => rows.map(toPublication)),
        db
      ),
    find: (workflowId, messageId) =>
      sql<Row>`SELECT * FROM form_publications WHERE workflow_id = ${workflowId} AND message_id = ${messageId}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toPublication(rows[0]))),
        db
      ),
    remove: (workflowId, messageId, within) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM form_publications WHERE workflow_id = ${workflowId} AND message_id = ${messageId}`
        yield* within
      })).pipe(db)
  })
}))
