/**
 * Ended tokens end on every instance at once (decisions.md "Sign-in and tokens"), although each
 * keeps resolved tokens for a few seconds (cache/TokenStoreCached.ts). Every change that ends tokens
 * sends `pg_notify('gateway_token_revocations', <family ids>)` in its own statement or transaction
 * (TokenStoreSql.ts), so it is delivered when, and only if, it commits. Each instance LISTENs on one
 * connection of its own, outside the pool (`application_name` = the pool's + `-listen`), and drops
 * the named families from its cache. Payloads carry family ids only (no token, no digest of one).
 *
 * Fail-safe: while that connection is not listening (start-up before it is, a dropped connection,
 * a reconnect) the cache answers nothing and keeps nothing; once listening again it is cleared
 * first (what was sent meanwhile is lost). A connection that dies silently is found by TCP
 * keep-alive; until then an entry still ends with its TTL, as without notifications.
 */
import { PgClient, PgConnection } from "@effect/sql-pg"
import { Cause, Deferred, Effect, Option, Queue } from "effect"
import { SqlError } from "effect/sql/SqlError"
import type { RevocationFeed, RevocationSink } from "./TokenStoreCached.ts"
import { sqlStateOf } from "../infra/SqlFailure.ts"

export const REVOCATIONS_CHANNEL = "gateway_token_revocations"

/** The payload that drops every entry: a list too long for one notification, or one not understood. */
export const DROP_ALL = "*"

/** PostgreSQL refuses a payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_999

/** One notification's payload for these families: their ids, comma-separated, or DROP_ALL when too long. */
export const revocationPayload = (familyIds: ReadonlyArray<string>): string => {
  const payload = familyIds.join(",")
  const plain = familyIds.length > 0 && familyIds.every((id) => id !== "" && !id.includes(","))
  return plain && Buffer.byteLength(payload) <= MAX_PAYLOAD_BYTES ? payload : DROP_ALL
}

/**
 * What payloads heard together ask of the cache: their families dropped in one pass, or everything
 * when one of them is not a list of ids (DROP_ALL, or anything else: fail-safe).
 */
export const applyRevocations = (sink: RevocationSink, payloads: Iterable<string>): void => {
  const familyIds: Array<string> = []
  for (const payload of payloads) {
    const ids = payload.split(",")
    if (payload === DROP_ALL || ids.some((id) => id === "")) return sink.all()
    familyIds.push(...ids)
  }
  if (familyIds.length > 0) sink.families(familyIds)
}

/** The wait before reconnection attempt `attempt + 1`: from 100 ms, doubling, at most 2 s, plus up to 200 ms of jitter. */
export const relistenDelay = (attempt: number): number =>
  Math.min(2 ** Math.min(attempt, 16) * 100, 2_000) + Math.floor(Math.random() * 200)

/** What the log line says of why listening ended (the server's own message when it sent one: no secret in it). */
const describe = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof SqlError)) return { error: error instanceof Error ? error.message : String(error) }
  const server = error.reason.cause instanceof Error ? error.reason.cause.message : undefined
  return { error: server === undefined ? error.message : `${error.message}: ${server}`, reason: error.reason._tag, sqlstate: sqlStateOf(error) }
}

/**
 * Follows the revocations of every instance on the database of the PgClient in context, for as
 * long as the caller's scope lasts. Start-up waits for the first attempt only (listening or not).
 * Without a PgClient (a test's SqlClient of another kind) it never listens: the cache stays off.
 */
export const TokenStoreListener: RevocationFeed<never> = (sink) =>
  Effect.gen(function*() {
    const client = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isNone(client)) {
      sink.listening(false)
      return yield* Effect.logWarning("token revocations: not listening (no PostgreSQL client); the token cache is off")
    }
    const config = client.value.config
    const connect = PgConnection.make({
      ...config,
      applicationName: `${config.applicationName ?? "gateway"}-listen`,
      // A peer gone without a word (no FIN) is noticed within ~20 s rather than never.
      keepAlive: config.keepAlive ?? "10 seconds",
      multiplex: false
    })
    const firstAttempt = yield* Deferred.make<void>()
    /** When listening was lost (undefined while listening, and before the first attempt). */
    let lostAt: number | undefined
    let attempts = 0

    const listen = Effect.gen(function*() {
      const connection = yield* connect
      const queue = yield* connection.listen(REVOCATIONS_CHANNEL)
      // LISTEN is confirmed: every commit from now on is heard. The cache starts again empty.
      sink.listening(true)
      if (lostAt !== undefined) {
        yield* Effect.logInfo("token revocations: listening again; the token cache was cleared").pipe(
          Effect.annotateLogs({ down_for_ms: Date.now() - lostAt, attempts })
        )
      }
      lostAt = undefined
      attempts = 0
      yield* Deferred.succeed(firstAttempt, undefined)
      return yield* Effect.forever(Effect.map(Queue.takeAll(queue), (batch) => applyRevocations(sink, batch.map((n) => n.payload))))
    }).pipe(
      // However it ends (a failed queue, a defect, shut-down), the cache is off first, before the connection's clean-up.
      Effect.onExit(() => Effect.sync(() => sink.listening(false))),
      Effect.scoped,
      // Interrupted: shut-down. Anything else: not listening, try again.
      Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.succeed(cause))
    )

    const loop = Effect.gen(function*() {
      for (;;) {
        const cause = yield* listen
        if (lostAt === undefined) {
          lostAt = Date.now()
          const error = Cause.squash(cause)
          yield* Effect.logWarning("token revocations: not listening; the token cache is off until it is back").pipe(
            Effect.annotateLogs(describe(error))
          )
        }
        yield* Deferred.succeed(firstAttempt, undefined)
        yield* Effect.sleep(relistenDelay(attempts))
        attempts += 1
      }
    })
    yield* Effect.forkScoped(loop)
    yield* Deferred.await(firstAttempt)
  })
