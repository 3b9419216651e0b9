/**
 * pg-boss's less travelled paths through our adapter, with its timers at 1 s: supervision,
 * monitoring, persisted stats and warnings, cron, throttling, debouncing, flows, dead letters,
 * partitioned queues, the instance registry, the schema drift check. None may raise an error.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { PgBoss } from "pg-boss"
import { makePgBossDb } from "../../src/layers/jobs/PgBossDb.ts"
import { dbKinds, rawDb } from "../utils/Db.ts"

for (const kind of dbKinds) {
  layer(rawDb(kind), { excludeTestServices: true, timeout: "180 seconds" })(`pg-boss upkeep on ${kind}`, (it) => {
    it.effect("runs without an error", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const schema = `pgboss_upkeep_${Math.random().toString(36).slice(2, 8)}`
        const errors: Array<string> = []
        const boss = new PgBoss({
          db: makePgBossDb(Context.make(SqlClient.SqlClient, sql)),
          schema,
          superviseIntervalSeconds: 1,
          monitorIntervalSeconds: 1,
          maintenanceIntervalSeconds: 1,
          queueCacheIntervalSeconds: 1,
          cronMonitorIntervalSeconds: 1,
          cronWorkerIntervalSeconds: 1,
          clockMonitorIntervalSeconds: 1,
          instanceHeartbeatSeconds: 1,
          persistQueueStats: true,
          persistWarnings: true
        })
        boss.on("error", (error) => errors.push(error.message))
        yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
        const report = yield* Effect.promise(async () => {
          await boss.start()
          await boss.createQueue("dead")
          await boss.createQueue("main", { retryLimit: 0, deleteAfterSeconds: 1, retentionSeconds: 60, deadLetter: "dead" })
          await boss.createQueue("own-table", { partition: true, policy: "stately" })
          await boss.schedule("main", "* * * * * *", { tick: true })
          await boss.schedule("main", "FREQ=MINUTELY", { rule: true }, { key: "rrule" })
          let handled = 0
          await boss.work("main", { pollingIntervalSeconds: 0.5, batchSize: 5 }, async (jobs) => {
            handled += jobs.length
            if (jobs.some((job) => (job.data as { fail?: boolean }).fail)) throw new Error("fails on purpose")
          })
          await boss.work("own-table", { pollingIntervalSeconds: 0.5 }, async () => {})
          for (let i = 0; i < 10; i++) await boss.send("main", { i, fail: i % 5 === 0 })
          await boss.send("own-table", { a: 1 }, { singletonKey: "k" })
          await boss.sendThrottled("main", { t: 1 }, null, 60, "throttled")
          await boss.sendDebounced("main", { t: 2 }, null, 60, "debounced")
          await boss.insert("main", [{ data: { x: 1 } }, { data: { x: 2 }, startAfter: 30 }])
          await boss.flow([{ ref: "a", name: "main", data: { f: 1 } }, { ref: "b", name: "main", data: { f: 2 }, dependsOn: ["a"] }])
          // Until the work is done and dead-lettered (bounded), then a few more passes of every timer.
          const deadline = Date.now() + 90_000
          while (handled < 10 || (await boss.findJobs("dead")).length < 2) {
            if (Date.now() > deadline) throw new Error("the jobs were not handled in time")
            await new Promise((resolve) => setTimeout(resolve, 200))
          }
          await new Promise((resolve) => setTimeout(resolve, 3_000))
          await boss.supervise()
          const result = {
            handled,
            stats: (await boss.getQueueStats("main", { limit: 5 })).length,
            drift: (await boss.detectSchemaDrift()).ok,
            instances: (await boss.getInstances()).length,
            redriven: await boss.redrive("dead")
          }
          // Stopped first: with its timers at 1 s, a monitor pass that listed the partitioned queue just
          // before it was dropped would query a table that is gone (seen under load, a pg-boss race, not ours).
          await boss.stop({ graceful: true, timeout: 3_000 })
          await boss.deleteQueue("own-table")
          return result
        })
        assert.deepStrictEqual(errors, [])
        assert.isAtLeast(report.handled, 10)
        assert.isAbove(report.stats, 0)
        assert.isTrue(report.drift)
        assert.strictEqual(report.instances, 1)
        assert.isAtLeast(report.redriven, 2)
      }).pipe(Effect.scoped), 180_000)
  })
}
