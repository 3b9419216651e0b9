/**
 * The JobEngine contract: running, retrying with backoff, failing for good (JobNoRetry, a payload
 * that no longer decodes), deduplicating sends, deferring, joining the caller's transaction,
 * schedules, two engines sharing a queue, draining on close. The fixture gives what only the layer
 * knows: another engine on the same storage (one more in this process, or as another process
 * would connect) and the schedules it stored.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, Schema, Scope } from "effect"
import type { Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { JobEngine, JobNoRetry, JobQueue } from "../../src/services/jobs/JobEngine.ts"
import type { JobEngineError } from "../../src/services/jobs/JobEngine.ts"
import { waitUntil } from "../jobs/JobEngineFixtures.ts"

const N = Schema.Struct({ n: Schema.Number })

const stateOf = (queue: JobQueue<unknown>, id: string) =>
  Effect.flatMap(JobEngine, (engine) => engine.job(queue, id)).pipe(
    Effect.map(Option.map((job) => job.state)),
    Effect.map(Option.getOrElse(() => "missing"))
  )

const sendOne = <A>(queue: JobQueue<A>, payload: A) =>
  Effect.flatMap(JobEngine, (engine) => engine.send(queue, payload)).pipe(
    Effect.map(Option.getOrThrow)
  )

export interface JobEngineFixture {
  /** Another engine on the same storage, in this process, started in the current scope; `queues` declared at start. */
  readonly another: (queues?: ReadonlyArray<JobQueue<unknown>>) => Effect.Effect<JobEngine["Service"], JobEngineError, SqlClient.SqlClient | Scope.Scope>
  /** Another engine on the same storage as another process would connect to it, started in the current scope. */
  readonly anotherProcess: Effect.Effect<JobEngine["Service"], unknown, SqlClient.SqlClient | Scope.Scope>
  /** The schedules stored for a queue. */
  readonly schedules: (queue: string) => Effect.Effect<ReadonlyArray<{ readonly key: string; readonly cron: string }>, unknown, SqlClient.SqlClient>
}

export const jobEngineContract = <E>(
  name: string,
  engineLayer: Layer.Layer<JobEngine | SqlClient.SqlClient, E>,
  fixture: JobEngineFixture
) =>
  layer(engineLayer, { excludeTestServices: true, timeout: "180 seconds" })(`JobEngine contract (${name})`, (it) => {
    it.effect("send → work runs the handler once, with the decoded payload", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        const queue = JobQueue("once", N)
        const seen: Array<{ n: number; retryCount: number }> = []
        yield* engine.work(queue, (payload, job) => Effect.sync(() => seen.push({ n: payload.n, retryCount: job.retryCount })))
        const id = yield* sendOne(queue, { n: 7 })
        yield* waitUntil("the job to complete", Effect.map(stateOf(queue, id), (s) => s === "completed"))
        assert.deepStrictEqual(seen, [{ n: 7, retryCount: 0 }])
      }).pipe(Effect.scoped), 120_000)

    it.effect("a job sent outside a transaction wakes this process's workers of its queue: claimed at once, not at their next poll", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        const queue = JobQueue(`nudged-${randomUUID().slice(0, 8)}`, N)
        const started: Array<number> = []
        const allThree = yield* Deferred.make<void>()
        // Three workers that poll every 30 s: each handler holds its worker until all three run, so
        // the three jobs are claimed by three workers, each woken by the sends.
        yield* engine.work(queue, ({ n }) =>
          Effect.sync(() => {
            started.push(n)
            if (started.length === 3) Deferred.doneUnsafe(allThree, Effect.void)
          }).pipe(Effect.andThen(Deferred.await(allThree))), { localConcurrency: 3, pollingInterval: "30 seconds" })
        // Their first polls (at start) are past.
        yield* Effect.sleep("1 second")
        const sentAt = Date.now()
        for (const n of [1, 2, 3]) yield* sendOne(queue, { n })
        yield* Deferred.await(allThree).pipe(Effect.timeout("15 seconds"))
        assert.deepStrictEqual([...started].sort(), [1, 2, 3])
        assert.isBelow(Date.now() - sentAt, 15_000)
      }))

    it.effect("a failing handler is retried with backoff, then the job fails for good", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        const queue = JobQueue("flaky", N, { retryLimit: 2, retryDelay: "1 second", retryBackoff: true })
        const attempts: Array<{ at: number; retryCount: number }> = []
        yield* engine.work(queue, (_, job) =>
          Effect.suspend(() => {
            attempts.push({ at: Date.now(), retryCount: job.retryCount })
            return Effect.fail(new Error(`attempt ${job.retryCount} failed`))
          }))
        const id = yield* sendOne(queue, { n: 1 })
        yield* waitUntil("the job to fail for good", Effect.map(stateOf(queue, id), (s) => s === "failed"), "60 seconds")
        assert.deepStrictEqual(attempts.map((a) => a.retryCount), [0, 1, 2])
        // Backoff: retryDelay × 2^retry × (1 + jitter) ⇒ at least 1 s, then at least 2 s.
        assert.isAtLeast(attempts[1]!.at - attempts[0]!.at, 1_000)
        assert.isAtLeast(attempts[2]!.at - attempts[1]!.at, 2_000)
        const job = Option.getOrThrow(yield* engine.job(queue, id))
        assert.strictEqual(job.retryCount, 2)
        assert.include(JSON.stringify(job.output), "attempt 2 failed")
      }).pipe(Effect.scoped), 120_000)

    it.effect("JobNoRetry and an undecodable payload fail the job at once", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        const queue = JobQueue("no-retry", N, { retryLimit: 5 })
        // The same queue seen by an older producer whose payload no longer decodes.
        const older = JobQueue("no-retry", Schema.Struct({ n: Schema.String }), { retryLimit: 5 })
        let calls = 0
        yield* engine.work(queue, () => Effect.suspend(() => (calls++, Effect.fail(new JobNoRetry({ message: "gone" })))))
        const a = yield* sendOne(queue, { n: 1 })
        const b = yield* sendOne(older, { n: "one" })
        yield* waitUntil("both jobs to fail", Effect.map(Effect.all([stateOf(queue, a), stateOf(queue, b)]), (s) => s.every((x) => x === "failed")))
        assert.strictEqual(calls, 1)
        const jobs = yield* Effect.forEach([a, b], (id) => Effect.map(engine.job(queue, id), Option.getOrThrow))
        assert.deepStrictEqual(jobs.map((j) => j.retryCount), [0, 0])
        assert.include(JSON.stringify(jobs[1]!.output), "JobPayloadInvalid")
      }).pipe(Effect.scoped), 120_000)

    it.effect("singleton keys, slots and ids deduplicate sends", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        // `short`: one queued job per key.
        const short = JobQueue("dedup-short", N, { policy: "short" })
        assert.isTrue(Option.isSome(yield* engine.send(short, { n: 1 }, { singletonKey: "source-a" })))
        assert.isTrue(Option.isNone(yield* engine.send(short, { n: 2 }, { singletonKey: "source-a" })))
        assert.isTrue(Option.isSome(yield* engine.send(short, { n: 3 }, { singletonKey: "source-b" })))
        // A standard queue: one job per key per slot (a day-long slot: two sends never straddle it).
        const polls = JobQueue("dedup-slot", N)
        const slot = { singletonKey: "source-a", singletonFor: "1 day" } as const
        assert.isTrue(Option.isSome(yield* engine.send(polls, { n: 1 }, slot)))
        assert.isTrue(Option.isNone(yield* engine.send(polls, { n: 2 }, slot)))
        assert.isTrue(Option.isSome(yield* engine.send(polls, { n: 3 }, { ...slot, singletonKey: "source-b" })))
        // A caller's id: sending it again is a no-op.
        const id = randomUUID()
        assert.deepStrictEqual(yield* engine.send(polls, { n: 4 }, { id }), Option.some(id))
        assert.isTrue(Option.isNone(yield* engine.send(polls, { n: 5 }, { id })))
        const stats = yield* engine.queueStats([short, polls])
        assert.sameMembers(stats.map((s) => s.queue), ["dedup-short", "dedup-slot"])
      }), 120_000)

    it.effect("startAfter defers a job", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        const queue = JobQueue("deferred", N)
        const id = Option.getOrThrow(yield* engine.send(queue, { n: 1 }, { startAfter: "1 hour" }))
        const job = Option.getOrThrow(yield* engine.job(queue, id))
        assert.strictEqual(job.state, "created")
        assert.isAbove(job.startAfter.getTime(), Date.now() + 50 * 60_000)
      }), 120_000)

    it.effect("a send inside a transaction commits or rolls back with it", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        const sql = yield* SqlClient.SqlClient
        const queue = JobQueue("in-tx", N)
        yield* engine.declare(queue)
        const kept = randomUUID()
        const dropped = randomUUID()
        yield* sql.withTransaction(engine.send(queue, { n: 1 }, { id: kept }))
        const failed = yield* sql.withTransaction(
          Effect.andThen(engine.send(queue, { n: 2 }, { id: dropped }), Effect.fail("roll back"))
        ).pipe(Effect.exit)
        assert.isTrue(Exit.isFailure(failed))
        assert.strictEqual(yield* stateOf(queue, kept), "created")
        assert.strictEqual(yield* stateOf(queue, dropped), "missing")
        // Queues listed for the engine are declared at start, so their first send may be in a transaction.
        const listed = JobQueue("listed-at-start", N)
        const other = yield* fixture.another([listed])
        assert.isTrue(Option.isSome(yield* sql.withTransaction(other.send(listed, { n: 1 }))))
        // What cannot join the transaction is refused there, not left waiting for it (PGlite).
        for (const refused of [engine.send(JobQueue("never-declared", N), { n: 1 }), engine.queueStats([queue]), engine.health]) {
          const error = yield* sql.withTransaction(refused).pipe(Effect.flip)
          assert.strictEqual(error._tag === "JobEngineError" && error.reason._tag, "JobEngineInTransaction")
        }
      }).pipe(Effect.scoped), 120_000)

    it.effect("schedules are stored and removed; a bad cron expression is refused", () =>
      Effect.gen(function*() {
        const engine = yield* JobEngine
        const queue = JobQueue("cron", N)
        const stored = fixture.schedules("cron")
        yield* engine.schedule(queue, "*/5 * * * *", { n: 1 }, { key: "every-5" })
        assert.deepStrictEqual(yield* stored, [{ key: "every-5", cron: "*/5 * * * *" }])
        yield* engine.unschedule(queue, "every-5")
        assert.deepStrictEqual(yield* stored, [])
        const refused = yield* engine.schedule(queue, "not a cron", { n: 1 }).pipe(Effect.flip)
        assert.strictEqual(refused.reason._tag, "JobOptionsInvalid")
      }), 120_000)

    it.effect("two engines share a queue: each job is processed exactly once, by one of them", () =>
      Effect.gen(function*() {
        const queue = JobQueue("shared", N)
        const jobs = 60
        const processed = new Map<number, Array<string>>()
        const engines = new Set<string>()
        const handler = (name: string) => (payload: { n: number }) =>
          Effect.gen(function*() {
            engines.add(name)
            // Each engine holds its first jobs until the other has claimed some: both take part.
            yield* waitUntil("both engines to claim jobs", Effect.sync(() => engines.size === 2), "30 seconds")
            processed.set(payload.n, [...(processed.get(payload.n) ?? []), name])
          })
        const a = yield* JobEngine
        yield* a.work(queue, handler("a"), { batchSize: 3, localConcurrency: 2 })
        // Another process, in effect: on PostgreSQL with a pool of its own; on PGlite it shares the
        // one connection there is.
        const b = yield* fixture.anotherProcess
        yield* b.work(queue, handler("b"), { batchSize: 3, localConcurrency: 2 })
        for (let n = 0; n < jobs; n++) yield* a.send(queue, { n })
        yield* waitUntil("every job to be processed", Effect.sync(() => processed.size === jobs), "60 seconds")
        // A further poll of both engines finds nothing left to run twice.
        yield* Effect.sleep("1500 millis")
        for (let n = 0; n < jobs; n++) assert.strictEqual(processed.get(n)?.length, 1, `job ${n}: ${processed.get(n)}`)
        const counts = [...processed.values()].reduce((acc, [name]) => ({ ...acc, [name!]: (acc[name!] ?? 0) + 1 }), {} as Record<string, number>)
        assert.isAbove(counts.a ?? 0, 0)
        assert.isAbove(counts.b ?? 0, 0)
      }).pipe(Effect.scoped), 120_000)

    it.effect("closing a worker's scope drains the job in flight; health fails once stopped", () =>
      Effect.gen(function*() {
        const shared = yield* JobEngine
        const queue = JobQueue("drain", N)
        const started = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        let finished = false
        const scope = yield* Scope.make()
        const engine = yield* fixture.another().pipe(Scope.provide(scope))
        yield* engine.health
        yield* engine.work(queue, () =>
          Effect.gen(function*() {
            yield* Deferred.succeed(started, undefined)
            yield* Deferred.await(release)
            yield* Effect.sleep("200 millis")
            finished = true
          })).pipe(Scope.provide(scope))
        const id = yield* sendOne(queue, { n: 1 })
        yield* Deferred.await(started)
        // SIGTERM closes the scope: the close waits for the handler, which then completes its job.
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
        yield* Effect.sleep("300 millis")
        assert.isUndefined(closing.pollUnsafe(), "the close waits for the job in flight")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(closing)
        assert.isTrue(finished)
        assert.strictEqual(yield* stateOf(queue, id), "completed")
        const health = yield* engine.health.pipe(Effect.flip)
        assert.strictEqual(health.reason._tag, "JobEngineUnavailable")
        yield* shared.health
      }), 120_000)
  })
