/**
 * The bots registry on SQL (table `bots`), tokens encrypted with the Cipher (aad `bot:<id>:token`).
 * The registry is small and read on every module request: it is kept in memory, reloaded after a write.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Bots } from "../../services/Bots.ts"
import type { BotRecord } from "../../services/Bots.ts"
import { Cipher } from "../../services/Cipher.ts"
import { sqlFailure } from "./SqlFailure.ts"

const db = sqlFailure("The bots registry")
const aad = (id: string) => `bot:${id}:token`

export const BotsSql = Layer.effect(
  Bots,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* Cipher
    let cache: ReadonlyArray<BotRecord> | undefined
    const load = Effect.gen(function*() {
      const rows = yield* sql<{ id: string; name: string; icon: string | null; token_enc: string }>`
        SELECT id, name, icon, token_enc FROM bots ORDER BY created_at, id`
      const out: Array<BotRecord> = []
      for (const r of rows) {
        // One undecryptable token (a key removed from the keyring) must not hide the other bots.
        const token = yield* cipher.decrypt(r.token_enc, aad(r.id)).pipe(
          Effect.tapError(() => Effect.logError("a bot token cannot be decrypted; check TOKEN_ENCRYPTION_KEY").pipe(Effect.annotateLogs({ bot: r.id }))),
          Effect.option
        )
        if (token._tag === "Some") out.push({ id: r.id, name: r.name, icon: r.icon, token: token.value })
      }
      cache = out
      return out
    }).pipe(db)
    const list = Effect.suspend(() => (cache !== undefined ? Effect.succeed(cache) : load))
    return Bots.of({
      list,
      get: (id) => Effect.map(list, (bots) => bots.find((b) => b.id === id)),
      upsert: (bot) =>
        Effect.gen(function*() {
          const enc = yield* cipher.encrypt(bot.token, aad(bot.id))
          yield* sql`INSERT INTO bots (id, name, icon, token_enc) VALUES (${bot.id}, ${bot.name}, ${bot.icon}, ${enc})
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, icon = excluded.icon, token_enc = excluded.token_enc`
          cache = undefined
        }).pipe(db),
      remove: (id) =>
        Effect.gen(function*() {
          const rows = yield* sql`DELETE FROM bots WHERE id = ${id} RETURNING id`
          cache = undefined
          return rows.length > 0
        }).pipe(db)
    })
  })
)
