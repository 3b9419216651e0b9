/**
 * The members' start counters (services/submissions/StartLimit.ts): in this process's memory, or in
 * Redis shared by every instance. While Redis does not answer, an instance counts in its own memory
 * (as the API's limits do): an outage must not answer "Slow down" to every member.
 */
import { Clock, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"
import { dependencyFailed, dependencySucceeded } from "../../services/infra/DependencyHealth.ts"
import { START_LIMIT, START_WINDOW_MS, StartLimit, windowCounter } from "../../services/submissions/StartLimit.ts"

const inMemory = Effect.sync(() => {
  const counter = windowCounter()
  return (key: string) => Effect.map(Clock.currentTimeMillis, (now) => counter.count(key, now))
})

export const StartLimitMemory = Layer.effect(StartLimit, Effect.map(inMemory, (admit) => StartLimit.of({ admit })))

// The first start opens the window (its expiry set once); later ones only count.
const countScript = Redis.script(
  (key: string, windowMs: number) => [key, windowMs],
  {
    numberOfKeys: 1,
    lua: `
local n = redis.call("INCR", KEYS[1])
if n == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[1]) end
return n
`
  }
).withReturnType<number>()

/** Counters under `prefix` in Redis (needs Redis.Redis); this instance's memory while it does not answer. */
export const StartLimitRedis = (prefix: string) =>
  Layer.effect(
    StartLimit,
    Effect.gen(function*() {
      const redis = yield* Redis.Redis
      const run = redis.eval(countScript)
      const alone = yield* inMemory
      return StartLimit.of({
        admit: (key) =>
          run(`${prefix}${key}`, START_WINDOW_MS).pipe(
            Effect.tap(() => dependencySucceeded("redis")),
            Effect.map((n) => Number(n) <= START_LIMIT),
            Effect.catch((e) =>
              Effect.andThen(
                dependencyFailed("redis", { store: "form starts", reason: e._tag, detail: e.cause instanceof Error ? e.cause.message : String(e.cause) }),
                alone(key)
              )
            )
          )
      })
    })
  )
