/** Our job options and outcomes in pg-boss's terms, and pg-boss's jobs and counts in ours. */
import { Cause, Duration } from "effect"
import type { JobWithMetadata, Queue as BossQueue, QueueResult, SendOptions as BossSendOptions } from "pg-boss"
import type {
  JobState,
  JobStatus,
  QueueOptions,
  QueueStats,
  RetryOptions,
  ScheduleOptions,
  SendOptions
} from "../../services/jobs/JobEngine.ts"

export const seconds = (duration: Duration.Input) => Duration.toSeconds(duration)
/** pg-boss takes whole seconds for delays, expiries and retention. */
export const wholeSeconds = (duration: Duration.Input) => Math.round(Duration.toSeconds(duration))
const atLeastOne = (duration: Duration.Input) => Math.max(1, wholeSeconds(duration))
const opt = <A, B>(value: A | undefined, f: (a: A) => B): B | undefined => value === undefined ? undefined : f(value)

/** The defined entries only (exactOptionalPropertyTypes: pg-boss's options take no `undefined`). */
export const defined = <T extends object>(entries: { readonly [K in keyof T]: T[K] | undefined }): T =>
  Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as T

export const retryOptions = (o: RetryOptions) =>
  defined<BossSendOptions>({
    retryLimit: o.retryLimit,
    retryDelay: opt(o.retryDelay, wholeSeconds),
    retryBackoff: o.retryBackoff,
    retryDelayMax: opt(o.retryDelayMax, wholeSeconds),
    expireInSeconds: opt(o.expireIn, atLeastOne)
  })

/** Retention defaults of the engine, for queues that set none. */
export interface RetentionDefaults {
  readonly deleteAfter: Duration.Input
  readonly retention: Duration.Input
}

/** A queue's options; `policy` apart, since pg-boss sets it only when it creates the queue. */
export const queueOptions = (o: QueueOptions, defaults: RetentionDefaults) => {
  const { policy, ...rest } = defined<Omit<BossQueue, "name">>({
    ...retryOptions(o),
    policy: o.policy,
    deadLetter: o.deadLetter,
    heartbeatSeconds: opt(o.heartbeat, (d) => Math.max(10, wholeSeconds(d))),
    deleteAfterSeconds: wholeSeconds(o.deleteAfter ?? defaults.deleteAfter),
    retentionSeconds: atLeastOne(o.retention ?? defaults.retention)
  })
  return { policy, options: rest }
}

export const sendOptions = (o: SendOptions): BossSendOptions =>
  defined<BossSendOptions>({
    ...retryOptions(o),
    id: o.id,
    priority: o.priority,
    singletonKey: o.singletonKey,
    singletonSeconds: opt(o.singletonFor, atLeastOne),
    singletonNextSlot: o.singletonNextSlot,
    // A delay goes as seconds, which pg-boss adds to the database's clock rather than ours.
    startAfter: opt(o.startAfter, (at) => at instanceof Date ? at : seconds(at))
  })

export const scheduleOptions = (o: ScheduleOptions) =>
  defined<BossSendOptions & { key?: string; tz?: string }>({
    ...retryOptions(o),
    key: o.key,
    tz: o.tz,
    singletonKey: o.singletonKey,
    priority: o.priority
  })

/** What a failed attempt leaves on its job: the error's tag and message (no stack). */
export const failureOutput = (cause: Cause.Cause<unknown>): { readonly error: string; readonly message: string } => {
  if (Cause.hasInterruptsOnly(cause)) return { error: "Interrupted", message: "the attempt was interrupted" }
  const error = Cause.squash(cause) as { _tag?: unknown; message?: unknown } | undefined
  return {
    error: typeof error?._tag === "string" ? error._tag : "Error",
    message: typeof error?.message === "string" ? error.message : String(error)
  }
}

export const toJobStatus = (job: JobWithMetadata<unknown>): JobStatus => ({
  id: job.id,
  state: job.state as JobState,
  retryCount: job.retryCount,
  singletonKey: job.singletonKey,
  startAfter: job.startAfter,
  completedOn: job.completedOn,
  output: job.output
})

export const toQueueStats = (q: QueueResult): QueueStats => ({
  queue: q.name,
  queued: Number(q.queuedCount),
  deferred: Number(q.deferredCount),
  ready: Number(q.readyCount),
  active: Number(q.activeCount),
  failed: Number(q.failedCount),
  total: Number(q.totalCount)
})
