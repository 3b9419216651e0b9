/** Which task-board team a server is paired with; the team's API key and token encrypted at rest. */
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { ServiceUnavailable } from "../domain/Errors.ts"
import { Cipher } from "./Cipher.ts"

export interface Pairing {
  readonly teamId: string
  readonly key: Redacted.Redacted<string>
  readonly token: Redacted.Redacted<string>
}

const unavailable = () => ServiceUnavailable.of("The task-board pairings are unreachable; retry later.", 5)
const aad = (serverId: string) => `taskboard_pairing:${serverId}:credentials`

export class TaskboardPairings extends Context.Service<TaskboardPairings, {
  readonly get: (serverId: string) => Effect.Effect<Pairing | undefined, ServiceUnavailable>
  readonly pair: (serverId: string, pairing: Pairing) => Effect.Effect<void, ServiceUnavailable>
  readonly unpair: (serverId: string) => Effect.Effect<boolean, ServiceUnavailable>
}>()("gateway/TaskboardPairings") {
  static readonly layerSql = Layer.effect(
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
            const plain = yield* cipher.decrypt(row.credentials_enc, aad(serverId))
            const { key, token } = JSON.parse(Redacted.value(plain)) as { key: string; token: string }
            return { teamId: row.team_id, key: Redacted.make(key), token: Redacted.make(token) }
          }).pipe(Effect.mapError(unavailable)),
        pair: (serverId, p) =>
          Effect.gen(function*() {
            const enc = yield* cipher.encrypt(
              Redacted.make(JSON.stringify({ key: Redacted.value(p.key), token: Redacted.value(p.token) })),
              aad(serverId)
            )
            yield* sql`INSERT INTO taskboard_pairings (server_id, team_id, credentials_enc) VALUES (${serverId}, ${p.teamId}, ${enc})
              ON CONFLICT (server_id) DO UPDATE SET team_id = excluded.team_id, credentials_enc = excluded.credentials_enc`
          }).pipe(Effect.mapError(unavailable)),
        unpair: (serverId) =>
          sql`DELETE FROM taskboard_pairings WHERE server_id = ${serverId} RETURNING server_id`.pipe(
            Effect.map((rows) => rows.length > 0),
            Effect.mapError(unavailable)
          )
      })
    })
  )
}
