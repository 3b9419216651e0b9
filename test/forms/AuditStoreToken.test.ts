/**
 * Which audit log a form write may write its entry for (the AuditStore token, AuditStoreToken.ts):
 * FormsRepoSql adds the entry in its own statement only when AuditLogSql runs on the same client.
 * Here the audit log is on a database of its own (another client): every read and write must reach
 * that log through it, and the forms database must keep no entry. The same-client, one-statement
 * path is held by test/perf/RoundTrips.test.ts (one round trip a write) and FormsOneStatement.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { FormsRepoSql } from "../../src/layers/forms/FormsRepoSql.ts"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { Forms, FormsSettings } from "../../src/services/forms/Forms.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { access, auditRows, BOT, input, TaskBoardFake } from "./FormFixtures.ts"

const SERVER_ID = "830000000000000001"

for (const kind of dbKinds) {
  // The audit log on a database of its own, built apart (Layer.fresh): another client.
  const auditElsewhere = Layer.fresh(AuditLogSql.pipe(Layer.provide(testDb(kind))))
  const env = Forms.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(FormsRepoSql, auditElsewhere, TaskBoardFake, Layer.succeed(FormsSettings, { maxFormsPerServer: 3 }))),
    Layer.provideMerge(testDb(kind))
  )

  layer(env, { excludeTestServices: true, timeout: 120_000 })(`Forms with the audit log on another client (${kind})`, (it) => {
    it.effect("same client: the repository writes that log's entries; another client: it does not (tokens frozen, not the client)", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const audit = yield* AuditLog
        const sql = yield* SqlClient.SqlClient
        // FormsRepoSql and an AuditLogSql built on the forms' own client.
        const here = yield* Effect.provide(Effect.service(AuditLog), Layer.fresh(AuditLogSql))
        assert.isTrue(repo.writesAuditOf!(here))
        assert.isDefined(audit.store)
        assert.isFalse(repo.writesAuditOf!(audit))
        assert.notStrictEqual(here.store, audit.store)
        assert.isTrue(Object.isFrozen(here.store))
        assert.notStrictEqual(here.store as unknown, sql)
        // A log without a store (the memory layer, a decorator) is never written by the repository.
        assert.isFalse(repo.writesAuditOf!({ append: audit.append, query: audit.query }))
      }))

    it.effect("create, get, update, delete: each entry is in the audit log's database, none in the forms'", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(SERVER_ID)
        const created = yield* forms.create(a, input({ title: "Elsewhere", steps: [{ type: "message", string: "Why?" }] }))
        const id = created.workflow_id!
        yield* forms.get(a, id)
        yield* forms.update(a, id, input({ title: "Elsewhere 2", steps: [{ type: "message", string: "When?" }] }))
        assert.deepStrictEqual(yield* forms.remove(a, id), { success: true })

        const page = yield* AuditLog.use((l) => l.query({ botId: BOT, serverId: SERVER_ID }, { page: "1", page_size: "10", module: "forms" } as never))
        assert.deepStrictEqual(page.logs.map((l) => [l.event_type, l.event_string]), [
          ["DELETE", `Deleted form "Elsewhere 2" (#${id})`],
          ["PATCH", `Updated form "Elsewhere 2" (#${id})`],
          ["GET", `Viewed form "Elsewhere" (#${id})`],
          ["PUSH", `Created form "Elsewhere" (#${id})`]
        ])
        assert.deepStrictEqual(yield* auditRows(SERVER_ID), [], "the forms' database keeps no entry")
      }))
  })
}
