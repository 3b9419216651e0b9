/**
 * The SQL client of the interactions' own statements (a member's pages: SubmissionsRepoSql's `open*`,
 * drafts and submit; SeenInteractionsSql): on PostgreSQL a small pool of its own whose statements are
 * pipelined (@effect/sql-pg `multiplex`: the statements of a burst share a connection and one write,
 * each its own implicit transaction): in S11 the last page's p99 fell from a median of 362 to 298 ms
 * over 10 runs each (bench/README.md). A pipelined statement waits behind every statement ahead of
 * it on its connection, and cannot be cancelled; so these connections serve only statements that take
 * no lock but their own rows' (a draft, an interaction id, a new submission, the audit month counter),
 * and `lock_timeout` bounds any lock wait at 1.5 s, `statement_timeout` any statement at 1.9 s: a
 * statement that cannot go through fails (the member is told to try again, nothing written) rather
 * than holding the others, and it fails before the answer's own deadline (InteractionsRoute.ts, 2 s),
 * so no statement commits after its member was told to try again. Every other statement stays on
 * the main pool, where a readiness probe or a request never queues behind an interaction.
 *
 * Unset (the embedded database, which serves one connection): the main client.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Reactivity } from "effect/reactivity"

export const InteractionsSql = Context.Reference<SqlClient.SqlClient | undefined>("gateway/InteractionsSql", {
  defaultValue: () => undefined
})

/** The interactions' client, or the main one where none is set. */
export const interactionsSql = Effect.gen(function*() {
  const own = yield* InteractionsSql
  return own ?? (yield* SqlClient.SqlClient)
})

/** The most connections of the interactions' pool (each carries up to 32 statements at once). */
const POOL_SIZE = 2

/** The startup parameters of the interactions' connections. */
const timeouts = { lock_timeout: "1500ms", statement_timeout: "1900ms" } as const

/** The interactions' pipelined pool on PostgreSQL at `url`. */
export const InteractionsSqlLive = (
  url: Redacted.Redacted<string>,
  options: { readonly applicationName?: string | undefined; readonly startupOptions?: string | undefined } = {}
) =>
  Layer.effect(
    InteractionsSql,
    PgClient.make({
      url: Redacted.make(Redacted.value(url)),
      maxConnections: POOL_SIZE,
      multiplex: true,
      connectTimeout: "5 seconds",
      applicationName: options.applicationName,
      startupOptions: options.startupOptions,
      startupParameters: timeouts
    }).pipe(Effect.map((client): SqlClient.SqlClient | undefined => client))
  ).pipe(Layer.provide(Reactivity.layer))
