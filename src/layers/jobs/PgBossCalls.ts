/** pg-boss's calls, errors and job runs as Effects: what JobEnginePgBoss.ts builds the engine from. */
import { Effect, Exit, Result, Schema } from "effect"
import { AssertionError } from "node:assert"
import type { Job, JobResult } from "pg-boss"
import { JobEngineError, JobEngineUnavailable, JobOptionsInvalid } from "../../services/jobs/JobEngine.ts"
import type { JobInfo, JobQueue } from "../../services/jobs/JobEngine.ts"
import { dependencyFailed } from "../../services/infra/DependencyHealth.ts"
import { isDatabaseUnavailable } from "./PgBossDb.ts"
import { failureOutput } from "./PgBossMapping.ts"

export const engineError = (reason: JobEngineError["reason"]) => new JobEngineError({ reason })

/**
 * An `error` event of pg-boss. The database unreachable is its outage, not pg-boss's: every loop of
 * pg-boss (workers, supervisor, heartbeat) fails each pass while it lasts (169 lines in 17 s), so it
 * goes to the database's outage lines (one "down", a count, one "back"); anything else is logged.
 */
export const pgBossError = (error: Error & { readonly queue?: unknown }): Effect.Effect<void> =>
  isDatabaseUnavailable(error)
    ? dependencyFailed("database", {
      source: "pg-boss",
      detail: error.message,
      ...(typeof error.queue === "string" ? { queue: error.queue } : {})
    })
    : Effect.logError(`pg-boss: ${error.message}`)
export const unavailable = (operation: string, message: string) => engineError(new JobEngineUnavailable({ operation, message }))

/** A pg-boss call as an Effect: its assertions are refused options, anything else an outage. */
export const call = <A>(operation: string, f: () => Promise<A>): Effect.Effect<A, JobEngineError> =>
  Effect.tryPromise({
    try: f,
    catch: (error) =>
      error instanceof AssertionError
        ? engineError(new JobOptionsInvalid({ message: error.message }))
        : unavailable(operation, error instanceof Error ? error.message : String(error))
  }).pipe(Effect.withSpan(`JobEngine.${operation}`))

/** One job through its handler, to the disposition pg-boss settles it with. */
export const runJob = <A, E, R>(
  queue: JobQueue<A>,
  handler: (payload: A, job: JobInfo) => Effect.Effect<void, E, R>,
  job: Job<unknown>
): Effect.Effect<JobResult, never, R> =>
  Effect.gen(function*() {
    const decoded = yield* Effect.result(Schema.decodeUnknownEffect(queue.payload)(job.data))
    if (Result.isFailure(decoded)) {
      yield* Effect.logWarning(`job ${job.id} of ${queue.name}: its payload does not decode; failed for good`)
      return { id: job.id, status: "deadletter", output: { error: "JobPayloadInvalid", message: decoded.failure.message } }
    }
    const exit = yield* Effect.exit(handler(decoded.success, { id: job.id, queue: queue.name, retryCount: job.retryCount }))
    if (Exit.isSuccess(exit)) return { id: job.id, status: "completed" }
    const output = failureOutput(exit.cause)
    return { id: job.id, status: output.error === "JobNoRetry" ? "deadletter" : "failed", output }
  }).pipe(
    // A trace of its own per attempt, not a child of whatever span registered the worker.
    Effect.withSpan("JobEngine.job", { root: true, attributes: { queue: queue.name, "job.id": job.id, "job.retry": job.retryCount } })
  ) as Effect.Effect<JobResult, never, R>
