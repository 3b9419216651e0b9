/**
 * The Readiness contract on every layer: memory, and SQL on PGlite (and PostgreSQL with
 * TEST_DATABASE_URL). Then SQL's failure side on PostgreSQL: a database that stops answering (a
 * blackholed connection) or goes away (refused) is "not ready", a 503 with a retry hint within the
 * check's 2 s bound, and ready again once it answers.
 */
import { assert, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { ReadinessSql } from "../../src/layers/infra/ReadinessSql.ts"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { Readiness } from "../../src/services/infra/Readiness.ts"
import { ReadinessMemory } from "../layers/ReadinessMemory.ts"
import { dbKinds, rawDb } from "../utils/Db.ts"
import { redisProxy } from "../utils/RedisProxy.ts"
import { readinessContract } from "./Readiness.contract.ts"

readinessContract("ReadinessMemory", ReadinessMemory)
for (const kind of dbKinds) readinessContract(`ReadinessSql on ${kind}`, ReadinessSql.pipe(Layer.provide(rawDb(kind))))

const url = process.env.TEST_DATABASE_URL
if (url !== undefined) {
  layer(Reactivity.layer, { excludeTestServices: true, timeout: "60 seconds" })("ReadinessSql when PostgreSQL stops answering", (it) => {
    it.effect("blackholed or refused → ServiceUnavailable with retry_after, within the 2 s bound; restored → ready", () =>
      Effect.gen(function*() {
        // The test's own TCP proxy in front of PostgreSQL (test/utils/RedisProxy.ts is protocol-blind).
        const proxy = yield* redisProxy(new URL(url.replace(/^postgres(ql)?:/, "tcp:")))
        const proxied = new URL(url)
        const through = new URL(proxy.url)
        proxied.hostname = through.hostname
        proxied.port = through.port
        // Built in the test's scope: the pool lives until the test ends.
        const built = yield* Layer.build(
          ReadinessSql.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(proxied.toString()), maxConnections: 2 })))
        )
        const readiness = Context.get(built, Readiness)
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(readiness.check)))

        const notReady = Effect.gen(function*() {
          const started = Date.now()
          const exit = yield* Effect.exit(readiness.check)
          const took = Date.now() - started
          assert.isTrue(Exit.isFailure(exit))
          const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
          assert.instanceOf(error, ServiceUnavailable)
          const problem = (error as ServiceUnavailable).problems[0]
          assert.match(problem.message, /database is unavailable/)
          assert.isAbove(Number((problem.additionalProperties as { retry_after?: number } | undefined)?.retry_after), 0)
          // The probe's bound (2 s) plus slack for a loaded machine: it never hangs.
          assert.isBelow(took, 10_000)
        })

        proxy.blackhole()
        yield* notReady
        proxy.cut()
        yield* notReady
        proxy.restore()
        // Ready again once it answers (the pool reconnects; bounded retries, no fixed sleep as the assertion).
        let ready = false
        for (let i = 0; i < 40 && !ready; i++) {
          ready = Exit.isSuccess(yield* Effect.exit(readiness.check))
          if (!ready) yield* Effect.sleep("250 millis")
        }
        assert.isTrue(ready)
      }).pipe(Effect.scoped))
  })
}
