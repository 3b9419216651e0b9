/**
 * The memory reducer's nudge (layers/infra/MemoryReducerNudge.ts, issue #16's memory target on
 * Node 24): where V8 needs it (13 and later) one nudge at start and one every interval, stopped with
 * the process's scope; nothing on Node 20's V8. What it does to RSS is measured by the bench (S7).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { MemoryReducerNudge, needsNudge } from "../../src/layers/infra/MemoryReducerNudge.ts"

describe("MemoryReducerNudge", () => {
  it("needs V8 13 or later", () => {
    assert.isTrue(needsNudge("13.6.233.17-node.37"))
    assert.isTrue(needsNudge("14.1.0"))
    assert.isFalse(needsNudge("11.3.244.8-node.30"))
    assert.isFalse(needsNudge("12.4.254.21-node.33"))
  })

  it.effect("on V8 13: one nudge at start, one every 20 s, none after its scope closed", () =>
    Effect.gen(function*() {
      let nudges = 0
      const layer = MemoryReducerNudge({ v8Version: "13.6.233", nudge: () => void nudges++ })
      const stopped = yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(layer)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(nudges, 1)
        yield* TestClock.adjust("19 seconds")
        assert.strictEqual(nudges, 2)
        yield* TestClock.adjust("40 seconds")
        return nudges
      }))
      assert.strictEqual(stopped, 4)
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual(nudges, 4)
    }))

  it.effect("on V8 11 (Node 20): never", () =>
    Effect.gen(function*() {
      let nudges = 0
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(MemoryReducerNudge({ v8Version: "11.3.244", nudge: () => void nudges++ }))
        yield* TestClock.adjust("120 seconds")
      }))
      assert.strictEqual(nudges, 0)
    }))
})
