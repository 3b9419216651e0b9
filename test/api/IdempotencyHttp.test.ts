/**
 * Safe retries over HTTP (issue #30), on PGlite and PostgreSQL: a write sent again with its
 * `Idempotency-Key` changes nothing and gets the first answer; the same key with another body is a
 * 422, a key in use a 409; an ill-formed key a 400; a key older than 24 h is forgotten. Counted in
 * the database: forms, audit entries, kept keys. The connection reset: IdempotencyReset.test.ts;
 * two instances: IdempotencyInstances.test.ts.
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { ALICE_ID, BOB_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { BotId, ServerId } from "../../src/domain/infra/Ids.ts"
import { tokenOf, typedClient } from "../utils/TestApp.ts"
import { formsOverHttp, formsPath } from "./FormsHttpFixtures.ts"
import { countsOf, form, send } from "./IdempotencyFixtures.ts"

formsOverHttp("idempotency keys", (it) => {
  describe("one write per key", () => {
    it.effect("the same create sent twice: one form, one audit entry, the same answer again", () =>
      Effect.gen(function*() {
        const key = randomUUID()
        const title = `Twice ${key}`
        const first = yield* send("POST", formsPath(), key, form(title))
        assert.strictEqual(first.status, 200, first.text)
        assert.isNull(first.replayed)
        const again = yield* send("POST", formsPath(), key, form(title))
        assert.deepStrictEqual(yield* countsOf(title), { forms: 1, audits: 1 })
        assert.strictEqual(again.status, 200, again.text)
        assert.strictEqual(again.replayed, "true")
        assert.strictEqual(again.text, first.text)
        assert.strictEqual(again.type, first.type)
      }))

    it.effect("without a key, the same create twice makes two forms (as before)", () =>
      Effect.gen(function*() {
        const title = `No key ${randomUUID()}`
        assert.strictEqual((yield* send("POST", formsPath(), undefined, form(title))).status, 200)
        assert.strictEqual((yield* send("POST", formsPath(), undefined, form(title))).status, 200)
        assert.deepStrictEqual(yield* countsOf(title), { forms: 2, audits: 2 })
      }))

    it.effect("ten at once with one key: one form, one audit entry; the others 409 or the first answer", () =>
      Effect.gen(function*() {
        const key = randomUUID()
        const title = `Ten ${key}`
        const answers = yield* Effect.all(Array.from({ length: 10 }, () => send("POST", formsPath(), key, form(title))), {
          concurrency: "unbounded"
        })
        const ok = answers.filter((a) => a.status === 200)
        assert.isAtLeast(ok.length, 1, JSON.stringify(answers))
        for (const a of answers) {
          assert.include([200, 409], a.status, a.text)
          if (a.status === 409) {
            assert.deepStrictEqual(JSON.parse(a.text), {
              errors: [{
                code: "Conflict",
                message: "A request with this Idempotency-Key is still being processed; retry once it has been answered.",
                additionalProperties: { header: "Idempotency-Key" }
              }]
            })
          }
        }
        assert.strictEqual(new Set(ok.map((a) => a.text)).size, 1, "every 200 is the same answer")
        assert.strictEqual(ok.filter((a) => a.replayed === null).length, 1, "one of them ran")
        assert.deepStrictEqual(yield* countsOf(title), { forms: 1, audits: 1 })
        // A retry after they all ended gets the answer.
        const later = yield* send("POST", formsPath(), key, form(title))
        assert.strictEqual(later.text, ok[0]!.text)
      }))

    it.effect("the same key with another body: 422, nothing written", () =>
      Effect.gen(function*() {
        const key = randomUUID()
        const title = `Other body ${key}`
        assert.strictEqual((yield* send("POST", formsPath(), key, form(title))).status, 200)
        const other = yield* send("POST", formsPath(), key, form(`${title} changed`))
        assert.strictEqual(other.status, 422, other.text)
        const body = JSON.parse(other.text)
        assert.deepStrictEqual(Object.keys(body), ["errors"])
        assert.strictEqual(body.errors[0].code, "Unprocessable Content")
        assert.deepStrictEqual(body.errors[0].additionalProperties, { header: "Idempotency-Key" })
        // Another path with the key (a PATCH of that form) is another request too.
        const created = JSON.parse((yield* send("POST", formsPath(), key, form(title))).text)
        const patch = yield* send("PATCH", `${formsPath()}/${created.workflow_id}`, key, form(title))
        assert.strictEqual(patch.status, 422, patch.text)
        assert.deepStrictEqual(yield* countsOf(title), { forms: 1, audits: 1 })
        assert.deepStrictEqual(yield* countsOf(`${title} changed`), { forms: 0, audits: 0 })
      }))

    it.effect("keys are per user: Bob's request with Alice's key runs as his own", () =>
      Effect.gen(function*() {
        const key = randomUUID()
        const title = `Per user ${key}`
        assert.strictEqual((yield* send("POST", formsPath(), key, form(title))).status, 200)
        const bob = yield* send("POST", formsPath(), key, form(title), BOB_ID)
        // Bob may not manage S1: his own answer (403), not Alice's form.
        assert.strictEqual(bob.status, 403, bob.text)
        assert.isNull(bob.replayed)
      }))

    it.effect("update and delete: replayed, applied once (the delete's retry is not a 404)", () =>
      Effect.gen(function*() {
        const title = `Update ${randomUUID()}`
        const created = JSON.parse((yield* send("POST", formsPath(), undefined, form(title))).text)
        const path = `${formsPath()}/${created.workflow_id}`
        const patchKey = randomUUID()
        const patched = yield* send("PATCH", path, patchKey, form(`${title} v2`))
        assert.strictEqual(patched.status, 200, patched.text)
        const patchedAgain = yield* send("PATCH", path, patchKey, form(`${title} v2`))
        assert.strictEqual(patchedAgain.text, patched.text)
        assert.strictEqual(patchedAgain.replayed, "true")
        const sql = yield* SqlClient.SqlClient
        const patches = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_entries
          WHERE event_type = 'PATCH' AND item_identifier = ${created.workflow_id}`
        assert.strictEqual(patches[0]!.n, 1)

        const deleteKey = randomUUID()
        const deleted = yield* send("DELETE", path, deleteKey)
        assert.strictEqual(deleted.status, 200, deleted.text)
        const deletedAgain = yield* send("DELETE", path, deleteKey)
        assert.strictEqual(deletedAgain.status, 200, deletedAgain.text)
        assert.strictEqual(deletedAgain.text, deleted.text)
        // Without the key the retry would have said 404.
        assert.strictEqual((yield* send("DELETE", path, undefined)).status, 404)
      }))

    it.effect("a kept 4xx is replayed; a key whose request is refused by the schema stays free", () =>
      Effect.gen(function*() {
        const key = randomUUID()
        const refused = yield* send("POST", formsPath(), key, { title: 5, steps: [] })
        assert.strictEqual(refused.status, 400, refused.text)
        const again = yield* send("POST", formsPath(), key, { title: 5, steps: [] })
        assert.strictEqual(again.status, 400)
        assert.strictEqual(again.replayed, "true")
        assert.strictEqual(again.text, refused.text)
      }))
  })

  describe("the typed client", () => {
    it.effect("sends a fresh key with each write: each create is kept under its own key", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const keys = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE user_id = ${ALICE_ID}`, (r) => r[0]!.n)
        const before = yield* keys
        const client = yield* typedClient(yield* tokenOf(ALICE_ID))
        const params = { appClientId: BotId.make(BOT1_ID), serverId: ServerId.make(S1_ID) }
        const title = `Typed ${randomUUID()}`
        yield* client.forms.create({ params, payload: { title } })
        yield* client.forms.create({ params, payload: { title } })
        assert.strictEqual((yield* keys) - before, 2)
        assert.deepStrictEqual(yield* countsOf(title), { forms: 2, audits: 2 })
      }))
  })

  describe("the key", () => {
    it.effect("1–255 printable ASCII characters, bare or quoted; else 400 naming the header, nothing written", () =>
      Effect.gen(function*() {
        const title = `Bad keys ${randomUUID()}`
        for (const bad of ["x".repeat(256), "clé", "\"\""]) {
          const r = yield* send("POST", formsPath(), bad, form(title))
          assert.strictEqual(r.status, 400, `${bad}: ${r.text}`)
          const body = JSON.parse(r.text)
          assert.strictEqual(body.errors[0].code, "Bad Request")
          assert.include(body.errors[0].message, "Idempotency-Key")
          assert.deepStrictEqual(body.errors[0].additionalProperties, { header: "Idempotency-Key" })
        }
        assert.deepStrictEqual(yield* countsOf(title), { forms: 0, audits: 0 })
        const long = "k".repeat(255)
        assert.strictEqual((yield* send("POST", formsPath(), long, form(title))).status, 200)
        // The draft's quoted form names the same key.
        const quoted = yield* send("POST", formsPath(), `"${long}"`, form(title))
        assert.strictEqual(quoted.replayed, "true")
        assert.deepStrictEqual(yield* countsOf(title), { forms: 1, audits: 1 })
      }))

    it.effect("a GET ignores the header", () =>
      Effect.gen(function*() {
        const r = yield* send("GET", formsPath(), "x".repeat(300))
        assert.strictEqual(r.status, 200, r.text)
      }))

    it.effect("a key older than 24 h is forgotten: the retry runs again, and the purge deletes it", () =>
      Effect.gen(function*() {
        const key = randomUUID()
        const title = `Old ${key}`
        const first = yield* send("POST", formsPath(), key, form(title))
        const sql = yield* SqlClient.SqlClient
        const kept = yield* sql<{ body_enc: string; status: number }>`SELECT body_enc, status FROM idempotency_keys WHERE key = ${key}`
        assert.strictEqual(kept.length, 1)
        assert.strictEqual(kept[0]!.status, 200)
        // Stored encrypted: the form's title is nowhere in clear.
        assert.notInclude(kept[0]!.body_enc, title)
        yield* sql`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second' WHERE key = ${key}`
        const later = yield* send("POST", formsPath(), key, form(title))
        assert.strictEqual(later.status, 200, later.text)
        assert.isNull(later.replayed)
        assert.notStrictEqual(JSON.parse(later.text).workflow_id, JSON.parse(first.text).workflow_id)
        assert.deepStrictEqual(yield* countsOf(title), { forms: 2, audits: 2 })
        // Aged again, then purged.
        yield* sql`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = ${key}`
        const { deleteExpiredKeys } = yield* Effect.promise(() => import("../../src/layers/infra/IdempotencyStoreSql.ts"))
        assert.isAtLeast(yield* deleteExpiredKeys(1000), 1)
        assert.strictEqual((yield* sql`SELECT 1 FROM idempotency_keys WHERE key = ${key}`).length, 0)
      }))
  })
})
