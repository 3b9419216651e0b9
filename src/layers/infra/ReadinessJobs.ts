/**
 * Readiness of a process that runs the job engine (every role: the API sends jobs, the worker runs
 * them): the database answers, and so does the engine (its tables, within 2 s). A worker whose
 * engine stopped is taken out of rotation like one whose database is gone.
 */
import { Effect, Layer } from "effect"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { trackDependency } from "../../services/infra/DependencyHealth.ts"
import { JobEngine } from "../../services/jobs/JobEngine.ts"
import { Readiness } from "../../services/infra/Readiness.ts"

/** Wraps the Readiness it is given (ReadinessSql) with the job engine's health. */
export const ReadinessWithJobs = Layer.effect(
  Readiness,
  Effect.gen(function*() {
    const base = yield* Readiness
    const engine = yield* JobEngine
    return Readiness.of({
      check: base.check.pipe(
        Effect.andThen(engine.health.pipe(
          // One line when it goes down and one when it is back, not one per probe.
          trackDependency("job engine", () => true, (e) => ({ detail: e.reason.message })),
          Effect.mapError(() => ServiceUnavailable.of("The job engine is unavailable; retry later.", 5))
        ))
      )
    })
  })
)
