/** The bots registry: application id, name, icon, and the bot token encrypted at rest. */
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { ServiceUnavailable } from "../domain/Errors.ts"
import { Cipher } from "./Cipher.ts"

export interface BotRecord {
  readonly id: string
  readonly name: string
  readonly icon: string | null
  readonly token: Redacted.Redacted<string>
}

const unavailable = () => ServiceUnavailable.of("The bots registry is unreachable; retry later.", 5)

export class Bots extends Context.Service<Bots, {
  readonly list: Effect.Effect<ReadonlyArray<BotRecord>, ServiceUnavailable>
  readonly get: (id: string) => Effect.Effect<BotRecord | undefined, ServiceUnavailable>
  readonly upsert: (bot: BotRecord) => Effect.Effect<void, ServiceUnavailable>
  readonly remove: (id: string) => Effect.Effect<boolean, ServiceUnavailable>
}>()("gateway/Bots") {
  static readonly layerSql = Layer.effect(
    Bots,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cipher = yield* Cipher
      const aad = (id: string) => `bot:${id}:token`
      // The registry is small and read on every module request: keep it in memory, refreshed on writes.
      let cache: ReadonlyArray<BotRecord> | undefined
      const load = Effect.gen(function*() {
        const rows = yield* sql<{ id: string; name: string; icon: string | null; token_enc: string }>`
          SELECT id, name, icon, token_enc FROM bots ORDER BY created_at, id`
        const out: Array<BotRecord> = []
        for (const r of rows) {
          const token = yield* cipher.decrypt(r.token_enc, aad(r.id)).pipe(
            Effect.tapError(() => Effect.logError("a bot token cannot be decrypted; check TOKEN_ENCRYPTION_KEY").pipe(Effect.annotateLogs({ bot: r.id }))),
            Effect.option
          )
          if (token._tag === "Some") out.push({ id: r.id, name: r.name, icon: r.icon, token: token.value })
        }
        cache = out
        return out
      }).pipe(Effect.mapError(unavailable))
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
          }).pipe(Effect.mapError(unavailable)),
        remove: (id) =>
          Effect.gen(function*() {
            const rows = yield* sql`DELETE FROM bots WHERE id = ${id} RETURNING id`
            cache = undefined
            return rows.length > 0
          }).pipe(Effect.mapError(unavailable))
      })
    })
  )

  static readonly memory = (bots: ReadonlyArray<BotRecord>) =>
    Layer.sync(Bots, () => {
      const map = new Map(bots.map((b) => [b.id, b]))
      return Bots.of({
        list: Effect.sync(() => [...map.values()]),
        get: (id) => Effect.sync(() => map.get(id)),
        upsert: (bot) => Effect.sync(() => void map.set(bot.id, bot)),
        remove: (id) => Effect.sync(() => map.delete(id))
      })
    })
}

