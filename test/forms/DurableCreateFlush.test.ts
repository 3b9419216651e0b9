/**
 * A create answered is flushed (issue #30, item 1): when FormsRepo.create (the procedure
 * `forms_create_durable`, migration 0014) returns, the WAL is flushed past the create's commit
 * record. On a server of the test's own (ThrowawayPostgres.ts: the shared one carries other files'
 * WAL, and pg_walinspect is an extension of the whole database), the creates run as an ordinary
 * role, as in production; the superuser only reads the WAL: the flush position right after each
 * answer, then where the create's commit record (the one of its form's xmin) ends.
 * On 0011's procedure the flush was behind that end after most answers (the issue: 20 of 20).
 * PostgreSQL only (TEST_DATABASE_URL set, as in CI): it needs the server's binaries.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, References } from "effect"
import { Reactivity } from "effect/reactivity"
import { MigrationsLayer } from "../../src/layers/migrations/Migrations.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { FormsRepoSql } from "../../src/layers/forms/FormsRepoSql.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { throwawayPostgres } from "../utils/ThrowawayPostgres.ts"
import { BOT, formData, step } from "./FormFixtures.ts"

const onPostgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ""
if (!onPostgres) console.warn("TEST_DATABASE_URL is not set: the durable create's flush test (a server of its own) is skipped")

const actor = { userId: "500000000000000001", userName: "manager", avatar: null }
const CREATES = 20

interface Checked {
  readonly id: number
  readonly flushed: string
  readonly commitEnd: string | null
  readonly durable: boolean | null
}

describe.skipIf(!onPostgres)("a durable create, on a PostgreSQL server of its own", () => {
  it.live(
    `after each of ${CREATES} creates answered, the WAL is flushed past the create's commit (creates as a non-superuser)`,
    () =>
      Effect.gen(function*() {
        const server = yield* throwawayPostgres
        const admin = yield* PgClient.make({ url: server.url("postgres"), maxConnections: 1 })
        yield* admin`CREATE EXTENSION pg_walinspect`
        const gateway = Layer.mergeAll(FormsRepoSql, AuditLogSql).pipe(
          Layer.provideMerge(MigrationsLayer.pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")))),
          Layer.provideMerge(PgClient.layer({ url: server.url("gateway"), maxConnections: 2 }))
        )
        const checked = yield* Effect.gen(function*() {
          const repo = yield* FormsRepo
          const gatewaySql = yield* PgClient.PgClient
          const [me] = yield* gatewaySql<{ superuser: boolean }>`SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user`
          assert.isFalse(me!.superuser, "the creates must run as an ordinary role")
          const out: Array<Checked> = []
          for (let i = 0; i < CREATES; i++) {
            const [before] = yield* admin<{ lsn: string }>`SELECT pg_current_wal_insert_lsn()::text AS lsn`
            const form = yield* repo.create({ botId: BOT, serverId: "830000000000003001" }, formData(`Flushed ${i}`, [step("q")]), undefined, {
              actor,
              eventType: "PUSH"
            })
            // Read at once: the flush position when the caller got its answer.
            const [flushed] = yield* admin<{ lsn: string }>`SELECT pg_current_wal_flush_lsn()::text AS lsn`
            // A synchronous commit that writes a record flushes everything before it: pg_walinspect reads only flushed WAL.
            yield* admin`SELECT pg_logical_emit_message(true, 'test', ''::text)::text`
            const [commit] = yield* admin<{ end_lsn: string; durable: boolean }>`SELECT r.end_lsn::text AS end_lsn,
                ${flushed!.lsn}::pg_lsn >= r.end_lsn AS durable
              FROM forms f, pg_get_wal_records_info(${before!.lsn}::pg_lsn, pg_current_wal_flush_lsn()) r
              WHERE f.workflow_id = ${form.workflow_id} AND r.resource_manager = 'Transaction' AND r.record_type = 'COMMIT'
                AND r.xid = f.xmin`
            out.push({ id: form.workflow_id, flushed: flushed!.lsn, commitEnd: commit?.end_lsn ?? null, durable: commit?.durable ?? null })
          }
          return out
        }).pipe(Effect.provide(gateway))
        assert.deepStrictEqual(checked.filter((c) => c.commitEnd === null), [], "every create's commit record found in the WAL")
        assert.deepStrictEqual(checked.filter((c) => c.durable !== true), [], "answered before the WAL was flushed past the create's commit")
        assert.strictEqual(checked.length, CREATES)
      }).pipe(Effect.provide(Reactivity.layer)),
    { timeout: 90_000 }
  )
})
