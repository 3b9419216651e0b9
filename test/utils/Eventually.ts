/** Polls `f` every 250 ms until `done` holds of its answer (a job's or a worker's work); fails the test with the last answer after `ms`. */
import { assert } from "@effect/vitest"
import { Effect } from "effect"

export const eventually = <A, E, R>(f: Effect.Effect<A, E, R>, done: (a: A) => boolean, label: string, ms = 30_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    let last = yield* f
    while (!done(last)) {
      if (Date.now() > deadline) assert.fail(`${label}: not reached after ${ms} ms: ${JSON.stringify(last)}`)
      yield* Effect.sleep("250 millis")
      last = yield* f
    }
    return last
  })
