/**
 * The job engine on pg-boss 12, in a schema of its own (default `pgboss`) that pg-boss creates and
 * migrates at start. pg-boss runs every statement through our SqlClient (layers/jobs/PgBossDb.ts),
 * on PostgreSQL and on the embedded PGlite alike: one code path, one pool to size, and a job sent
 * inside `sql.withTransaction` commits or rolls back with it. On PGlite's single connection that
 * pool is also what keeps pg-boss's statements out of the application's open transactions.
 * What it costs: no LISTEN/NOTIFY (workers poll, `pollingInterval`; a job sent outside a transaction
 * wakes this process's workers of its queue at once) and no pg-boss-owned transactions
 * (`transactional` workers); handlers open their own with `sql.withTransaction`.
 */
import { Context, Duration, Effect, Layer, Metric, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { PgBoss } from "pg-boss"
import type { ConstructorOptions, Db, Job, JobResult } from "pg-boss"
import {
  JobEngine,
  JobEngineError,
  JobEngineInTransaction,
  JobOptionsInvalid,
  JobPayloadInvalid
} from "../../services/jobs/JobEngine.ts"
import type { JobInfo, JobQueue, SendOptions, WorkOptions } from "../../services/jobs/JobEngine.ts"
import { jobQueueJobs, sampleOnScrape } from "../../services/infra/Metrics.ts"
import { tableUpkeep, upkeepSchemas } from "./JobTableUpkeep.ts"
import { call, engineError, pgBossError, runJob, unavailable } from "./PgBossCalls.ts"
import { makePgBossDb } from "./PgBossDb.ts"
import {
  defined,
  queueOptions,
  scheduleOptions,
  seconds,
  sendOptions,
  toJobStatus,
  toQueueStats
} from "./PgBossMapping.ts"

/** The schema of pg-boss's tables when the options name none. */
export const DEFAULT_SCHEMA = "pgboss"

export interface JobEnginePgBossOptions {
  /** Schema of pg-boss's tables, its own (default `DEFAULT_SCHEMA`). */
  readonly schema?: string
  /** Queues created (or updated) at start, so no call inside a transaction has to create one. */
  readonly queues?: ReadonlyArray<JobQueue<unknown>>
  /** How often an idle worker polls, unless work() says otherwise (default 2 s; at least 0.5 s). */
  readonly pollingInterval?: Duration.Input
  /** Default for queues: how long completed and failed jobs are kept (default 2 days). */
  readonly deleteAfter?: Duration.Input
  /** Default for queues: how long a job may wait, queued or between retries (default 14 days). */
  readonly retention?: Duration.Input
  /** How long closing waits for the jobs in hand before failing them, to be retried (default: JobDrainTimeout). */
  readonly drainTimeout?: Duration.Input
  /**
   * Upkeep in this process: expiring lost claims, deleting old jobs and, where no autovacuum runs,
   * VACUUM/ANALYZE of pg-boss's tables and of the gateway's own (JobTableUpkeep.ts) (default true).
   */
  readonly supervise?: boolean
  /** Cron schedules sent from this process (default true). */
  readonly schedule?: boolean
  /** This process in pg-boss's instance registry, e.g. "worker". */
  readonly instanceName?: string
  /** How often upkeep runs and the queues' counts (the job_queue_jobs gauges) are refreshed (default 60 s; whole seconds). */
  readonly superviseInterval?: Duration.Input
}

/**
 * How long closing waits for the jobs in hand when the options do not say (default 30 s). main.ts
 * sets SHUTDOWN_GRACE_MS: jobs get the grace requests get, and the engine stops (the jobs still
 * running failed, to be retried at once) before main.ts's last resort ends the process 5 s after
 * the grace, which would leave them active until they expire and skip the database's close.
 */
export const JobDrainTimeout = Context.Reference<Duration.Input>("gateway/JobDrainTimeout", {
  defaultValue: () => "30 seconds"
})

/** Builds the engine: starts pg-boss, declares `queues`; stops pg-boss gracefully when the scope closes. */
export const makeJobEngine = (options: JobEnginePgBossOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The engine's own statements run outside any transaction of ours, whoever built the layer.
    const engineContext = Context.add(Context.omit(sql.transactionService)(yield* Effect.context<never>()), SqlClient.SqlClient, sql)
    const schema = options.schema ?? DEFAULT_SCHEMA
    const pollingIntervalSeconds = seconds(options.pollingInterval ?? "2 seconds")
    const drainTimeout = options.drainTimeout ?? (yield* JobDrainTimeout)
    // Set when a worker's drain ran out with jobs still in hand: they had their time, and the stop fails
    // them at once instead of waiting the timeout a second time.
    let drainRanOut = false
    const retention = { deleteAfter: options.deleteAfter ?? "2 days", retention: options.retention ?? "14 days" }

    const boss = yield* Effect.try({
      try: () =>
        new PgBoss(defined<ConstructorOptions>({
          db: makePgBossDb(engineContext, { traced: false }),
          schema,
          migrate: true,
          supervise: options.supervise ?? true,
          schedule: options.schedule ?? true,
          instanceName: options.instanceName,
          ...(options.superviseInterval === undefined ? {} : (() => {
            const every = Math.max(1, Math.round(seconds(options.superviseInterval)))
            return { superviseIntervalSeconds: every, monitorIntervalSeconds: every }
          })())
        })),
      catch: (error) => engineError(new JobOptionsInvalid({ message: error instanceof Error ? error.message : String(error) }))
    })
    const runFork = Effect.runForkWith(engineContext)
    boss.on("error", (error) => runFork(pgBossError(error)))
    boss.on("warning", (warning) => runFork(Effect.logWarning(`pg-boss: ${warning.message}`)))

    let running = false
    yield* Effect.acquireRelease(
      call("start", () => boss.start()).pipe(Effect.andThen(Effect.sync(() => (running = true)))),
      () =>
        Effect.sync(() => (running = false)).pipe(
          // Jobs still running after their worker's drain are failed now (pg-boss retries them).
          Effect.andThen(call("stop", () =>
            boss.stop(drainRanOut ? { graceful: false } : { graceful: true, timeout: Duration.toMillis(drainTimeout) })
          )),
          Effect.catch((error) => Effect.logWarning(`pg-boss did not stop cleanly: ${error.reason.message}`))
        )
    )

    // Where no autovacuum runs, the supervising engines (ROLE=all and worker) vacuum and analyze
    // pg-boss's tables and the gateway's own (its connection's current schema) themselves, at the
    // upkeep interval (layers/jobs/JobTableUpkeep.ts: the claim's and the poll sweep's plans need the
    // statistics, and on PGlite nothing else ever removes a dead row).
    if (options.supervise ?? true) {
      yield* tableUpkeep(upkeepSchemas(schema), options.superviseInterval ?? "60 seconds").pipe(Effect.provide(engineContext))
    }

    // The queues' gauges at each scrape of /metrics: pg-boss's counts, which its monitor refreshes
    // every supervise interval (in whichever process supervises).
    yield* sampleOnScrape(call("queueStats", () => boss.getQueues()).pipe(
      Effect.flatMap((rows) =>
        Effect.forEach(rows.map(toQueueStats), (q) =>
          Effect.forEach([["queued", q.queued], ["active", q.active], ["failed", q.failed]] as const, ([state, n]) =>
            Metric.update(Metric.withAttributes(jobQueueJobs, { queue: q.queue, state }), n), { discard: true }), { discard: true })
      )
    ))

    /** pg-boss's `db` bound to the caller: its statements join the caller's transaction, if any. */
    const withCallerDb = <A>(f: (db: Db) => Promise<A>, operation: string) =>
      Effect.flatMap(Effect.context<never>(), (context) =>
        call(operation, () => f(makePgBossDb(Context.add(context, SqlClient.SqlClient, sql)))))

    /** For calls that cannot join a transaction: on PGlite they would wait for the caller's own. */
    const outsideTransaction = (operation: string, message: string) =>
      Effect.flatMap(Effect.serviceOption(sql.transactionService), (tx) =>
        Option.isSome(tx) ? Effect.fail(engineError(new JobEngineInTransaction({ operation, message }))) : Effect.void)

    /** This process's workers by queue name: a job sent here wakes them (`nudge`). */
    const localWorkers = new Map<string, ReadonlyArray<string>>()
    /**
     * A job sent outside a transaction is claimable at once: this process's workers of its queue fetch
     * now rather than at their next poll (other processes' still poll). Inside a transaction the job
     * is not visible before the commit, and a delayed job not before its time: no nudge.
     */
    const nudge = (queue: string, o: SendOptions) =>
      Effect.flatMap(Effect.serviceOption(sql.transactionService), (tx) =>
        Effect.sync(() => {
          if (Option.isSome(tx) || o.startAfter !== undefined) return
          for (const id of localWorkers.get(queue) ?? []) boss.notifyWorker(id)
        }))

    const declared = new Set<string>()
    const declare = (queue: JobQueue<unknown>) =>
      outsideTransaction("declare", `queue ${queue.name} is not declared, and cannot be inside a transaction`).pipe(
        Effect.andThen(call("declare", async () => {
          const { policy, options: update } = queueOptions(queue.options, retention)
          await boss.createQueue(queue.name, policy === undefined ? update : { ...update, policy })
          await boss.updateQueue(queue.name, update)
        })),
        // pg-boss has the queue cached now: calls that join a transaction never need to look it up.
        Effect.andThen(Effect.sync(() => declared.add(queue.name)))
      )
    const ensure = (queue: JobQueue<unknown>) => declared.has(queue.name) ? Effect.void : declare(queue)

    const encode = <A>(queue: JobQueue<A>, payload: A) =>
      Schema.encodeEffect(queue.payload)(payload).pipe(
        Effect.mapError((error) => engineError(new JobPayloadInvalid({ queue: queue.name, message: error.message })))
      )

    const work = <A, E, R>(
      queue: JobQueue<A>,
      handler: (payload: A, job: JobInfo) => Effect.Effect<void, E, R>,
      o: WorkOptions = {}
    ) =>
      Effect.gen(function*() {
        yield* ensure(queue)
        const run = Effect.runPromiseWith(yield* Effect.context<R>())
        // A job's signal aborts when its attempt expires or a stop gives up on it: the fiber is interrupted.
        const callback = (jobs: Array<Job<unknown>>) =>
          Promise.all(jobs.map((job) =>
            run(runJob(queue, handler, job), { signal: job.signal }).catch((): JobResult => ({
              id: job.id,
              status: "failed",
              output: { error: "Interrupted", message: "the attempt was interrupted" }
            }))
          ))
        // One pg-boss worker per unit of local concurrency, each with its own id, so that a send from
        // this process can wake every one of them (`nudge`).
        const ids = yield* Effect.forEach(Array.from({ length: Math.max(1, o.localConcurrency ?? 1) }), () =>
          call("work", () =>
            boss.work(queue.name, {
              batchSize: o.batchSize ?? 1,
              pollingIntervalSeconds: o.pollingInterval === undefined ? pollingIntervalSeconds : seconds(o.pollingInterval),
              ...(o.burst === true ? { burstWhenBatchFull: true } : {}),
              perJobResults: true
            }, callback)))
        localWorkers.set(queue.name, [...(localWorkers.get(queue.name) ?? []), ...ids])
        // Closing: stop claiming, and wait for the jobs in hand (SIGTERM drains).
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => localWorkers.set(queue.name, (localWorkers.get(queue.name) ?? []).filter((id) => !ids.includes(id)))).pipe(
            Effect.andThen(Effect.forEach(ids, (id) => call("offWork", () => boss.offWork(queue.name, { id, wait: true })), { concurrency: "unbounded", discard: true })),
            Effect.timeoutOrElse({
              duration: drainTimeout,
              orElse: () =>
                Effect.sync(() => (drainRanOut = true)).pipe(
                  Effect.andThen(Effect.logWarning(`jobs of ${queue.name} still running after the drain timeout; failed, to be retried`))
                )
            }),
            Effect.ignore
          )
        )
      })

    yield* Effect.forEach(options.queues ?? [], declare, { discard: true })

    return JobEngine.of({
      declare,
      send: (queue, payload, o = {}) =>
        Effect.gen(function*() {
          yield* ensure(queue)
          const data = yield* encode(queue, payload)
          const id = yield* withCallerDb((db) => boss.send(queue.name, data, { ...sendOptions(o), db }), "send")
          // (null: a job of this id was sent before, nothing new to claim.)
          if (id !== null) yield* nudge(queue.name, o)
          return Option.fromNullishOr(id)
        }),
      schedule: (queue, cron, payload, o = {}) =>
        Effect.gen(function*() {
          // A cron expression pg-boss cannot read is the caller's mistake, not an outage.
          yield* Effect.try({
            try: () => boss.previewSchedule(cron, o.tz === undefined ? { count: 1 } : { count: 1, tz: o.tz }),
            catch: (error) => engineError(new JobOptionsInvalid({ message: `${cron}: ${error instanceof Error ? error.message : String(error)}` }))
          })
          yield* ensure(queue)
          const data = yield* encode(queue, payload)
          yield* withCallerDb((db) => boss.schedule(queue.name, cron, data, { ...scheduleOptions(o), db }), "schedule")
        }),
      unschedule: (queue, key) =>
        Effect.andThen(ensure(queue), withCallerDb((db) => boss.unschedule(queue.name, key, { db }), "unschedule")),
      work,
      job: (queue, id) =>
        Effect.andThen(ensure(queue), withCallerDb((db) => boss.findJobs(queue.name, { id, db }), "job")).pipe(
          Effect.map((jobs) => Option.map(Option.fromNullishOr(jobs[0]), toJobStatus))
        ),
      cancel: (queue, id) =>
        Effect.andThen(ensure(queue), withCallerDb((db) => boss.cancel(queue.name, id, { db }), "cancel")).pipe(Effect.asVoid),
      queueStats: (queues) =>
        outsideTransaction("queueStats", "queue statistics cannot be read inside a transaction").pipe(
          Effect.andThen(call("queueStats", () => boss.getQueues(queues.map((q) => q.name)))),
          Effect.map((rows) => rows.map(toQueueStats))
        ),
      health: Effect.suspend(() =>
        running
          ? outsideTransaction("health", "the health check cannot run inside a transaction").pipe(
            Effect.andThen(call("health", () => boss.schemaVersion())),
            Effect.flatMap((version) =>
              version === null ? Effect.fail(unavailable("health", `pg-boss is not installed in ${schema}`)) : Effect.void
            ),
            Effect.timeoutOrElse({
              duration: "2 seconds",
              orElse: () => Effect.fail(unavailable("health", "the job engine did not answer within 2 s"))
            })
          )
          : Effect.fail(unavailable("health", "the job engine is not running"))
      )
    })
  })

/** JobEngine on pg-boss over the SqlClient (PostgreSQL or the embedded PGlite). */
export const JobEnginePgBoss = (options: JobEnginePgBossOptions = {}): Layer.Layer<JobEngine, JobEngineError, SqlClient.SqlClient> =>
  Layer.effect(JobEngine, makeJobEngine(options))
