/**
 * Database round trips of the hot requests (issue #16), counted on the wire (PgWireFixtures.ts), on every
 * database kind: a form create, update and delete with their audit entries, audit pages (first,
 * middle, module-filtered, time-filtered), a token resolution and a token check on a cold cache.
 * The layers are the production ones (App.ts): FormsRepoSql + AuditLogSql behind Forms, and
 * TokenStoreCached over TokenStoreSql. A regression in the count fails here.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { TokenStoreCached } from "../../src/layers/auth/TokenStoreCached.ts"
import { AuditLogSql } from "../../src/layers/audit/AuditLogSql.ts"
import { FormsRepoSql } from "../../src/layers/forms/FormsRepoSql.ts"
import { TokenStoreSql } from "../../src/layers/auth/TokenStoreSql.ts"
import { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { Forms, FormsSettings } from "../../src/services/forms/Forms.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { newToken, TokenStore } from "../../src/services/auth/TokenStore.ts"
import { access, BOT, input, TaskBoardFake } from "../forms/FormFixtures.ts"
import { dbKinds } from "../utils/Db.ts"
import { countedDb, Wire } from "./PgWireFixtures.ts"

/** The round trips and statements of `self`, run alone on the client. */
const counted = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const wire = yield* Wire
    wire.reset()
    const value = yield* self
    return { value, roundTrips: wire.roundTrips(), statements: wire.statements() }
  })

/**
 * Asserts the round trips of one request (the statements in the message when it fails);
 * ROUND_TRIPS_VERBOSE=1 prints them all. Measured with this suite on the code before issue #16
 * (both kinds alike): create 7, update 9, delete 6, get 5; audit pages: first 2, middle, last and
 * module-filtered 4, time-filtered 5, past the end 1; a cold token check 2 (familyOf, checkAccess).
 */
const expectTrips = (name: string, c: { roundTrips: number; statements: ReadonlyArray<string> }, expected: number) =>
  Effect.sync(() => {
    const listing = c.statements.map((s) => s.slice(0, 140)).join("\n  ")
    if (process.env.ROUND_TRIPS_VERBOSE) console.log(`${name}: ${c.roundTrips} round trips\n  ${listing}`)
    assert.strictEqual(c.roundTrips, expected, `${name}: ${c.roundTrips} round trips\n  ${listing}`)
  })

const user = { id: "100000000000000001", username: "alice", discriminator: "0", globalName: null, avatar: null, locale: "en-US" }
const platform = { accessEnc: "v1.k1.aaa.bbb", refreshEnc: "v1.k1.ccc.ddd", expiresAt: new Date(Date.now() + 3600_000) }
const token = (kind: "temporary" | "access" | "refresh", seconds = 3600) => {
  const issuedAt = new Date()
  return { token: newToken(kind), issuedAt, expiresAt: new Date(issuedAt.getTime() + seconds * 1000) }
}

/** `count` entries one minute apart (one month: dense, its days dense too), half forms, half rss. */
const seedAudit = (serverId: string, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO audit_entries
        (bot_id, server_id, at, user_id, user_name, user_avatar, module_name, item_identifier, event_type, event_string)
      SELECT ${BOT}, ${serverId}, timestamptz '2024-03-01T00:00:00Z' + i * interval '1 minute', '42', 'ada', NULL,
        CASE WHEN i % 2 = 0 THEN 'forms' ELSE 'rss' END, i, 'PUSH', 'event ' || i
      FROM generate_series(1, ${count}) AS i`
  })

for (const kind of dbKinds) {
  const env = Layer.mergeAll(
    Forms.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(FormsRepoSql, AuditLogSql, TaskBoardFake, Layer.succeed(FormsSettings, { maxFormsPerServer: 50 })))
    ),
    TokenStoreCached(5_000).pipe(Layer.provide(TokenStoreSql))
  ).pipe(Layer.provideMerge(countedDb(kind)))

  layer(env, { excludeTestServices: true, timeout: 120_000 })(`Round trips on ${kind}`, (it) => {
    it.effect("a form create, update and delete, each with its audit entry", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const a = access("810000000000000101")
        const steps = [{ type: "message" as const, string: "Why?" }, { type: "message" as const, string: "When?" }]
        const create = yield* counted(forms.create(a, input({ title: "Round trips", steps })))
        yield* expectTrips("create", create, 1)
        const id = create.value.workflow_id!
        assert.deepStrictEqual(create.value.steps.map((s) => s.string), ["Why?", "When?"])
        const get = yield* counted(forms.get(a, id))
        yield* expectTrips("get (audited)", get, 1)
        const update = yield* counted(forms.update(a, id, input({ title: "Round trips 2", steps: [steps[1]!] })))
        yield* expectTrips("update", update, 1)
        assert.deepStrictEqual(update.value.steps.map((s) => s.string), ["When?"])
        const remove = yield* counted(forms.remove(a, id))
        yield* expectTrips("delete", remove, 1)
        const repo = yield* FormsRepo
        assert.isTrue(Option.isNone(yield* repo.find({ botId: BOT, serverId: a.serverId }, id)))
        // Each request left its audit entry.
        const sql = yield* SqlClient.SqlClient
        const events = yield* sql<{ event_type: string }>`SELECT event_type FROM audit_entries WHERE server_id = ${a.serverId} ORDER BY id`
        assert.deepStrictEqual(events.map((e) => e.event_type), ["PUSH", "GET", "PATCH", "DELETE"])
      }))

    it.effect("audit pages", () =>
      Effect.gen(function*() {
        const audit = yield* AuditLog
        const serverId = "810000000000000102"
        yield* seedAudit(serverId, 3000)
        const scope = { botId: BOT, serverId }
        // 3,000 entries one minute apart from 2024-03-01T00:01Z: a dense month, dense days, so a
        // middle page walks month → day → hour. Item i is entry i; odd items are rss, even forms.
        const newest = 3000
        for (
          const [name, query, first, pageMax] of [
            ["first page", { page: "1", page_size: "50" }, newest, 60],
            ["middle page", { page: "25", page_size: "50" }, newest - 24 * 50, 60],
            ["last page", { page: "60", page_size: "50" }, 50, 60],
            ["module page", { page: "12", page_size: "50", module: "rss" }, newest - 1 - 11 * 100, 30],
            // 2024-03-01T11:00Z to 2024-03-02T23:00Z (inclusive): items 660..2820, cut inside two days.
            ["time-filtered page", { page: "3", page_size: "50", start: "1709290800000", end: "1709420400000" }, 2820 - 100, 44],
            ["page past the end", { page: "61", page_size: "50" }, undefined, 60]
          ] as const
        ) {
          const page = yield* counted(audit.query(scope, query as never))
          yield* expectTrips(`audit ${name}`, page, 1)
          assert.strictEqual(page.value.page_max, pageMax, name)
          assert.strictEqual(page.value.logs[0]?.item_identifier, first, name)
          assert.strictEqual(page.value.logs.length, first === undefined ? 0 : 50, name)
        }
      }))

    it.effect("a token resolution and a token check on a cold cache", () =>
      Effect.gen(function*() {
        const store = yield* TokenStore
        const familyId = randomUUID()
        yield* store.createFamily({ familyId, user, platform, temporary: token("temporary", 60), codeChallenge: undefined })
        const pair = { access: token("access"), refresh: token("refresh") }
        yield* store.issuePair(familyId, pair)
        const resolved = yield* counted(store.resolveAccess(pair.access.token))
        yield* expectTrips("resolveAccess (cold)", resolved, 1)
        assert.strictEqual(resolved.value?.familyId, familyId)
        const warm = yield* counted(store.resolveAccess(pair.access.token))
        yield* expectTrips("resolveAccess (warm)", warm, 0)
        assert.strictEqual(warm.value?.familyId, familyId)

        // POST /auth/idp/token/check with a token this instance has not seen: the /auth rate limit's
        // key (familyOf), then the handler's checkAccess.
        const other = { access: token("access"), refresh: token("refresh") }
        yield* store.issuePair(familyId, other)
        const check = yield* counted(Effect.all([store.familyOf(other.access.token), store.checkAccess(other.access.token)]))
        yield* expectTrips("token check (cold)", check, 1)
        assert.strictEqual(check.value[0], familyId)
        assert.strictEqual(check.value[1]?.familyId, familyId)
        assert.isFalse(check.value[1]?.expired)
        // An unknown access token: nothing found, nothing kept (two reads, as before).
        const unknown = newToken("access")
        const none = yield* counted(Effect.all([store.familyOf(unknown), store.checkAccess(unknown)]))
        yield* expectTrips("token check (unknown token)", none, 2)
        assert.deepStrictEqual(none.value, [undefined, undefined])
        // A refresh token's family (the /token/refresh key): one read.
        const refresh = yield* counted(store.familyOf(other.refresh.token))
        yield* expectTrips("familyOf (refresh token)", refresh, 1)
        assert.strictEqual(refresh.value, familyId)
      }))
  })
}
