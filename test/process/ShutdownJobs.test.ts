/**
 * SIGTERM and the jobs in hand (Shutdown.test.ts is the process seen from outside): the job engine's
 * drain is the shutdown grace (main.ts provides SHUTDOWN_GRACE_MS as JobDrainTimeout), spent once.
 * A job still running at its end is failed, to be retried, and its handler interrupted; pg-boss is
 * stopped well before main.ts's last resort (grace + 5 s), which would leave the job active until
 * it expires and the database unclosed. Before: 30 s for the workers' drain, then up to 30 s more
 * in pg-boss's graceful stop, whatever the grace.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Option, Schema, Scope } from "effect"
import { JobDrainTimeout } from "../../src/layers/jobs/JobEnginePgBoss.ts"
import { JobEngine, JobQueue } from "../../src/services/jobs/JobEngine.ts"
import { anotherEngine, engineDb, suiteOptions } from "../jobs/JobEngineFixtures.ts"
import { dbKinds } from "../utils/Db.ts"

const N = Schema.Struct({ n: Schema.Number })
const GRACE_MS = 2_000
/** The stop after the drain: tens of ms measured; room for a loaded machine, below the second timeout the bug spent. */
const AFTER_GRACE_MS = 1_500

for (const kind of dbKinds) {
  // The suite's engine (JobEngine) reads the job back; the one under test has the drain of main.ts.
  const suite = suiteOptions()
  const { drainTimeout: _, ...options } = suite
  layer(engineDb(kind, suite), { excludeTestServices: true, timeout: "120 seconds" })(`shutdown with a job in hand (${kind})`, (it) => {
    it.effect("the drain is the grace: the job still running is failed (to be retried), its handler interrupted, the engine stopped", () =>
      Effect.gen(function*() {
        const reader = yield* JobEngine
        const queue = JobQueue(`hang-${kind}`, N, { retryLimit: 3 })
        const started = yield* Deferred.make<void>()
        let interrupted = false
        const scope = yield* Scope.make()
        const engine = yield* anotherEngine(options).pipe(
          Effect.provideService(JobDrainTimeout, Duration.millis(GRACE_MS)),
          Scope.provide(scope)
        )
        yield* engine.work(queue, () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))
          )).pipe(Scope.provide(scope))
        const id = Option.getOrThrow(yield* engine.send(queue, { n: 1 }))
        yield* Deferred.await(started)

        // SIGTERM: the scope closes (the workers' drain, then pg-boss's stop).
        const t0 = Date.now()
        // Detached: a close is not interruptible, and one that hangs must fail the test, not time it out.
        const closing = yield* Effect.forkDetach(Scope.close(scope, Exit.void))
        const closed = yield* Fiber.await(closing).pipe(
          Effect.as(true),
          Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.succeed(false) })
        )
        const elapsed = Date.now() - t0
        assert.isTrue(closed, "the engine stopped within 20 s")
        assert.isAtLeast(elapsed, GRACE_MS - 100, "the job in hand gets the grace")
        assert.isBelow(elapsed, GRACE_MS + AFTER_GRACE_MS, `closed ${elapsed} ms after the signal`)
        assert.isTrue(interrupted, "the handler still running was interrupted")
        const state = yield* Effect.map(reader.job(queue, id), Option.map((job) => job.state))
        assert.deepStrictEqual(state, Option.some("retry"), "failed by the stop, to be retried (not left active until it expires)")
      }), 60_000)
  })
}
