/** Waits until `f` answers something (a job's work), at most 10 s. */
import { Effect } from "effect"

export const eventually = <A>(f: () => A | undefined) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const a = f()
      if (a !== undefined) return a
      yield* Effect.sleep("50 millis")
    }
    throw new Error("never happened")
  })
