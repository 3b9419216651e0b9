/**
 * IdempotencyStore on PostgreSQL / PGlite (table of migration 0015). One key at a time per user
 * and key across every instance: a transaction-scoped advisory lock on the key's hash, tried, never
 * waited for (taken: 409). Atomic work runs in the transaction that holds the lock and stores the
 * answer in it; other work claims the key with a committed row first. Answers are encrypted with
 * the keyring. Expired keys (24 h) are ignored by reads and deleted in batches by a scoped fiber.
 */
import { createHash } from "node:crypto"
import { Duration, Effect, Exit, Layer, Redacted, Schedule } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { KEY_TTL_HOURS } from "../../domain/infra/IdempotencyKey.ts"
import { Cipher } from "../../services/infra/Cipher.ts"
import { IdempotencyStore } from "../../services/infra/IdempotencyStore.ts"
import type { KeptAnswer, KeyClaim, Outcome } from "../../services/infra/IdempotencyStore.ts"
import { sqlFailure } from "./SqlFailure.ts"

const STORAGE = "The idempotency key storage"
/** A claim whose request has not ended after this long was left by a stopped instance: taken over. */
const ABANDONED_MINUTES = 2

interface KeyRow {
  readonly fingerprint: string
  readonly status: number | null
  readonly headers: Record<string, string> | null
  readonly body_enc: string | null
}

/** The advisory lock of a user's key: 64 bits of its SHA-256, as a signed int8. */
export const lockIdOf = (claim: KeyClaim) =>
  createHash("sha256").update(`${claim.userId}\n${claim.key}`).digest().readBigInt64BE(0).toString()

const aadOf = (claim: KeyClaim) => `idempotency:${claim.userId}:${claim.key}`

/** Ends the transaction without keeping what the work wrote. */
class Discard<A, E> {
  constructor(readonly exit: Exit.Exit<A, E>) {}
}

export interface IdempotencyPurgeOptions {
  /** Time between purges. Default 10 minutes. */
  readonly every?: Duration.Input
  /** Keys deleted per statement. Default 1000. */
  readonly batchSize?: number
}

/** Deletes up to `batchSize` expired keys; returns how many went. */
export const deleteExpiredKeys = (batchSize: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`WITH gone AS (
        DELETE FROM idempotency_keys WHERE (user_id, key) IN (
          SELECT user_id, key FROM idempotency_keys WHERE created_at < now() - ${KEY_TTL_HOURS} * interval '1 hour'
          ORDER BY created_at LIMIT ${batchSize}
        ) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`,
      (rows) => Number(rows[0]?.n ?? 0)
    ))

export const makeIdempotencyStoreSql = (purge: IdempotencyPurgeOptions = {}) =>
  Layer.effect(IdempotencyStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* Cipher
    const db = sqlFailure(STORAGE)

    const fresh = sql`created_at > now() - ${KEY_TTL_HOURS} * interval '1 hour'`
    const find = (claim: KeyClaim) =>
      Effect.map(
        sql<KeyRow>`SELECT fingerprint, status, headers, body_enc FROM idempotency_keys
          WHERE user_id = ${claim.userId} AND key = ${claim.key} AND ${fresh}`,
        (rows) => rows[0]
      )

    /** What an earlier request with the key decides for this one. */
    const prior = <A, E>(claim: KeyClaim, row: KeyRow): Effect.Effect<Outcome<A, E>> => {
      if (row.fingerprint !== claim.fingerprint) return Effect.succeed({ _tag: "Mismatch" })
      if (row.status === null || row.body_enc === null) return Effect.succeed({ _tag: "InFlight" })
      const status = row.status
      const headers = row.headers ?? {}
      return Effect.map(
        // A body the keyring can no longer read (its key retired) is a bug of the deployment: a defect.
        Effect.orDie(cipher.decrypt(row.body_enc, aadOf(claim))),
        (body): Outcome<A, E> => ({ _tag: "Replay", answer: { status, headers, body: Redacted.value(body) } })
      )
    }

    const store = (claim: KeyClaim, answer: KeptAnswer) =>
      Effect.flatMap(cipher.encrypt(Redacted.make(answer.body), aadOf(claim)), (bodyEnc) =>
        sql`INSERT INTO idempotency_keys (user_id, key, fingerprint, status, headers, body_enc)
          VALUES (${claim.userId}, ${claim.key}, ${claim.fingerprint}, ${answer.status}, ${JSON.stringify(answer.headers)}::jsonb, ${bodyEnc})
          ON CONFLICT (user_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, created_at = now(),
            status = EXCLUDED.status, headers = EXCLUDED.headers, body_enc = EXCLUDED.body_enc
            WHERE idempotency_keys.created_at <= now() - ${KEY_TTL_HOURS} * interval '1 hour'
              OR idempotency_keys.status IS NULL
          RETURNING 1 AS stored`)

    const tryLock = (claim: KeyClaim) =>
      Effect.map(
        sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${lockIdOf(claim)}::int8) AS locked`,
        (rows) => rows[0]?.locked === true
      )

    /** Lock, look, run, store: one transaction (an answer not kept rolls the work back). */
    const atomic = <A, E, R>(
      claim: KeyClaim,
      work: Effect.Effect<A, E, R>,
      keep: (exit: Exit.Exit<A, E>) => KeptAnswer | undefined
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        if (!(yield* tryLock(claim))) return { _tag: "InFlight" } as Outcome<A, E>
        const row = yield* find(claim)
        if (row !== undefined) return yield* prior<A, E>(claim, row)
        // In a savepoint: a statement of the work that fails leaves the transaction usable for the key.
        const exit = yield* Effect.exit(Effect.catchIf(sql.withTransaction(work), SqlError.isSqlError, (e) => Effect.die(e)))
        const answer = keep(exit)
        if (answer === undefined) return yield* Effect.fail(new Discard(exit))
        // Under the key's lock no other request can have stored it since `find`: if one did, a bug
        // of ours let two run, and this one's writes are rolled back rather than kept twice.
        if ((yield* store(claim, answer)).length === 0) return yield* Effect.die(new Error("idempotency key stored twice"))
        return { _tag: "Ran", exit } as Outcome<A, E>
      })).pipe(
        Effect.catch((e) => e instanceof Discard ? Effect.succeed({ _tag: "Ran", exit: e.exit } as Outcome<A, E>) : Effect.fail(e))
      )

    /** Claims the key with a committed row (under the key's lock); false when another request has it. */
    const claimKey = (claim: KeyClaim) =>
      Effect.map(
        sql<{ claimed: number }>`WITH l AS (SELECT pg_try_advisory_xact_lock(${lockIdOf(claim)}::int8) AS locked)
          INSERT INTO idempotency_keys (user_id, key, fingerprint) SELECT ${claim.userId}, ${claim.key}, ${claim.fingerprint} FROM l WHERE l.locked
          ON CONFLICT (user_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, created_at = now(), status = NULL, headers = NULL, body_enc = NULL
            WHERE idempotency_keys.created_at <= now() - ${KEY_TTL_HOURS} * interval '1 hour'
              OR (idempotency_keys.status IS NULL AND idempotency_keys.created_at < now() - ${ABANDONED_MINUTES} * interval '1 minute')
          RETURNING 1 AS claimed`,
        (rows) => rows.length > 0
      )

    /**
     * Claim, run, then store the answer (or free the key). Only the work can be interrupted (the
     * client gone, a shutdown): a claim committed as its request was cut would otherwise hold the
     * key, unanswered, for ABANDONED_MINUTES, and an answer whose write was done would go unkept.
     */
    const claimed = <A, E, R>(
      claim: KeyClaim,
      work: Effect.Effect<A, E, R>,
      keep: (exit: Exit.Exit<A, E>) => KeptAnswer | undefined
    ) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          if (!(yield* claimKey(claim))) {
            const row = yield* find(claim)
            return row === undefined ? { _tag: "InFlight" } as Outcome<A, E> : yield* prior<A, E>(claim, row)
          }
          const exit = yield* Effect.exit(restore(work))
          const answer = keep(exit)
          yield* answer === undefined
            ? sql`DELETE FROM idempotency_keys WHERE user_id = ${claim.userId} AND key = ${claim.key} AND status IS NULL`
            : store(claim, answer)
          return { _tag: "Ran", exit } as Outcome<A, E>
        })
      )

    const batchSize = purge.batchSize ?? 1000
    const purgeAll: Effect.Effect<number, SqlError.SqlError> = Effect.flatMap(
      deleteExpiredKeys(batchSize).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
      (n) => n < batchSize ? Effect.succeed(n) : Effect.map(Effect.suspend(() => purgeAll), (m) => n + m)
    )
    yield* purgeAll.pipe(
      db,
      Effect.tap((n) => n > 0 ? Effect.logInfo("expired idempotency keys deleted", { count: n }) : Effect.void),
      Effect.catchTag("ServiceUnavailable", () => Effect.void),
      Effect.catchCause((cause) => Effect.logError("idempotency key purge failed; retrying later", cause)),
      Effect.repeat(Schedule.spaced(purge.every ?? Duration.minutes(10))),
      Effect.interruptible,
      Effect.forkScoped
    )

    return IdempotencyStore.of({
      run: (claim, isAtomic, work, keep) =>
        (isAtomic ? atomic(claim, work, keep) : claimed(claim, work, keep)).pipe(db, Effect.withSpan("IdempotencyStore.run"))
    })
  }))

/** The store with its purge every 10 minutes. */
export const IdempotencyStoreSql = makeIdempotencyStoreSql()
