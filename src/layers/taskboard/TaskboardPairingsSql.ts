/**
 * Task-board pairings on SQL (table `taskboard_pairings`): the team's key and token are one JSON
 * value encrypted with the Cipher (aad `taskboard_pairing:<serverId>:credentials`).
 */
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Cipher } from "../../services/infra/Cipher.ts"
import { TaskboardPairings } from "../../services/taskboard/TaskboardPairings.ts"
import { sqlFailure, storageUnavailable } from "../infra/SqlFailure.ts"

const STORAGE = "The task-board pairings store"
const db = sqlFailure(STORAGE)
const aad = (serverId: string) => `taskboard_pairing:${serverId}:credentials`
// Credentials that cannot be decrypted (a key missing from the keyring) are as unusable as an
// unreachable store: the operator fixes the keyring, the client retries.
const keyringFailure = () => storageUnavailable(STORAGE)

export const TaskboardPairingsSql = Layer.effect(
  TaskboardPairings,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* Cipher
    return TaskboardPairings.of({
      get: (serverId) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ team_id: string; credentials_enc: string }>`
            SELECT team_id, credentials_enc FROM taskboard_pairings WHERE server_id = ${serverId}`
          const row = rows[0]
          if (row === undefined) return undefined
          const plain = yield* cipher.decrypt(row.credentials_enc, aad(serverId)).pipe(Effect.mapError(keyringFailure))
          const { key, token } = JSON.parse(Redacted.value(plain)) as { key: string; token: string }
          return { teamId: row.team_id, key: Redacted.make(key), token: Redacted.make(token) }
        }).pipe(db),
      pair: (serverId, p) =>
        Effect.gen(function*() {
          const enc = yield* cipher.encrypt(
            Redacted.make(JSON.stringify({ key: Redacted.value(p.key), token: Redacted.value(p.token) })),
            aad(serverId)
          )
          yield* sql`INSERT INTO taskboard_pairings (server_id, team_id, credentials_enc) VALUES (${serverId}, ${p.teamId}, ${enc})
            ON CONFLICT (server_id) DO UPDATE SET team_id = excluded.team_id, credentials_enc = excluded.credentials_enc`
        }).pipe(db),
      unpair: (serverId) =>
        sql`DELETE FROM taskboard_pairings WHERE server_id = ${serverId} RETURNING server_id`.pipe(
          Effect.map((rows) => rows.length > 0),
          db
        )
    })
  })
)
