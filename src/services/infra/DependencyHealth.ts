/**
 * Outage logging that does not flood: one line when a dependency (the database, Redis, …) goes down,
 * a count of its failures every minute while it stays down, and one line when it is back (with how
 * long and how many failures). Callers report every failure and every success; only the changes
 * are logged. A 10 s PostgreSQL outage under load is then two lines, not one per failed request.
 *
 * A `Context.Reference`: one shared state per process by default; a test provides a fresh one with
 * `Layer.succeed(DependencyHealth, makeDependencyHealth())`.
 *
 * Time is the state's own monotonic clock, never the reporting fiber's `Clock`: one state hears from
 * fibers with different clocks (a TestClock at 0, the real one; a client library's logger), and an
 * outage begun on one and ended on another was logged as down for ~1.7e12 ms.
 */
import { Context, Effect, Layer, Logger } from "effect"

/** A line to write: the state of a dependency changed (or a count is due). */
export interface HealthLine {
  readonly message: string
  readonly annotations: Record<string, unknown>
}

export interface DependencyHealthShape {
  /** A failure of `dependency` that means "it cannot serve now" (not a bad input); the line to write, if any. */
  readonly recordFailure: (dependency: string, now: number, detail?: Record<string, unknown>) => HealthLine | undefined
  /** A success of `dependency`; the "back" line if it was down. */
  readonly recordSuccess: (dependency: string, now: number) => HealthLine | undefined
  /** Whether `dependency` is down now (cheap: the success path asks it on every call). */
  readonly isDown: (dependency: string) => boolean
  /** Names of the dependencies down now (for readiness or tests). */
  readonly down: () => ReadonlyArray<string>
  /** This state's clock (ms, monotonic): the `now` the reporting functions below pass. */
  readonly now: () => number
}

interface Outage {
  readonly since: number
  failures: number
  /** Failures since the last line. */
  unreported: number
  lastLine: number
}

/** While a dependency stays down, a count line at most this often. */
export const STILL_DOWN_EVERY_MS = 60_000

/** Milliseconds on a clock that never jumps (NTP, a test's clock), for durations only. */
const monotonicMillis = (): number => Math.round(performance.now())

export const makeDependencyHealth = (
  options: { readonly stillDownEveryMs?: number; readonly now?: () => number } = {}
): DependencyHealthShape => {
  const every = options.stillDownEveryMs ?? STILL_DOWN_EVERY_MS
  const outages = new Map<string, Outage>()
  // A `now` before the outage began (a caller passing another clock) is never a negative duration.
  const since = (outage: Outage, now: number) => Math.max(0, now - outage.since)
  return {
    recordFailure: (dependency, now, detail = {}) => {
      const outage = outages.get(dependency)
      if (outage === undefined) {
        outages.set(dependency, { since: now, failures: 1, unreported: 0, lastLine: now })
        return { message: `dependency down: ${dependency}`, annotations: { ...detail, dependency } }
      }
      outage.failures += 1
      outage.unreported += 1
      if (now - outage.lastLine < every) return undefined
      const failures = outage.unreported
      outage.unreported = 0
      outage.lastLine = now
      return {
        message: `dependency still down: ${dependency}`,
        annotations: { ...detail, dependency, failures, down_for_ms: since(outage, now) }
      }
    },
    recordSuccess: (dependency, now) => {
      const outage = outages.get(dependency)
      if (outage === undefined) return undefined
      outages.delete(dependency)
      return {
        message: `dependency back: ${dependency}`,
        annotations: { dependency, failures: outage.failures, down_for_ms: since(outage, now) }
      }
    },
    isDown: (dependency) => outages.size > 0 && outages.has(dependency),
    down: () => [...outages.keys()],
    now: options.now ?? monotonicMillis
  }
}

export const DependencyHealth = Context.Reference<DependencyHealthShape>("gateway/DependencyHealth", {
  defaultValue: () => makeDependencyHealth()
})

// Warn for all three: an operator at LOG_LEVEL=Warn sees the end of an outage as well as its start.
const write = (line: HealthLine | undefined): Effect.Effect<void> =>
  line === undefined ? Effect.void : Effect.logWarning(line.message).pipe(Effect.annotateLogs(line.annotations))

/** Reports a failure of `dependency`: the first of an outage is logged, the next ones counted. */
export const dependencyFailed = (dependency: string, detail?: Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const health = fiber.getRef(DependencyHealth)
    return write(health.recordFailure(dependency, health.now(), detail))
  })

/** Reports a success of `dependency` (nothing to do and nothing logged unless it was down). */
export const dependencySucceeded = (dependency: string): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const health = fiber.getRef(DependencyHealth)
    if (!health.isDown(dependency)) return Effect.void
    return write(health.recordSuccess(dependency, health.now()))
  })

/**
 * Tracks an effect's outcome: success → `dependencySucceeded`; a failure for which `isOutage` holds →
 * `dependencyFailed` (with `detail` of it). Other failures (bad input, not found) say nothing of the dependency.
 */
export const trackDependency = <E>(
  dependency: string,
  isOutage: (error: E) => boolean,
  detail: (error: E) => Record<string, unknown> = () => ({})
) =>
<A, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    Effect.tap(() => dependencySucceeded(dependency)),
    Effect.tapError((error) => isOutage(error) ? dependencyFailed(dependency, detail(error)) : Effect.void)
  )

const firstText = (message: unknown): string | undefined => {
  const first = Array.isArray(message) ? message[0] : message
  return typeof first === "string" ? first : undefined
}
const detailOf = (message: unknown): Record<string, unknown> => {
  const rest = Array.isArray(message) ? message.slice(1) : []
  const error = rest.find((m): m is { message: unknown } => typeof m === "object" && m !== null && "message" in m)
  return { source: firstText(message), detail: error === undefined ? undefined : String(error.message) }
}

/**
 * For the layer of a client library that logs each failed connection attempt itself (NodeRedis logs
 * "NodeRedis client error" on every reconnect attempt): its warnings and errors become failures of
 * `dependency` (one "down" line, then counted); other lines pass. Provide it to that layer only:
 * `NodeRedis.layer(…).pipe(Layer.provide(libraryLogsAsOutage("redis")))` (as layers/infra/RedisClient.ts does).
 */
export const libraryLogsAsOutage = (dependency: string): Layer.Layer<never> =>
  Layer.effect(
    Logger.CurrentLoggers,
    Effect.map(Effect.service(Logger.CurrentLoggers), (loggers) =>
      new Set([
        Logger.make((options) => {
          let forward: Logger.Options<unknown> = options
          if (options.logLevel === "Warn" || options.logLevel === "Error" || options.logLevel === "Fatal") {
            const health = options.fiber.getRef(DependencyHealth)
            const line = health.recordFailure(dependency, health.now(), detailOf(options.message))
            if (line === undefined) return
            forward = { ...options, message: [line.message, line.annotations] }
          }
          for (const logger of loggers) logger.log(forward)
        })
      ]))
  ) as Layer.Layer<never>
