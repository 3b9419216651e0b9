/**
 * Idempotency keys across instances (issue #30): two gateways in-process, each its own pool and
 * services (each built on its own), on one PostgreSQL schema with one keyring, as a deployment
 * runs them. The same create sent to both, in turn and at once: one form, one audit entry, and
 * each answer the first one (or a 409 while it runs). PostgreSQL only (TEST_DATABASE_URL).
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, References } from "effect"
import type { SqlClient } from "effect/sql"
import { Reactivity } from "effect/reactivity"
import { randomBytes, randomUUID } from "node:crypto"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import type { Capabilities } from "../../src/layers/App.ts"
import { MigrationsLayer } from "../../src/layers/migrations/Migrations.ts"
import { generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import type { Keyring } from "../../src/services/infra/Cipher.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { freePort, TestApp, testAppConfig } from "../utils/TestApp.ts"
import { formsPath } from "./FormsHttpFixtures.ts"
import { countsOf, form, send } from "./IdempotencyFixtures.ts"

const url = process.env.TEST_DATABASE_URL

/** One gateway on `schema` (its own pool, migrated), serving on a free port. */
const gateway = (schema: string, pgboss: string, keyring: Keyring, role: "all" | "api") =>
  Layer.unwrap(Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    const config = testAppConfig(port, { role })
    const db = MigrationsLayer.pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(url!), maxConnections: 5, startupOptions: `-c search_path=${schema}` })),
      Layer.provide(Reactivity.layer)
    ) as Layer.Layer<SqlClient.SqlClient, unknown>
    const capabilities = liveCapabilities(config, SandboxMode.of(config), keyring, db, { schema: pgboss, pollingInterval: "0.5 seconds" })
    return makeApp(config, SandboxMode.of(config), capabilities as Layer.Layer<Capabilities, unknown>).pipe(
      Layer.merge(Layer.succeed(TestApp, TestApp.of({ url: config.publicUrl, config }))),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth()))
    )
  }))

/** Two gateways on one fresh schema, each built with its own layers (nothing shared in memory). */
const twoGateways = Effect.gen(function*() {
  const admin = yield* PgClient.make({ url: Redacted.make(url!), maxConnections: 1 })
  const schema = `t_${randomBytes(6).toString("hex")}`
  const pgboss = `pgboss_${randomBytes(5).toString("hex")}`
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  yield* Effect.addFinalizer(() =>
    Effect.ignore(Effect.andThen(admin.unsafe(`DROP SCHEMA ${schema} CASCADE`), admin.unsafe(`DROP SCHEMA IF EXISTS ${pgboss} CASCADE`))))
  const keyring = parseKeyring(generateKey())
  // One after the other: the first migrates the schema and creates the job engine's.
  const a = yield* Layer.build(gateway(schema, pgboss, keyring, "all"))
  const b = yield* Layer.build(gateway(schema, pgboss, keyring, "api"))
  return { a, b }
}).pipe(Effect.provide(Reactivity.layer))

describe.skipIf(url === undefined)("idempotency keys across two instances (postgres)", () => {
  it.live("one create sent to both instances, in turn and at once: one form, one audit entry", () =>
    Effect.scoped(Effect.gen(function*() {
      const { a, b } = yield* twoGateways
      const on = <A, E, R>(app: Context.Context<R>, effect: Effect.Effect<A, E, R>) => Effect.provideContext(effect, app)

      // In turn: sent to A, retried on B.
      const key = randomUUID()
      const title = `Two instances ${key}`
      const first = yield* on(a, send("POST", formsPath(), key, form(title)))
      assert.strictEqual(first.status, 200, first.text)
      const onB = yield* on(b, send("POST", formsPath(), key, form(title)))
      assert.strictEqual(onB.status, 200, onB.text)
      assert.strictEqual(onB.replayed, "true")
      assert.strictEqual(onB.text, first.text)
      assert.deepStrictEqual(yield* on(a, countsOf(title)), { forms: 1, audits: 1 })

      // At once: five to each.
      const key2 = randomUUID()
      const title2 = `Two instances at once ${key2}`
      const answers = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => on(i % 2 === 0 ? a : b, send("POST", formsPath(), key2, form(title2)))),
        { concurrency: "unbounded" }
      )
      for (const r of answers) assert.include([200, 409], r.status, r.text)
      const ok = answers.filter((r) => r.status === 200)
      assert.isAtLeast(ok.length, 1)
      assert.strictEqual(new Set(ok.map((r) => r.text)).size, 1)
      assert.deepStrictEqual(yield* on(b, countsOf(title2)), { forms: 1, audits: 1 })
    })), { timeout: 180_000 })
})
