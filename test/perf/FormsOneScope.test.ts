/**
 * Writes of one scope at once, on the one-statement functions (migrations 0010, 0011): the limit
 * stays exact when another writer takes the scope's last place while a create is under way (the
 * create is refused and leaves nothing: no form, steps, entry or count), and creates, title changes
 * and deletes of one scope at once all answer (every form write takes the scope's counter row and
 * the audit month's rows in one order, so none deadlocks) with the counts exact.
 * The guard for any change of those functions' lock order: issue #16's note (2026-11-27) describes
 * a create that took the counter row last, and the deadlock this second test caught in it.
 * PostgreSQL only: both need two connections at once (the embedded database serves one).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { FormsRepoSql } from "../../src/layers/forms/FormsRepoSql.ts"
import { formEventString, FormsLimitReached, FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import type { FormAudit } from "../../src/services/forms/FormsRepo.ts"
import { auditRows, BOT, formCounter, formData, step } from "../forms/FormFixtures.ts"
import { testDb } from "../utils/Db.ts"

const onPostgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ""
if (!onPostgres) console.warn("TEST_DATABASE_URL is not set: the one-scope race tests (two connections at once) are skipped")

const actor = { userId: "500000000000000001", userName: "manager", avatar: null }
const audited = (eventType: FormAudit["eventType"]): FormAudit => ({ actor, eventType })

const titles = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql<{ title: string }>`SELECT title FROM forms WHERE bot_id = ${BOT} AND server_id = ${serverId} ORDER BY workflow_id`)
      .map((r) => r.title)
  })

/** Waits (bounded) until a statement waits on a lock that the backend `holder` holds. */
const blockedBy = (holder: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let i = 0; i < 200; i++) {
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${holder}::int = ANY(pg_blocking_pids(pid))`
      if (rows[0]!.n > 0) return
      yield* Effect.sleep(Duration.millis(25))
    }
    assert.fail(`no statement ever waited on backend ${holder}'s locks`)
  })

const env = Layer.mergeAll(FormsRepoSql, AuditLogSql).pipe(Layer.provideMerge(testDb("postgres")))

describe.skipIf(!onPostgres)("one scope, several writers", () =>
layer(env, { excludeTestServices: true, timeout: 120_000 })("form writes of one scope at once, on postgres", (it) => {
  it.effect(
    "a create whose scope's last place is taken while it writes is refused, and leaves no form, entry or count",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* FormsRepo
        const scope = { botId: BOT, serverId: "830000000000000001" }
        const one = yield* repo.create(scope, formData("One"), 3, audited("PUSH"))
        const two = yield* repo.create(scope, formData("Two"), 3, audited("PUSH"))
        // Another writer's form, not yet committed: it holds the scope's counter row at 3.
        const release = yield* Deferred.make<void>()
        const inserted = yield* Deferred.make<number>()
        const other = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO forms (bot_id, server_id, title, color_hex) VALUES (${BOT}, ${scope.serverId}, 'Other', '#00d084')`
          yield* Deferred.succeed(inserted, (yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)[0]!.pid)
          yield* Deferred.await(release)
        })).pipe(Effect.forkChild)
        const holder = yield* Deferred.await(inserted)
        // The create waits for that row, then counts what the other writer committed.
        const racing = yield* repo.create(scope, formData("Raced", [step("q")]), 3, audited("PUSH")).pipe(Effect.flip, Effect.forkChild)
        yield* blockedBy(holder)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(other)
        const refused = yield* Fiber.join(racing)
        assert.instanceOf(refused, FormsLimitReached)
        assert.strictEqual((refused as FormsLimitReached).limit, 3)
        assert.deepStrictEqual(yield* titles(scope.serverId), ["One", "Two", "Other"])
        assert.strictEqual(yield* formCounter(scope.serverId), 3)
        assert.deepStrictEqual(
          (yield* auditRows(scope.serverId)).map((r) => r.event_string),
          [one, two].map((f) => formEventString("PUSH", f))
        )
        assert.strictEqual(
          (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM form_steps s JOIN forms f USING (workflow_id) WHERE f.server_id = ${scope.serverId}`)[0]!.n,
          0
        )
        // The audit log's own counters agree with its entries.
        const counted = yield* sql<{ n: string }>`SELECT coalesce(sum(n), 0)::text AS n FROM audit_count_shards
          WHERE server_id = ${scope.serverId} AND bot_id = ${BOT} AND level = 2`
        assert.strictEqual(Number(counted[0]!.n), 2)
        // Once a place is free again, a create goes through.
        yield* sql`DELETE FROM forms WHERE server_id = ${scope.serverId} AND title = 'Other'`
        const again = yield* repo.create(scope, formData("Again"), 3, audited("PUSH"))
        assert.strictEqual(again.title, "Again")
        assert.strictEqual(yield* formCounter(scope.serverId), 3)
      })
  )

  it.effect(
    "creates, title changes and deletes of one scope at once, in a month not yet dense: all answered, counts exact",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* FormsRepo
        const scope = { botId: BOT, serverId: "830000000000000002" }
        const existing = yield* Effect.forEach(
          Array.from({ length: 30 }, (_, i) => i),
          (i) => repo.create(scope, formData(`Existing ${i}`), 1000, audited("PUSH"))
        )
        // Each round at once: 8 creates, 8 title changes (their trigger takes the counter row), 2 deletes.
        for (let round = 0; round < 3; round++) {
          const results = yield* Effect.all(
            [
              ...Array.from({ length: 8 }, (_, i) => Effect.asVoid(repo.create(scope, formData(`New ${round}.${i}`, [step("q")]), 1000, audited("PUSH")))),
              ...existing.slice(round * 8, round * 8 + 8).map((f, i) =>
                Effect.map(repo.update(scope, f.workflow_id, formData(`Renamed ${round}.${i}`), audited("PATCH")), Option.getOrThrow)
              ),
              ...existing.slice(24 + round * 2, 26 + round * 2).map((f) =>
                Effect.map(repo.remove(scope, f.workflow_id, audited("DELETE")), Option.getOrThrow)
              )
            ],
            { concurrency: "unbounded", mode: "result" }
          )
          assert.deepStrictEqual(results.filter((r) => r._tag === "Failure"), [], `round ${round}`)
        }
        const forms = yield* titles(scope.serverId)
        // 30 + 3 × 8 created, 3 × 2 deleted; 24 renamed.
        assert.strictEqual(forms.length, 30 + 24 - 6)
        assert.strictEqual(forms.filter((t) => t.startsWith("Renamed")).length, 24)
        assert.strictEqual(yield* formCounter(scope.serverId), forms.length)
        const kinds = (yield* auditRows(scope.serverId)).map((r) => r.event_string.split(" ")[0])
        assert.deepStrictEqual(
          { created: kinds.filter((k) => k === "Created").length, updated: kinds.filter((k) => k === "Updated").length, deleted: kinds.filter((k) => k === "Deleted").length },
          { created: 54, updated: 24, deleted: 6 }
        )
        // Not dense: every entry counted on the month's one row.
        const month = yield* sql<{ n: string; dense: boolean }>`SELECT n::text AS n, dense FROM audit_count_shards
          WHERE server_id = ${scope.serverId} AND bot_id = ${BOT} AND level = 2`
        assert.deepStrictEqual(month.map((r) => [Number(r.n), r.dense]), [[84, false]])
        assert.isTrue(Option.isNone(yield* repo.find(scope, existing[29]!.workflow_id)))
      })
  )
}))
