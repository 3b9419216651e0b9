/**
 * Answers are personal data (forms-runtime.md §6): encrypted at rest with the token keyring (bound
 * to their row), moved by `keys reencrypt` like every secret, and deleted with their form.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { reencryptAll } from "../../src/layers/infra/Reencrypt.ts"
import { SubmissionsRepoSql } from "../../src/layers/submissions/SubmissionsRepoSql.ts"
import { Cipher, generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import type { StoredForm } from "../../src/domain/forms/Form.ts"
import { dbKinds, testDb } from "../utils/Db.ts"

const k1 = generateKey()
const k2 = generateKey()
const old = Cipher.make(parseKeyring(`k1:${k1}`))
const rotated = Cipher.make(parseKeyring(`k2:${k2},k1:${k1}`))
const onlyNew = Cipher.make(parseKeyring(`k2:${k2}`))
const repoWith = (cipher: Cipher["Service"]) => SubmissionsRepoSql.pipe(Layer.provide(Layer.succeed(Cipher, cipher)))

for (const kind of dbKinds) {
  layer(testDb(kind), { excludeTestServices: true })(`submissions at rest on ${kind}`, (it) => {
    it.effect("encrypted, re-encrypted with the keyring, deleted with their form", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [form] = yield* sql<{ workflow_id: string }>`INSERT INTO forms (bot_id, server_id, title, color_hex, channel_id)
          VALUES ('1', '2', 'At rest', '#000000', '3') RETURNING workflow_id::text`
        const workflowId = Number(form!.workflow_id)
        const snapshot = { workflow_id: workflowId, title: "At rest", channel_id: "3", steps: [] } as unknown as StoredForm
        const draft = (id: string, userId: string) => ({ id, workflowId, userId, snapshot, answers: { "1": `secret of ${userId}` }, page: 0, expiresAt: new Date(Date.now() + 60_000) })

        const id = yield* Effect.gen(function*() {
          const repo = yield* SubmissionsRepo
          yield* repo.startDraft(draft("d".repeat(22), "10"))
          const submitted = yield* repo.startDraft(draft("e".repeat(22), "11"))
          const id = (yield* repo.submit({ draft: submitted, botId: "1", serverId: "2", userName: "u", userAvatar: null, answers: submitted.answers }, () => ({
            botId: "1", serverId: "2", actor: { userId: "11", userName: "u", avatar: null }, module: "forms", itemIdentifier: workflowId, eventType: "PUSH", eventString: "received"
          })))!
          yield* repo.review(id, { decision: "drop", priority: null, reason: "private reason", reviewerId: "12", reviewerName: "r" }, () => Effect.void)
          return id
        }).pipe(Effect.provide(repoWith(old)))

        const raw = yield* sql<{ v: string }>`SELECT answers_enc AS v FROM form_drafts UNION ALL SELECT answers_enc FROM form_submissions
          UNION ALL SELECT reason_enc FROM form_submissions`
        assert.strictEqual(raw.length, 3)
        for (const r of raw) {
          assert.match(r.v, /^v1\.k1\./)
          assert.notInclude(r.v, "secret")
          assert.notInclude(r.v, "private")
        }
        assert.strictEqual(yield* reencryptAll.pipe(Effect.provideService(Cipher, rotated)), 3)
        const read = yield* Effect.gen(function*() {
          const repo = yield* SubmissionsRepo
          return { s: (yield* repo.get(id))!, d: (yield* repo.draft("d".repeat(22)))! }
        }).pipe(Effect.provide(repoWith(onlyNew)))
        assert.deepStrictEqual(read.s.answers, { "1": "secret of 11" })
        assert.strictEqual(read.s.reason, "private reason")
        assert.deepStrictEqual(read.d.answers, { "1": "secret of 10" })

        yield* sql`DELETE FROM forms WHERE workflow_id = ${workflowId}`
        const left = yield* sql<{ n: number }>`SELECT (SELECT count(*) FROM form_drafts WHERE workflow_id = ${workflowId})::int
          + (SELECT count(*) FROM form_submissions WHERE workflow_id = ${workflowId})::int
          + (SELECT count(*) FROM submission_effects WHERE submission_id = ${id})::int AS n`
        assert.strictEqual(left[0]!.n, 0)
      }))
  })
}
