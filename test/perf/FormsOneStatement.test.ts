/**
 * Forms on the production composition (FormsRepoSql + AuditLogSql on one database): every read and
 * write is one statement with its audit entry in it (issue #16). test/forms/Forms.test.ts wraps the
 * AuditLog (to fail appends), which hides its store, so it runs the transaction path; this suite
 * holds the one-statement path to the same behaviour: the entries and their counts, the limit under
 * concurrency, 404 before 400, a failure of the audit insert undoing the write, U+0000 → 400.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { migrations } from "../../src/layers/migrations/Migrations.ts"
import { BadRequest, NotFound, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { FormsRepoSql } from "../../src/layers/forms/FormsRepoSql.ts"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { Forms, FormsSettings } from "../../src/services/forms/Forms.ts"
import { formEventString, FormsLimitReached, FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { access, auditRows, BOT, formCounter, formData, input, step, TaskBoardFake, TEXT } from "../forms/FormFixtures.ts"
import { dbKinds, rawDb, testDb } from "../utils/Db.ts"

const server = (n: number) => `82000000000000000${n}`
const paths = (e: BadRequest) => e.problems.map((p) => p.additionalProperties?.["path"])

const formCount = (serverId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM forms WHERE server_id = ${serverId}`)[0]!.n
  })

/** What the audit log itself reports for a server (its counters: page_max at page_size 1). */
const auditTotal = (serverId: string) =>
  Effect.map(AuditLog.use((a) => a.query({ botId: BOT, serverId }, { page: "1", page_size: "1" } as never)), (p) => p.page_max)

for (const kind of dbKinds) {
  const env = Forms.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(FormsRepoSql, AuditLogSql, TaskBoardFake, Layer.succeed(FormsSettings, { maxFormsPerServer: 3 }))),
    Layer.provideMerge(testDb(kind))
  )

  layer(env, { excludeTestServices: true, timeout: 120_000 })(`Forms in one statement on ${kind}`, (it) => {
    it.effect("the repository keeps the audit log: the one-statement path is the one taken", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const audit = yield* AuditLog
        assert.isDefined(repo.writesAuditOf)
        assert.isTrue(repo.writesAuditOf!(audit))
      }))

    it.effect("create, get, update, delete: the form as before, each audited, counters exact", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(1))
        const created = yield* forms.create(a, input({
          title: "Applications",
          channel_id: TEXT,
          workflow_live: true,
          color_hex: "#ABCDEF",
          steps: [
            { type: "message", string: "Why?" },
            { type: "reaction", string: "Pick", answers_validation: ["a", "b"], char_limit: [2, 3], alias: "pick", taskboard_mapping: "Title" }
          ]
        }))
        const id = created.workflow_id!
        assert.strictEqual(created.color_hex, "#abcdef")
        assert.deepStrictEqual(created.steps, [
          { step_id: 1, type: "message", string: "Why?", answers_validation: [], char_limit: [1, 2000], alias: "", taskboard_mapping: "" },
          { step_id: 2, type: "reaction", string: "Pick", answers_validation: ["a", "b"], char_limit: [2, 3], alias: "pick", taskboard_mapping: "Title" }
        ])
        assert.deepStrictEqual(yield* forms.get(a, id), created)
        const updated = yield* forms.update(a, id, input({ title: "Applications 2", steps: [{ type: "message", string: "Only" }] }))
        assert.deepStrictEqual(updated.steps.map((s) => [s.step_id, s.string]), [[1, "Only"]])
        assert.strictEqual(updated.timestamp_created, created.timestamp_created)
        assert.isFalse(updated.workflow_live)
        assert.deepStrictEqual(yield* forms.get(a, id), updated)
        assert.deepStrictEqual(yield* forms.remove(a, id), { success: true })
        assert.instanceOf(yield* Effect.flip(forms.get(a, id)), NotFound)

        const log = yield* auditRows(a.serverId)
        assert.deepStrictEqual(log.map((r) => [r.module_name, Number(r.item_identifier), r.event_type, r.event_string]), [
          ["forms", id, "PUSH", `Created form "Applications" (#${id})`],
          ["forms", id, "GET", `Viewed form "Applications" (#${id})`],
          ["forms", id, "PATCH", `Updated form "Applications 2" (#${id})`],
          ["forms", id, "GET", `Viewed form "Applications 2" (#${id})`],
          ["forms", id, "DELETE", `Deleted form "Applications 2" (#${id})`]
        ])
        assert.strictEqual(yield* auditTotal(a.serverId), 5)
        const page = yield* AuditLog.use((l) => l.query({ botId: BOT, serverId: a.serverId }, { page: "1", page_size: "10", module: "forms" } as never))
        assert.deepStrictEqual(page.logs.map((l) => l.event_type), ["DELETE", "GET", "PATCH", "GET", "PUSH"])
        assert.strictEqual(page.logs[0]!.user_name, "manager")
      }))

    it.effect("the entry's text is the title as JSON.stringify writes it, whatever the title holds", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const scope = { botId: BOT, serverId: server(2) }
        const actor = { userId: "500000000000000001", userName: "manager", avatar: "abc" }
        const titles = [
          "quote \" and backslash \\ and slash /",
          "controls \b\f\n\r\t \u0001\u0007\u000b\u001b\u001f and DEL \u007f",
          "non-ASCII: é ß 漢字 😀, separators \u2028\u2029, BOM \ufeff, NBSP \u00a0",
          "lone surrogate \ud800 becomes U+FFFD",
          "<script>&amp;</script> ' `"
        ]
        for (const title of titles) {
          const created = yield* repo.create(scope, formData(title, [step(title)]), undefined, { actor, eventType: "PUSH" })
          const removed = Option.getOrThrow(yield* repo.remove(scope, created.workflow_id, { actor, eventType: "DELETE" }))
          assert.strictEqual(removed.title, created.title)
          assert.strictEqual(created.steps[0]!.string, created.title)
          const rows = (yield* auditRows(scope.serverId)).slice(-2)
          assert.deepStrictEqual(rows.map((r) => r.event_string), [
            formEventString("PUSH", created),
            formEventString("DELETE", created)
          ], JSON.stringify(title))
        }
        // What the database kept of a lone surrogate is what a text parameter keeps: U+FFFD.
        assert.deepStrictEqual((yield* auditRows(scope.serverId)).filter((r) => r.event_string.includes("\ufffd")).length, 2)
      }))

    it.effect("404 before 400 without a pre-read: unknown ids, other servers, invalid bodies", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const mine = access(server(3))
        const { workflow_id } = yield* forms.create(mine, input({ title: "Mine" }))
        const id = workflow_id!
        const other = access(server(4))
        // An invalid body (a channel the other server lacks... or the id mismatch) on a form that is not there: 404.
        assert.instanceOf(yield* Effect.flip(forms.update(other, id, input({ title: "" }))), NotFound)
        assert.instanceOf(yield* Effect.flip(forms.update(other, id, input({ title: "Theirs" }))), NotFound)
        assert.instanceOf(yield* Effect.flip(forms.update(mine, 987654321, input({ workflow_id: 1 }))), NotFound)
        assert.instanceOf(yield* Effect.flip(forms.update(mine, 2 ** 63, input())), NotFound)
        // Ids past 32 bits reach the database as int8 (the largest storable one included).
        for (const big of [2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
          assert.instanceOf(yield* Effect.flip(forms.get(mine, big)), NotFound)
          assert.instanceOf(yield* Effect.flip(forms.update(mine, big, input())), NotFound)
          assert.instanceOf(yield* Effect.flip(forms.remove(mine, big)), NotFound)
          assert.isTrue(Option.isNone(yield* FormsRepo.use((r) => r.find({ botId: BOT, serverId: mine.serverId }, big))))
        }
        assert.instanceOf(yield* Effect.flip(forms.remove(other, id)), NotFound)
        assert.instanceOf(yield* Effect.flip(forms.get(other, id)), NotFound)
        // The same invalid body on a form that is there: 400 with its paths, nothing written.
        const invalid = yield* Effect.flip(forms.update(mine, id, input({ title: "", workflow_id: id + 1 })))
        assert.instanceOf(invalid, BadRequest)
        assert.sameMembers(paths(invalid as BadRequest), ["title", "workflow_id"])
        assert.strictEqual((yield* forms.get(mine, id)).title, "Mine")
        assert.deepStrictEqual((yield* auditRows(mine.serverId)).map((r) => r.event_type), ["PUSH", "GET"])
        assert.deepStrictEqual(yield* auditRows(other.serverId), [])
      }))

    it.effect("the limit holds under 12 concurrent creates: exactly 3 forms and 3 entries, the rest 400 naming it", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(5))
        const results = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) => Effect.result(forms.create(a, input({ title: `F${i}` }))),
          { concurrency: "unbounded" }
        )
        const refused = results.filter((r) => r._tag === "Failure").map((r) => r.failure)
        assert.strictEqual(refused.length, 9)
        for (const e of refused) assert.deepStrictEqual((e as BadRequest).problems[0]!.additionalProperties, { limit: 3 })
        assert.strictEqual(yield* formCount(a.serverId), 3)
        assert.deepStrictEqual((yield* auditRows(a.serverId)).map((r) => r.event_type), ["PUSH", "PUSH", "PUSH"])
        assert.strictEqual(yield* auditTotal(a.serverId), 3)
        // A delete frees a place.
        const first = (yield* forms.list(a)).forms[0]!.workflow_id
        yield* forms.remove(a, first)
        yield* forms.create(a, input({ title: "Again" }))
        assert.strictEqual(yield* formCount(a.serverId), 3)
        assert.strictEqual(yield* formCounter(a.serverId), 3)
      }))

    it.effect("12 concurrent PATCHes: the final form is exactly one of them, 12 entries", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access(server(6))
        const id = (yield* forms.create(a, input({ title: "Race" }))).workflow_id!
        const bodies = Array.from({ length: 12 }, (_, v) =>
          input({ title: `Race ${v}`, steps: Array.from({ length: 1 + (v % 5) }, (_, i) => ({ type: "message" as const, string: `v${v} q${i}` })) }))
        yield* Effect.forEach(bodies, (body) => forms.update(a, id, body), { concurrency: "unbounded", discard: true })
        const final = yield* forms.get(a, id)
        const winner = bodies.find((b) => b.title === final.title)!
        assert.deepStrictEqual(final.steps.map((s) => s.string), winner.steps!.map((s) => s.string))
        assert.strictEqual((yield* auditRows(a.serverId)).filter((r) => r.event_type === "PATCH").length, 12)
      }))

    it.effect("an audit insert that fails undoes the write (one statement): 503, nothing written", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const forms = yield* Forms
        const a = access(server(7))
        const kept = yield* forms.create(a, input({ title: "Kept", steps: [{ type: "message", string: "q1" }] }))
        // From now on every audit insert of this server fails as a database that cannot serve (SQLSTATE 53000).
        yield* sql.unsafe(`CREATE FUNCTION refuse_audit_${kind}() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.server_id = '${a.serverId}' THEN RAISE EXCEPTION 'audit refused (test)' USING ERRCODE = '53000'; END IF;
            RETURN NEW;
          END $$`)
        yield* sql.unsafe(`CREATE TRIGGER refuse_audit_${kind} BEFORE INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION refuse_audit_${kind}()`)
        const failures = [
          yield* Effect.flip(forms.create(a, input({ title: "Lost", steps: [{ type: "message", string: "q" }] }))),
          yield* Effect.flip(forms.update(a, kept.workflow_id!, input({ title: "Changed", steps: [] }))),
          yield* Effect.flip(forms.remove(a, kept.workflow_id!)),
          yield* Effect.flip(forms.get(a, kept.workflow_id!))
        ]
        yield* sql.unsafe(`DROP TRIGGER refuse_audit_${kind} ON audit_entries`)
        for (const e of failures) assert.instanceOf(e, ServiceUnavailable)
        assert.strictEqual(yield* formCount(a.serverId), 1)
        const stored = Option.getOrThrow(yield* FormsRepo.use((r) => r.find({ botId: BOT, serverId: a.serverId }, kept.workflow_id!)))
        assert.strictEqual(stored.title, "Kept")
        assert.deepStrictEqual(stored.steps.map((s) => s.string), ["q1"])
        assert.deepStrictEqual((yield* auditRows(a.serverId)).map((r) => r.event_type), ["PUSH"])
        assert.strictEqual(yield* auditTotal(a.serverId), 1)
      }))

    it.effect("a string the database cannot store (U+0000) → 400 at its path, no form, no entry", () =>
      Effect.gen(function*() {
        const repo = yield* FormsRepo
        const scope = { botId: BOT, serverId: server(8) }
        const actor = { userId: "500000000000000001", userName: "manager", avatar: null }
        const bad = formData("a\u0000b", [step("ok"), step("fine", { alias: "x\u0000" })], { fwd_channel_ids: ["1", "\u0000"] })
        const created = yield* Effect.flip(repo.create(scope, bad, 3, { actor, eventType: "PUSH" }))
        assert.instanceOf(created, BadRequest)
        assert.sameMembers(paths(created as BadRequest), ["title", "fwd_channel_ids[1]", "steps[1].alias"])
        const inStep = yield* Effect.flip(repo.create(scope, formData("t", [step("\u0000")]), 3, { actor, eventType: "PUSH" }))
        assert.deepStrictEqual(paths(inStep as BadRequest), ["steps[0].string"])
        const kept = yield* repo.create(scope, formData("Kept"), 3, { actor, eventType: "PUSH" })
        const updated = yield* Effect.flip(repo.update(scope, kept.workflow_id, formData("ok", [step("x", { taskboard_mapping: "\u0000" })]), {
          actor,
          eventType: "PATCH"
        }))
        assert.deepStrictEqual(paths(updated as BadRequest), ["steps[0].taskboard_mapping"])
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(scope, kept.workflow_id)), kept)
        assert.deepStrictEqual((yield* auditRows(scope.serverId)).map((r) => r.event_type), ["PUSH"])
      }))
  })

  // Before 0010 the limit counted forms; the counter rows start from the forms already there.
  layer(rawDb(kind), { excludeTestServices: true, timeout: 120_000 })(`Migration 0010 on ${kind}`, (it) => {
    it.effect("counts the forms already stored, then keeps the count through inserts, deletes and TRUNCATE", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const names = Object.keys(migrations)
        const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0010"))
        assert.isBelow(Object.keys(before).length, names.length)
        const run = Migrator.make({})
        yield* run({ loader: Migrator.fromRecord(before), table: "gateway_migrations" })
        for (const [serverId, count] of [["s1", 3], ["s2", 1]] as const) {
          for (let i = 0; i < count; i++) {
            yield* sql`INSERT INTO forms (bot_id, server_id, title, color_hex) VALUES (${BOT}, ${serverId}, ${`F${i}`}, '#00d084')`
          }
        }
        yield* run({ loader: Migrator.fromRecord(migrations), table: "gateway_migrations" })
        assert.deepStrictEqual([yield* formCounter("s1"), yield* formCounter("s2"), yield* formCounter("s3")], [3, 1, undefined])

        const repo = yield* Effect.provide(Effect.service(FormsRepo), FormsRepoSql)
        assert.instanceOf(yield* Effect.flip(repo.create({ botId: BOT, serverId: "s1" }, formData("Fourth"), 3)), FormsLimitReached)
        const second = yield* repo.create({ botId: BOT, serverId: "s2" }, formData("Second"), 3)
        assert.strictEqual(yield* formCounter("s2"), 2)
        yield* sql`DELETE FROM forms WHERE server_id = 's1' AND title = 'F0'`
        assert.strictEqual(yield* formCounter("s1"), 2)
        yield* repo.create({ botId: BOT, serverId: "s1" }, formData("Third again"), 3)
        assert.strictEqual(yield* formCounter("s1"), 3)
        assert.isTrue(Option.isSome(yield* repo.remove({ botId: BOT, serverId: "s2" }, second.workflow_id)))
        assert.strictEqual(yield* formCounter("s2"), 1)
        // Scopes are fixed: moving a form would desynchronise the counts, so the database refuses it.
        const moved = yield* Effect.exit(sql`UPDATE forms SET server_id = 's9' WHERE server_id = 's2'`)
        assert.isTrue(Exit.isFailure(moved))
        assert.strictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM forms WHERE server_id = 's9'`)[0]!.n, 0)
        yield* sql`TRUNCATE forms CASCADE`
        assert.strictEqual(yield* formCounter("s1"), undefined)
        yield* repo.create({ botId: BOT, serverId: "s1" }, formData("After truncate"), 1)
        assert.strictEqual(yield* formCounter("s1"), 1)
      }))
  })
}
