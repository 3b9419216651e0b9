/**
 * Readiness covers the job engine (delivery.md §6, issue #14 item 2): /readyz is 200 only when the
 * database and the engine answer; an engine that stopped or does not answer makes it 503.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { ReadinessWithJobs } from "../../src/layers/infra/ReadinessJobs.ts"
import { JobEngine, JobEngineError, JobEngineUnavailable } from "../../src/services/jobs/JobEngine.ts"
import { Readiness } from "../../src/services/infra/Readiness.ts"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { stub } from "../layers/Stub.ts"

const engine = (health: Effect.Effect<void, JobEngineError>) => stub(JobEngine, { health })
const database = (check: Effect.Effect<void, ServiceUnavailable>) => Layer.succeed(Readiness, Readiness.of({ check }))
const down = new JobEngineError({ reason: new JobEngineUnavailable({ operation: "health", message: "the job engine is not running" }) })

const check = (db: Effect.Effect<void, ServiceUnavailable>, health: Effect.Effect<void, JobEngineError>) =>
  Effect.flatMap(Readiness, (r) => r.check).pipe(
    Effect.provide(ReadinessWithJobs.pipe(Layer.provide([database(db), engine(health)])))
  )

describe("readiness with the job engine", () => {
  it.effect("ready when the database and the engine answer", () =>
    Effect.gen(function*() {
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(check(Effect.void, Effect.void))))
    }))

  it.effect("503 when the engine does not answer", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(check(Effect.void, Effect.fail(down)))
      assert.strictEqual(error._tag, "ServiceUnavailable")
      assert.match(error.problems[0]!.message, /job engine/)
    }))

  it.effect("503 when the database does not answer (the engine is not asked)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(check(Effect.fail(ServiceUnavailable.of("The database is unavailable; retry later.", 5)), Effect.die("not asked")))
      assert.match(error.problems[0]!.message, /database/)
    }))
})
