/**
 * Key rotation: re-encrypts every stored secret that is not under the active key. Each row is
 * decrypted with its own additional data and rewritten only if it has not changed meanwhile.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Cipher } from "../../services/infra/Cipher.ts"

interface Column {
  readonly table: string
  readonly key: string
  readonly column: string
  readonly aad: (row: Record<string, string>) => string
}

/** Every encrypted column and how its additional data binds it to its row. */
export const ENCRYPTED_COLUMNS: ReadonlyArray<Column> = [
  { table: "bots", key: "id", column: "token_enc", aad: (r) => `bot:${r.id}:token` },
  { table: "token_families", key: "id", column: "platform_access_enc", aad: (r) => `family:${r.id}:platform_access` },
  { table: "token_families", key: "id", column: "platform_refresh_enc", aad: (r) => `family:${r.id}:platform_refresh` },
  { table: "sign_in_states", key: "state_sha256", column: "platform_verifier_enc", aad: (r) => `sign_in_state:${r.state_sha256}:platform_verifier` },
  { table: "feeds", key: "id", column: "webhook_token_enc", aad: (r) => `feed-webhook:${r.webhook_id}` },
  { table: "taskboard_pairings", key: "server_id", column: "credentials_enc", aad: (r) => `taskboard_pairing:${r.server_id}:credentials` },
  // Forms' answers and review reasons (layers/submissions/SubmissionsRepoSql.ts): personal data.
  { table: "form_drafts", key: "id", column: "answers_enc", aad: (r) => `draft:${r.id}` },
  { table: "form_submissions", key: "id", column: "answers_enc", aad: (r) => `submission:${r.id}` },
  { table: "form_submissions", key: "id", column: "reason_enc", aad: (r) => `submission:${r.id}:reason` }
]

export const reencryptAll = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* Cipher
  let moved = 0
  for (const c of ENCRYPTED_COLUMNS) {
    const extra = c.table === "feeds" ? sql`, webhook_id` : sql``
    const rows = yield* sql<Record<string, string>>`
      SELECT ${sql(c.key)}::text AS ${sql(c.key)}, ${sql(c.column)} AS value ${extra}
      FROM ${sql(c.table)} WHERE ${sql(c.column)} IS NOT NULL`
    for (const row of rows) {
      if (!cipher.isStale(row.value!)) continue
      const plain = yield* cipher.decrypt(row.value!, c.aad(row))
      const next = yield* cipher.encrypt(plain, c.aad(row))
      yield* sql`UPDATE ${sql(c.table)} SET ${sql(c.column)} = ${next}
        WHERE ${sql(c.key)}::text = ${row[c.key]!} AND ${sql(c.column)} = ${row.value!}`
      moved++
    }
  }
  return moved
})
