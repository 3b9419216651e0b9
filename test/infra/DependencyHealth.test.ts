/**
 * The outage lines' `down_for_ms` (services/infra/DependencyHealth.ts) as an operator reads them: small and
 * never negative for an outage that just began, whichever fibers report it. The bug this pins: one
 * shared state heard from a fiber under a TestClock (time ≈ 0) and from one on the real clock (or a
 * client library's logger), and logged "dependency back: redis" with down_for_ms ≈ 1.7e12.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import {
  DependencyHealth,
  dependencyFailed,
  dependencySucceeded,
  libraryLogsAsOutage,
  makeDependencyHealth
} from "../../src/services/infra/DependencyHealth.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import type { LogLine } from "../utils/CapturedLogs.ts"

/** Far above any pause of a loaded machine, far below an epoch (1.7e12). */
const SMALL_MS = 120_000

const healthLines = CapturedLogs.use((c) => c.lines).pipe(
  Effect.map((lines) => lines.filter((l) => l.text.startsWith("dependency ")))
)

const downFor = (line: LogLine | undefined): number => {
  assert.isDefined(line)
  const value = line!.annotations["down_for_ms"]
  assert.isNumber(value, JSON.stringify(line))
  return value as number
}

const assertSmall = (ms: number, what: string) => {
  assert.isAtLeast(ms, 0, `${what}: down_for_ms ${ms} is negative`)
  assert.isBelow(ms, SMALL_MS, `${what}: down_for_ms ${ms} for an outage that just began`)
}

/** A fresh state, every line captured: what each test reports goes nowhere else. */
const isolated = <A, E>(self: Effect.Effect<A, E, CapturedLogs>, health = makeDependencyHealth()) =>
  self.pipe(Effect.provideService(DependencyHealth, health), Effect.provide(CapturedLogs.layer))

describe("down_for_ms", () => {
  it.live("an outage begun under a TestClock (time 0) and ended on the real clock: small, non-negative", () =>
    isolated(Effect.gen(function*() {
      // The failure is reported by a fiber whose clock says 1970 (as an it.effect test's does)…
      yield* dependencyFailed("redis", { detail: "ECONNREFUSED" }).pipe(Effect.provide(TestClock.layer()))
      // …and the recovery by one on the real clock (another test's server, in the same process).
      yield* dependencySucceeded("redis")
      const lines = yield* healthLines
      assert.deepStrictEqual(lines.map((l) => [l.level, l.text]), [["Warn", "dependency down: redis"], ["Warn", "dependency back: redis"]])
      assertSmall(downFor(lines[1]), "back")
      assert.strictEqual(lines[1]!.annotations["failures"], 1)
    })))

  it.live("the other way round: begun on the real clock, still down and back under a TestClock far ahead", () =>
    isolated(
      Effect.gen(function*() {
        yield* dependencyFailed("database")
        const later = Effect.gen(function*() {
          yield* TestClock.adjust("3 hours")
          yield* dependencyFailed("database")
          yield* dependencySucceeded("database")
        })
        yield* later.pipe(Effect.provide(TestClock.layer()))
        const lines = yield* healthLines
        assert.deepStrictEqual(lines.map((l) => l.text), ["dependency down: database", "dependency still down: database", "dependency back: database"])
        assertSmall(downFor(lines[1]), "still down")
        assertSmall(downFor(lines[2]), "back")
        assert.isAtMost(downFor(lines[1]), downFor(lines[2]), "time runs forwards")
        assert.strictEqual(lines[2]!.annotations["failures"], 2)
      }),
      // A count line on every failure, so that the second one writes one.
      makeDependencyHealth({ stillDownEveryMs: 0 })
    ))

  it.live("a client library's own log line (its logger's date from a TestClock) starts the outage; the recovery is small", () =>
    isolated(Effect.gen(function*() {
      const health = yield* DependencyHealth
      // What NodeRedis does on each failed reconnect, on a fiber whose clock is a TestClock.
      yield* Effect.logError("NodeRedis client error", { message: "Socket closed unexpectedly" }).pipe(
        Effect.provide(libraryLogsAsOutage("redis")),
        Effect.provide(TestClock.layer())
      )
      assert.deepStrictEqual(health.down(), ["redis"])
      yield* dependencySucceeded("redis")
      const lines = yield* healthLines
      // The library's line is rewritten: its annotations travel in the message.
      assert.deepStrictEqual(lines.map((l) => l.text.replace(/ \{.*$/, "")), ["dependency down: redis", "dependency back: redis"])
      assert.include(lines[0]!.text, "Socket closed unexpectedly")
      assertSmall(downFor(lines[1]), "back")
    })))

  it.effect("the reporting functions measure on the state's clock: the duration it saw, exactly", () => {
    let now = 1_000
    return isolated(
      Effect.gen(function*() {
        yield* dependencyFailed("job engine")
        now = 31_000
        yield* dependencyFailed("job engine")
        now = 64_500
        yield* dependencySucceeded("job engine")
        const lines = yield* healthLines
        assert.deepStrictEqual(lines.map((l) => l.text), ["dependency down: job engine", "dependency still down: job engine", "dependency back: job engine"])
        assert.strictEqual(downFor(lines[1]), 30_000)
        assert.strictEqual(downFor(lines[2]), 63_500)
      }),
      makeDependencyHealth({ stillDownEveryMs: 30_000, now: () => now })
    )
  })

  it("a `now` earlier than the outage's start (another clock) is 0, never negative", () => {
    const health = makeDependencyHealth()
    health.recordFailure("redis", 1_700_000_000_000)
    assert.strictEqual(health.recordSuccess("redis", 10)?.annotations["down_for_ms"], 0)
  })

  it("the default state's clock is monotonic milliseconds", () => {
    const health = makeDependencyHealth()
    const a = health.now()
    const b = health.now()
    assert.isTrue(Number.isInteger(a))
    assert.isAtLeast(b, a)
    assert.isBelow(a, 1e11, "not an epoch time that a clock change could move")
  })
})
