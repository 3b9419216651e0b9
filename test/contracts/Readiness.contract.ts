/**
 * The Readiness contract: `check` succeeds while the layer's storage answers, on every layer. The
 * failure side (storage gone → 503 with a retry hint) is SQL's alone: the memory layer has nothing
 * that can go away, so it is tested in Readiness.test.ts through a proxy the test cuts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import type { Layer } from "effect"
import { Readiness } from "../../src/services/infra/Readiness.ts"

export const readinessContract = <E>(name: string, readinessLayer: Layer.Layer<Readiness, E>) =>
  layer(readinessLayer, { excludeTestServices: true })(`Readiness contract (${name})`, (it) => {
    it.effect("ready while its storage answers, every time it is asked (also concurrently)", () =>
      Effect.gen(function*() {
        const readiness = yield* Readiness
        const exits = yield* Effect.all(Array.from({ length: 5 }, () => Effect.exit(readiness.check)), { concurrency: 5 })
        assert.deepStrictEqual(exits.map(Exit.isSuccess), [true, true, true, true, true])
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(readiness.check)))
      }))
  })
