/**
 * The cached forms list (issue #16): each instance keeps a scope's last list with the scope's data
 * version (migration 0011) and serves it again only after reading, in the request's own statement,
 * that the version is unchanged. Two gateway apps (ROLE=api) on one database: a write on one is
 * seen by the next read on the other, whatever the write changed. A read that arrives while another
 * read of the scope is in flight waits for the next one (never shares an answer read before it came).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, References, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { FormsResponse } from "../../src/domain/forms/Form.ts"
import type { FormSummary } from "../../src/domain/forms/Form.ts"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import type { Capabilities } from "../../src/layers/App.ts"
import { ALICE_ID, BOT1_ID, channelId, S1_ID } from "../../src/sandbox/Seed.ts"
import { generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { Forms, FormsSettings } from "../../src/services/forms/Forms.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import type { ListSince } from "../../src/services/forms/FormsRepo.ts"
import { makeFormsRepoMemory } from "../layers/FormsRepoMemory.ts"
import { AuditLogMemory } from "../layers/AuditLogMemory.ts"
import { access, input, SERVER, TaskBoardFake } from "./FormFixtures.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import type { DbKind } from "../utils/Db.ts"
import { freePort, TestApp, testAppConfig, tokenOf, UA } from "../utils/TestApp.ts"

const formsPath = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules/forms`

/** Two API instances on one migrated database (the same key, as a deployment's instances share it). */
const twoApps = (kind: DbKind) =>
  Effect.gen(function*() {
    const db = Layer.succeedContext(yield* Layer.build(testDb(kind)))
    const keyring = parseKeyring(generateKey())
    const schema = `pgboss_${randomBytes(5).toString("hex")}`
    if (kind === "postgres") {
      const sql = yield* Effect.provide(Effect.service(SqlClient.SqlClient), db)
      yield* Effect.addFinalizer(() => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(Effect.ignore))
    }
    const app = Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const config = testAppConfig(port, { role: "api" })
      const capabilities = liveCapabilities(config, SandboxMode.of(config), keyring, db, kind === "postgres" ? { schema } : {})
      yield* Layer.build(makeApp(config, SandboxMode.of(config), capabilities as Layer.Layer<Capabilities, unknown>).pipe(
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
        Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth()))
      ))
      return TestApp.of({ url: config.publicUrl, config })
    })
    return [yield* app, yield* app] as const
  })

/** A request to `app` as Alice (signed in on that app); the answer's text and content type. */
const call = (app: TestApp["Service"], method: string, path: string, body?: unknown) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(ALICE_ID)
    const res = yield* Effect.promise(() =>
      fetch(app.url + path, {
        method,
        headers: {
          "user-agent": UA,
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = yield* Effect.promise(() => res.text())
    assert.strictEqual(res.status, 200, `${method} ${path}: ${text}`)
    return { text, type: res.headers.get("content-type"), length: res.headers.get("content-length") }
  }).pipe(Effect.provideService(TestApp, app))

const list = (app: TestApp["Service"]) => Effect.map(call(app, "GET", formsPath), (r) => JSON.parse(r.text).forms as Array<FormSummary>)

for (const kind of dbKinds) {
  describe(`the forms list across two instances on ${kind}`, () => {
    it.live("a write on one instance is in the next read on the other; a repeated read answers the same bytes", () =>
      Effect.gen(function*() {
        const [a, b] = yield* twoApps(kind)
        // B has read (and kept) the list before each write on A.
        assert.deepStrictEqual(yield* list(b), [])
        const created = JSON.parse((yield* call(a, "POST", formsPath, { title: "First", color_hex: "#ABCDEF" })).text)
        const id = created.workflow_id as number
        const first = yield* call(b, "GET", formsPath)
        const expected = [{ workflow_id: id, taskboard_integration: false, workflow_live: false, title: "First", color_hex: "#abcdef" }]
        // The exact text the framework writes for the endpoint (FormsResponse's field order), twice.
        assert.strictEqual(first.text, JSON.stringify(Schema.encodeSync(FormsResponse)({ forms: expected })))
        assert.strictEqual(first.type, "application/json")
        const again = yield* call(b, "GET", formsPath)
        assert.deepStrictEqual(again, first)

        const full = { title: "First", color_hex: "#abcdef", channel_id: channelId(1, 2) }
        yield* call(a, "PATCH", `${formsPath}/${id}`, { ...full, title: "Renamed" })
        assert.strictEqual((yield* list(b))[0]!.title, "Renamed")
        yield* call(a, "PATCH", `${formsPath}/${id}`, { ...full, title: "Renamed", workflow_live: true })
        assert.isTrue((yield* list(b))[0]!.workflow_live)
        yield* call(a, "PATCH", `${formsPath}/${id}`, { ...full, title: "Renamed", workflow_live: true, color_hex: "#000000" })
        assert.strictEqual((yield* list(b))[0]!.color_hex, "#000000")
        // A PATCH of the steps alone leaves the list (and its version) as it was: still correct.
        yield* call(a, "PATCH", `${formsPath}/${id}`, { ...full, title: "Renamed", workflow_live: true, color_hex: "#000000", steps: [{ type: "message", string: "Q" }] })
        assert.deepStrictEqual((yield* list(b)).map((f) => [f.title, f.workflow_live, f.color_hex]), [["Renamed", true, "#000000"]])

        // Concurrent reads on B right after a write on A: every one of them sees it.
        const second = JSON.parse((yield* call(a, "POST", formsPath, { title: "Second" })).text).workflow_id as number
        const reads = yield* Effect.all(Array.from({ length: 20 }, () => list(b)), { concurrency: "unbounded" })
        for (const r of reads) assert.deepStrictEqual(r.map((f) => f.workflow_id), [id, second])
        yield* call(a, "DELETE", `${formsPath}/${id}`)
        assert.deepStrictEqual((yield* list(b)).map((f) => f.workflow_id), [second])
        // And the other way round.
        yield* call(b, "DELETE", `${formsPath}/${second}`)
        assert.deepStrictEqual(yield* list(a), [])
      }).pipe(Effect.scoped), 120_000)
  })
}

/**
 * A storage whose list reads wait at a gate: each read answers the forms as they were when it
 * started (a statement's snapshot), with the data version of that moment.
 */
const gatedRepo = Effect.gen(function*() {
  const inner = yield* makeFormsRepoMemory
  let version = 0
  const reads: Array<Deferred.Deferred<void>> = []
  const listSince = (scope: { botId: string; serverId: string }, known: string | undefined) =>
    Effect.gen(function*() {
      const at = String(version)
      const forms = yield* inner.list(scope)
      const gate = yield* Deferred.make<void>()
      reads.push(gate)
      yield* Deferred.await(gate)
      return (at === known ? { version: at, forms: undefined } : { version: at, forms }) satisfies ListSince
    })
  const repo = FormsRepo.of({
    ...inner,
    listSince,
    create: (scope, data, limit, audit) => Effect.tap(inner.create(scope, data, limit, audit), () => Effect.sync(() => version++))
  })
  return { repo, reads }
})

/** Lets the fibers run until `n` reads have started (a bounded wait: fails rather than hangs). */
const readsReach = (reads: ReadonlyArray<unknown>, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000 && reads.length < n; i++) yield* Effect.yieldNow
    assert.strictEqual(reads.length, n, "reads started")
  })

describe("reads of one scope share the storage's answer, never one read before they came", () => {
  it.effect("a read that arrives while one is in flight gets the next read's answer, and so do its companions", () =>
    Effect.gen(function*() {
      const { repo, reads } = yield* gatedRepo
      const forms = yield* Effect.provide(
        Effect.service(Forms),
        Forms.layer.pipe(Layer.provide([Layer.succeed(FormsRepo, repo), AuditLogMemory, TaskBoardFake, FormsSettings.layerDefaults]))
      )
      const a = access(SERVER)
      const first = yield* Effect.forkChild(forms.list(a))
      yield* Effect.yieldNow
      assert.strictEqual(reads.length, 1)
      // A form is created after the first read started: the reads that come now must see it.
      yield* forms.create(a, input({ title: "Late" }))
      const late = yield* Effect.forkChild(Effect.all([forms.list(a), forms.list(a), forms.list(a)], { concurrency: "unbounded" }))
      yield* Effect.yieldNow
      assert.strictEqual(reads.length, 1, "they wait: no read of their own while one is in flight")
      yield* Deferred.succeed(reads[0]!, undefined)
      assert.deepStrictEqual((yield* Fiber.join(first)).forms, [])
      yield* readsReach(reads, 2)
      yield* Deferred.succeed(reads[1]!, undefined)
      const answers = yield* Fiber.join(late)
      for (const r of answers) assert.deepStrictEqual(r.forms.map((f) => f.title), ["Late"])
      assert.strictEqual(reads.length, 2, "one read for the three")
      // Unchanged since: the same object again (the handler's JSON is kept per object).
      const again = yield* Effect.forkChild(forms.list(a))
      yield* readsReach(reads, 3)
      yield* Deferred.succeed(reads[2]!, undefined)
      assert.strictEqual(yield* Fiber.join(again), answers[0])
    }))
})
