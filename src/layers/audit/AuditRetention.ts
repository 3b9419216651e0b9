/**
 * AUDIT_RETENTION_DAYS: a background fiber deletes entries older than the retention period, in small
 * batches (each its own short statement, found through the `audit_at` index), pausing between
 * batches, so requests and appends never wait on it. Expiry uses the database clock, like `at`.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql"
import { sqlFailure } from "../infra/SqlFailure.ts"

export interface RetentionOptions {
  /** Time between purges. Default 10 minutes. */
  readonly every?: Duration.Input
  /** Entries deleted per statement. Default 1000. */
  readonly batchSize?: number
  /** Pause between two batches of one purge. Default 50 ms. */
  readonly pause?: Duration.Input
}

/** Deletes up to `batchSize` expired entries; returns how many went (the triggers adjust the counts). */
export const deleteExpiredBatch = (retentionDays: number, batchSize: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`WITH gone AS (
        DELETE FROM audit_entries WHERE id IN (
          SELECT id FROM audit_entries WHERE at < now() - ${retentionDays} * interval '1 day'
          ORDER BY at LIMIT ${batchSize}
        ) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`
    return Number(rows[0]?.n ?? 0)
  })

/** One purge: batches until fewer than `batchSize` expired entries remain; returns the total deleted. */
export const purgeExpired = (retentionDays: number, options: RetentionOptions = {}) => {
  const batchSize = options.batchSize ?? 1000
  const pause = options.pause ?? Duration.millis(50)
  const loop = (done: number): Effect.Effect<number, SqlError.SqlError, SqlClient.SqlClient> =>
    Effect.flatMap(deleteExpiredBatch(retentionDays, batchSize), (n) =>
      n < batchSize ? Effect.succeed(done + n) : Effect.sleep(pause).pipe(Effect.andThen(Effect.suspend(() => loop(done + n)))))
  return loop(0)
}

/** Forks the purge job for the layer's lifetime; `undefined` (or not a positive number) disables it. */
export const AuditRetention = (
  retentionDays: number | undefined,
  options: RetentionOptions = {}
): Layer.Layer<never, never, SqlClient.SqlClient> =>
  retentionDays === undefined || !(retentionDays > 0)
    ? Layer.empty
    : Layer.effectDiscard(
      purgeExpired(retentionDays, options).pipe(
        // The one policy: an outage is logged by it and only waited out here; a bug is a defect.
        sqlFailure("The audit log"),
        Effect.tap((n) => n > 0 ? Effect.logInfo("expired audit entries deleted", { count: n }) : Effect.void),
        Effect.catchTag("ServiceUnavailable", () => Effect.void),
        Effect.catchCause((cause) => Effect.logError("audit retention purge failed; retrying later", cause)),
        Effect.repeat(Schedule.spaced(options.every ?? Duration.minutes(10))),
        Effect.interruptible,
        Effect.forkScoped
      )
    )
