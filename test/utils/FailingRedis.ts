/** A Redis whose every command and script fails with `error` (an unreachable Redis, without a socket). */
import { Effect, Layer } from "effect"
import { Redis } from "effect/persistence"

export const failingRedis = (error = new Redis.RedisError({ cause: new Error("ECONNREFUSED") })) =>
  Layer.succeed(Redis.Redis, {
    send: () => Effect.fail(error),
    subscribe: () => Effect.die("unused"),
    eval: () => () => Effect.fail(error),
    reserve: Effect.die("unused")
  } as Redis.Redis["Service"])
