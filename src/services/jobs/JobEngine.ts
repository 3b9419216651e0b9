/**
 * The job engine: durable background jobs (feed polls, deliveries) kept in the database and shared
 * by every worker process (delivery.md §6). A queue is a name, the Schema of its payload and its
 * retry defaults; a worker is an Effect per job, run under a scope that drains it on close. Each
 * job runs once at a time across all processes; a job whose handler fails is retried with the
 * queue's backoff, then fails for good. Layer: layers/jobs/JobEnginePgBoss.ts (pg-boss).
 *
 * Jobs must be idempotent: a job is delivered at least once (a worker that dies mid-job loses its
 * claim when the job expires, and the job runs again elsewhere).
 */
import { Context, Schema } from "effect"
import type { Duration, Effect, Option, Scope } from "effect"

/**
 * How many jobs of one key (`singletonKey`) a queue holds: `standard` any number (unless
 * `singletonFor` is given at send); `short` one queued; `singleton` one active; `stately` one
 * queued and one active; `exclusive` one queued or active; `key_strict_fifo` in order per key.
 */
export type QueuePolicy = "standard" | "short" | "singleton" | "stately" | "exclusive" | "key_strict_fifo"

export interface RetryOptions {
  /** Retries after the first attempt (default 2). */
  readonly retryLimit?: number
  /** Delay before a retry, in whole seconds (default 0); with retryBackoff, the base of the backoff. */
  readonly retryDelay?: Duration.Input
  /** Exponential backoff with jitter: about retryDelay × 2^retry. */
  readonly retryBackoff?: boolean
  /** With retryBackoff: the longest delay. */
  readonly retryDelayMax?: Duration.Input
  /** How long one attempt may run (default 15 minutes); past it the attempt fails and its handler is interrupted. */
  readonly expireIn?: Duration.Input
}

export interface QueueOptions extends RetryOptions {
  readonly policy?: QueuePolicy
  /** How long completed and failed jobs are kept (default: the engine's). */
  readonly deleteAfter?: Duration.Input
  /** How long a job may wait, queued or between retries, before it is dropped (default: the engine's). */
  readonly retention?: Duration.Input
  /** Name of a declared queue that receives the payload of a job that failed for good. */
  readonly deadLetter?: string
  /**
   * At least 10 s: a running attempt tells the engine it is alive every half of this; one silent
   * this long (its process died) is failed and retried elsewhere at the engine's next upkeep,
   * instead of holding its job until `expireIn`.
   */
  readonly heartbeat?: Duration.Input
}

/** A queue: its name, the Schema of its payload (stored as JSON), its options. */
export interface JobQueue<out A> {
  readonly name: string
  readonly payload: Schema.Codec<A, object>
  readonly options: QueueOptions
}

const queueName = /^[\w.\-/]+$/

/** Defines a queue. Names: letters, digits, `_ . - /`. */
export const JobQueue = <A, I extends object>(
  name: string,
  payload: Schema.Codec<A, I>,
  options: QueueOptions = {}
): JobQueue<A> => {
  if (!queueName.test(name)) throw new Error(`invalid queue name: ${name}`)
  return { name, payload, options }
}

export interface SendOptions extends RetryOptions {
  /** A uuid chosen by the caller: sending the same id again is a no-op (idempotent send). */
  readonly id?: string
  /** With a policy other than `standard`, or with `singletonFor`: at most one job per key. */
  readonly singletonKey?: string
  /** One job per key per slot of this length (slots are aligned on the epoch): a source polled once per slot. */
  readonly singletonFor?: Duration.Input
  /** With `singletonFor`: when this slot is taken, queue the job in the next slot instead of dropping it. */
  readonly singletonNextSlot?: boolean
  /** Not before this time, or this long from now. */
  readonly startAfter?: Date | Duration.Input
  /** Higher runs first (default 0). */
  readonly priority?: number
}

export interface ScheduleOptions extends RetryOptions {
  /** Tells several schedules of one queue apart (default ""). */
  readonly key?: string
  /** Time zone of the cron expression (default UTC). */
  readonly tz?: string
  readonly singletonKey?: string
  readonly priority?: number
}

export interface WorkOptions {
  /** Jobs claimed per poll; each runs as its own Effect and is settled on its own (default 1). */
  readonly batchSize?: number
  /** Pollers for this queue in this process, each with its batch in flight (default 1). */
  readonly localConcurrency?: number
  /** How often an idle poller asks for jobs (default: the engine's). At least 0.5 s. */
  readonly pollingInterval?: Duration.Input
  /**
   * While a claim comes back full (`batchSize` > 1), claim again at once instead of waiting
   * `pollingInterval`: a backlog drains at the handlers' speed, not one batch per interval.
   */
  readonly burst?: boolean
}

/** What a handler knows of its job. `retryCount` is 0 on the first attempt. */
export interface JobInfo {
  readonly id: string
  readonly queue: string
  readonly retryCount: number
}

export type JobState = "created" | "retry" | "active" | "completed" | "cancelled" | "failed"

export interface JobStatus {
  readonly id: string
  readonly state: JobState
  readonly retryCount: number
  readonly singletonKey: string | null
  readonly startAfter: Date
  readonly completedOn: Date | null
  /** What the last attempt left: the failure of a failed attempt. */
  readonly output: unknown
}

/** Counts of one queue, as of the engine's last monitoring pass (about a minute). */
export interface QueueStats {
  readonly queue: string
  /** Waiting: deferred (not before a later time) and ready. */
  readonly queued: number
  readonly deferred: number
  readonly ready: number
  readonly active: number
  /** Failed for good, still kept. */
  readonly failed: number
  /** Every job kept. */
  readonly total: number
}

/** The payload does not encode with its queue's Schema. */
export class JobPayloadInvalid extends Schema.TaggedError<JobPayloadInvalid>()("JobPayloadInvalid", {
  queue: Schema.String,
  message: Schema.String
}) {}

/** The engine refused the options (e.g. a retryDelay that is not whole seconds). */
export class JobOptionsInvalid extends Schema.TaggedError<JobOptionsInvalid>()("JobOptionsInvalid", {
  message: Schema.String
}) {}

/**
 * The call runs inside `sql.withTransaction` and cannot join it: on the embedded database (one
 * connection) it would wait for that very transaction. `send`, `schedule`, `unschedule`, `job` and
 * `cancel` join the transaction, once their queue is declared (the engine's `queues`, `declare`,
 * or any earlier use); `declare` of a new queue, `queueStats` and `health` must run outside.
 */
export class JobEngineInTransaction extends Schema.TaggedError<JobEngineInTransaction>()("JobEngineInTransaction", {
  operation: Schema.String,
  message: Schema.String
}) {}

/** The database or the engine failed (or the engine is stopping). */
export class JobEngineUnavailable extends Schema.TaggedError<JobEngineUnavailable>()("JobEngineUnavailable", {
  operation: Schema.String,
  message: Schema.String
}) {}

export class JobEngineError extends Schema.TaggedError<JobEngineError>()("JobEngineError", {
  reason: Schema.Union([JobPayloadInvalid, JobOptionsInvalid, JobEngineInTransaction, JobEngineUnavailable])
}) {}

/** A handler fails with this to fail its job for good now, skipping the retries left. */
export class JobNoRetry extends Schema.TaggedError<JobNoRetry>()("JobNoRetry", {
  message: Schema.String
}) {}

export class JobEngine extends Context.Service<JobEngine, {
  /** Creates the queue, or brings its options up to date. Every other call does it on first use. */
  readonly declare: (queue: JobQueue<unknown>) => Effect.Effect<void, JobEngineError>
  /**
   * Queues a job; None when it was deduplicated (same `id`, or its singleton key/slot is taken).
   * Inside `sql.withTransaction` the job is written by that transaction: it exists only if the
   * transaction commits.
   */
  readonly send: <A>(queue: JobQueue<A>, payload: A, options?: SendOptions) => Effect.Effect<Option.Option<string>, JobEngineError>
  /** Sends `payload` on a cron expression (5 or 6 fields), from whichever engine runs schedules. */
  readonly schedule: <A>(queue: JobQueue<A>, cron: string, payload: A, options?: ScheduleOptions) => Effect.Effect<void, JobEngineError>
  readonly unschedule: (queue: JobQueue<unknown>, key?: string) => Effect.Effect<void, JobEngineError>
  /**
   * Runs `handler` for each job of the queue until the scope closes; closing it stops claiming and
   * waits for the jobs in hand (bounded by the engine's drain timeout). A handler that fails (or
   * dies) fails its attempt: the job is retried, or fails for good on JobNoRetry, a payload that
   * does not decode, or its last retry.
   */
  readonly work: <A, E, R>(
    queue: JobQueue<A>,
    handler: (payload: A, job: JobInfo) => Effect.Effect<void, E, R>,
    options?: WorkOptions
  ) => Effect.Effect<void, JobEngineError, R | Scope.Scope>
  /** A job by id, while it is kept. */
  readonly job: (queue: JobQueue<unknown>, id: string) => Effect.Effect<Option.Option<JobStatus>, JobEngineError>
  /** Cancels a job that has not finished; a no-op otherwise. */
  readonly cancel: (queue: JobQueue<unknown>, id: string) => Effect.Effect<void, JobEngineError>
  readonly queueStats: (queues: ReadonlyArray<JobQueue<unknown>>) => Effect.Effect<ReadonlyArray<QueueStats>, JobEngineError>
  /** Readiness: the engine is running and its tables answer (within 2 s). */
  readonly health: Effect.Effect<void, JobEngineError>
}>()("gateway/JobEngine") {}
