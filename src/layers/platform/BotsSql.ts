/**
 * The bots registry on SQL (table `bots`), tokens encrypted with the Cipher (aad `bot:<id>:token`).
 * The registry is small and read on every module request: it is kept in memory for `ttl` (5 s),
 * reloaded after a write through this instance at once, and after a write elsewhere (the CLI, another
 * instance, psql) within the TTL. A TTL rather than LISTEN/NOTIFY: it works the same on PostgreSQL and
 * the embedded PGlite, needs no dedicated connection per instance nor a reload after a lost listener,
 * and sees every writer; one small SELECT per 5 s per instance costs nothing. Failed loads are not kept.
 */
import { Cache, Duration, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Bots } from "../../services/platform/Bots.ts"
import type { BotRecord } from "../../services/platform/Bots.ts"
import { Cipher } from "../../services/infra/Cipher.ts"
import { sqlFailure } from "../infra/SqlFailure.ts"

const db = sqlFailure("The bots registry")
const aad = (id: string) => `bot:${id}:token`

/** How long a loaded registry is served before the next read reloads it. */
export const REGISTRY_TTL: Duration.Input = "5 seconds"

const make = (ttl: Duration.Input) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* Cipher
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
      return out as ReadonlyArray<BotRecord>
    }).pipe(db)
    // One entry: concurrent reads after expiry make one query; a failure is retried by the next read.
    const cache = yield* Cache.makeWith((_: "registry") => load, {
      capacity: 1,
      timeToLive: (exit) => (Exit.isSuccess(exit) ? ttl : Duration.zero)
    })
    const list = Cache.get(cache, "registry")
    const reload = Cache.invalidate(cache, "registry")
    return Bots.of({
      list,
      get: (id) => Effect.map(list, (bots) => bots.find((b) => b.id === id)),
      upsert: (bot) =>
        Effect.gen(function*() {
          const enc = yield* cipher.encrypt(bot.token, aad(bot.id))
          yield* sql`INSERT INTO bots (id, name, icon, token_enc) VALUES (${bot.id}, ${bot.name}, ${bot.icon}, ${enc})
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, icon = excluded.icon, token_enc = excluded.token_enc`
          yield* reload
        }).pipe(db),
      remove: (id) =>
        Effect.gen(function*() {
          const rows = yield* sql`DELETE FROM bots WHERE id = ${id} RETURNING id`
          yield* reload
          return rows.length > 0
        }).pipe(db)
    })
  })

/** The registry with its reload interval (`BotsSql` uses REGISTRY_TTL). */
export const BotsSqlWith = (options: { readonly ttl: Duration.Input }) => Layer.effect(Bots, make(options.ttl))

export const BotsSql = BotsSqlWith({ ttl: REGISTRY_TTL })
