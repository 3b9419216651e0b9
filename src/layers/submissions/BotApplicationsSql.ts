/** BotApplications on the `bots` table's application columns (migration 0017). */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BotApplications } from "../../services/submissions/BotApplications.ts"
import type { BotApplication } from "../../services/submissions/BotApplications.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const db = sqlFailure("The bots registry")

interface Row {
  readonly id: string
  readonly application_id: string | null
  readonly public_key: string | null
  readonly commands_hash: string | null
}

const toApplication = (r: Row | undefined): BotApplication | undefined =>
  r === undefined || r.application_id === null || r.public_key === null
    ? undefined
    : { botId: r.id, applicationId: r.application_id, publicKey: r.public_key, commandsHash: r.commands_hash }

export const BotApplicationsSql = Layer.effect(BotApplications, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return BotApplications.of({
    byApplication: (applicationId) =>
      sql<Row>`SELECT id, application_id, public_key, commands_hash FROM bots WHERE application_id = ${applicationId}`.pipe(
        Effect.map((rows) => toApplication(rows[0])),
        db
      ),
    byBot: (botId) =>
      sql<Row>`SELECT id, application_id, public_key, commands_hash FROM bots WHERE id = ${botId}`.pipe(
        Effect.map((rows) => toApplication(rows[0])),
        db
      ),
    // Another key (a reset on the platform) or another application forgets the commands registered.
    record: (botId, application) =>
      sql`UPDATE bots SET application_id = ${application.id}, public_key = ${application.verifyKey.toLowerCase()},
          commands_hash = CASE WHEN application_id = ${application.id} THEN commands_hash END
        WHERE id = ${botId} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), db),
    setCommandsHash: (botId, hash) => sql`UPDATE bots SET commands_hash = ${hash} WHERE id = ${botId}`.pipe(Effect.asVoid, db)
  })
}))
