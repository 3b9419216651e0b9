/**
 * Ended tokens end on every instance at once (decisions.md "Sign-in and tokens"): two gateway
 * instances A and B, each with its own pool, token cache and LISTEN connection, on one PostgreSQL
 * schema. A token used on B (so B keeps it for 5 s) and then revoked, rotated or family-revoked on A
 * answers 401 on B within milliseconds (PostgreSQL NOTIFY, layers/auth/TokenStoreListener.ts), not
 * after B's 5 s: asserted as a 401 on B answered before B's copy could have ended on its own (seconds
 * of slack for a loaded machine, none for a B that only forgets with its TTL). Fail-safe: with B's
 * LISTEN connection terminated, B never answers from its cache, and it listens (and caches) again
 * afterwards. PostgreSQL only (TEST_DATABASE_URL): the embedded database serves one instance.
 */
import { assert, describe, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted, References } from "effect"
import { Reactivity } from "effect/reactivity"
import { randomBytes } from "node:crypto"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import type { Capabilities } from "../../src/layers/App.ts"
import { MigrationsLayer } from "../../src/layers/migrations/Migrations.ts"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import type { Keyring } from "../../src/services/infra/Cipher.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"
import { freePort, signIn, TestApp, testAppConfig } from "../utils/TestApp.ts"
import type { Tokens } from "../utils/TestApp.ts"

const DATABASE_URL = process.env.TEST_DATABASE_URL
const METRICS = "revocations-metrics"
/** How long B keeps a token it has read (layers/App.ts: `TokenStoreCached(5_000, …)`). */
const CACHE_MS = 5_000
/** Allowance for the clock (the test and B read the same one, Date.now, in one process) and its granularity. */
const MARGIN_MS = 300

interface Instance {
  readonly app: TestApp["Service"]
  /** application_name of its LISTEN connection in pg_stat_activity. */
  readonly listener: string
}

class Instances extends Context.Service<Instances, {
  readonly a: Instance
  readonly b: Instance
  readonly admin: PgClient.PgClient
  readonly schema: string
  /** What B logged (at Info and above). */
  readonly logsB: CapturedLogs["Service"]
}>()("test/TokenRevocationInstances") {}

const hex = () => randomBytes(5).toString("hex")

/** A gateway (ROLE=api) with its own pool on `schema`, as a second process would be. */
const instance = (tag: string, url: string, schema: string, pgboss: string, keyring: Keyring, logs?: Context.Context<CapturedLogs>) =>
  Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    const applicationName = `tokens-${tag}-${hex()}`
    // databaseUrl set: a shared PostgreSQL (the pool itself is the one built here, on the test's schema).
    const config = testAppConfig(port, { role: "api", databaseUrl: Redacted.make(url), metricsToken: Redacted.make(METRICS) })
    const db = MigrationsLayer.pipe(
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")),
      Layer.provideMerge(PgClient.layer({
        url: Redacted.make(url),
        maxConnections: 4,
        startupOptions: `-c search_path=${schema}`,
        applicationName
      }))
    )
    const capabilities = liveCapabilities(config, SandboxMode.of(config), keyring, db, { schema: pgboss, pollingInterval: "0.5 seconds" })
    const app = makeApp(config, SandboxMode.of(config), capabilities as Layer.Layer<Capabilities, unknown>).pipe(
      Layer.merge(Layer.succeed(TestApp, TestApp.of({ url: config.publicUrl, config }))),
      Layer.provide(logs === undefined ? Layer.empty : Layer.succeedContext(logs)),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, logs === undefined ? "Warn" : "Info")),
      Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth()))
    )
    const built = yield* Layer.build(app)
    return { app: Context.get(built, TestApp), listener: `${applicationName}-listen` } satisfies Instance
  })

const TwoInstances = Layer.effect(Instances, Effect.gen(function*() {
  const url = DATABASE_URL!
  const schema = `t_${hex()}`
  const pgboss = `pgboss_${hex()}`
  const admin = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 2 })
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  // Added first, so run last: after both instances have stopped.
  yield* Effect.addFinalizer(() =>
    admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).pipe(
      Effect.andThen(admin.unsafe(`DROP SCHEMA IF EXISTS ${pgboss} CASCADE`)),
      Effect.ignore
    )
  )
  const keyring = parseKeyring(generateKey())
  const logs = yield* Layer.build(CapturedLogs.layer)
  const a = yield* instance("a", url, schema, pgboss, keyring)
  const b = yield* instance("b", url, schema, pgboss, keyring, logs)
  return Instances.of({ a, b, admin, schema, logsB: Context.get(logs, CapturedLogs) })
})).pipe(Layer.provide(Reactivity.layer))

const UA = { "user-agent": "token-revocation-instances" }

/** A request to an instance; its status. */
const status = (on: Instance, path: string, init: { readonly method?: string; readonly headers?: Record<string, string> } = {}) =>
  Effect.promise(async () => {
    const res = await fetch(on.app.url + path, { method: init.method ?? "GET", headers: { ...UA, ...init.headers } })
    await res.arrayBuffer()
    return res.status
  })

/** The two reads that keep an access token in the cache: the principal (/api) and the check (/auth). */
const use = (on: Instance, access: string) =>
  Effect.all([
    status(on, "/api/v1/bots", { headers: { authorization: `Bearer ${access}` } }),
    status(on, "/auth/idp/token/check", { method: "POST", headers: { authorization: access } })
  ])

const signInOnA = Effect.flatMap(Instances, ({ a }) => signIn(ALICE_ID).pipe(Effect.provideService(TestApp, a.app)))

const post = (on: Instance, path: string, headers: Record<string, string>) =>
  Effect.promise(async () => {
    const res = await fetch(on.app.url + path, { method: "POST", headers: { ...UA, ...headers } })
    return { status: res.status, body: (await res.json()) as unknown }
  })

/** Token-cache hits of the process (A and B share the registry: read around B's requests only). */
const accessHits = (on: Instance) =>
  Effect.promise(async () => {
    const text = await (await fetch(`${on.app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}`, ...UA } })).text()
    const line = text.split("\n").find((l) => l.startsWith("cache_lookups_total{") && l.includes(`cache="tokens.access"`) && l.includes(`result="hit"`))
    return line === undefined ? 0 : Number(line.split(" ").at(-1))
  })

/**
 * Uses `access` on B until both reads come from B's cache (a hit), so that B holds it. Returns when
 * the use before the one that hit started: the copy that hit was read by one of those two uses, no
 * earlier, so it lasts until that time + CACHE_MS at least (unless something drops it), however long
 * B took to start caching.
 */
const cachedOnB = (access: string) =>
  Effect.gen(function*() {
    const { b } = yield* Instances
    let previous = Date.now()
    assert.deepStrictEqual(yield* use(b, access), [200, 200], "the token works on B")
    const deadline = Date.now() + 5_000
    for (;;) {
      const before = yield* accessHits(b)
      const started = Date.now()
      assert.deepStrictEqual(yield* use(b, access), [200, 200])
      if ((yield* accessHits(b)) > before) return previous
      previous = started
      // B is not caching yet (it caches once it listens): try again.
      if (Date.now() > deadline) assert.fail("B never answered from its cache")
      yield* Effect.sleep("50 millis")
    }
  })

/**
 * Waits until both reads of `access` on B answer 401, and fails unless they did so before B's copies
 * could have ended on their own: B was told (a notification), it did not just forget. `cachedSince`:
 * what `cachedOnB` returned (B's copies last until then + CACHE_MS at least). A 401 counts only if
 * its answer arrived (so B read its clock) before then + CACHE_MS - MARGIN_MS.
 */
const flipsOnB = (access: string, cachedSince: number, what: string) =>
  Effect.gen(function*() {
    const { b } = yield* Instances
    const deadline = cachedSince + CACHE_MS - MARGIN_MS
    let last: ReadonlyArray<number> = []
    for (;;) {
      last = yield* use(b, access)
      const answered = Date.now()
      if (answered > deadline) break
      if (last.every((s) => s === 401)) return
      yield* Effect.sleep("20 millis")
    }
    return assert.fail(
      `${what}: B still answers ${JSON.stringify(last)} ${CACHE_MS - MARGIN_MS} ms after it first read the token (it was not told: its cache keeps a token ${CACHE_MS} ms)`
    )
  })

/** The backends LISTENing for B (its LISTEN connection). */
const listenersOfB = Effect.gen(function*() {
  const { admin, b } = yield* Instances
  return yield* admin<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${b.listener}`
})

describe.skipIf(DATABASE_URL === undefined)("an ended token on two instances (PostgreSQL)", () =>
  layer(TwoInstances, { excludeTestServices: true, timeout: 120_000 })("instances A and B on one schema", (it) => {
    it.effect("each instance has one LISTEN connection, named after its pool", () =>
      Effect.gen(function*() {
        const { a, admin, b } = yield* Instances
        for (const on of [a, b]) {
          const rows = yield* admin<{ query: string }>`SELECT query FROM pg_stat_activity WHERE application_name = ${on.listener}`
          assert.strictEqual(rows.length, 1, on.listener)
          assert.match(rows[0]!.query, /^LISTEN /)
        }
      }))

    it.effect("revoked on A: B answers 401 at once (told, long before its 5 s cache would let go)", () =>
      Effect.gen(function*() {
        const { a } = yield* Instances
        const tokens = yield* signInOnA
        const cached = yield* cachedOnB(tokens.access_token)
        const revoked = yield* post(a, "/auth/idp/token/revoke", { authorization: tokens.access_token })
        assert.deepStrictEqual(revoked, { status: 200, body: { success: true } })
        yield* flipsOnB(tokens.access_token, cached, "revoke")
      }))

    it.effect("refreshed on A: the previous access token dies on B at once (told); the new one works there", () =>
      Effect.gen(function*() {
        const { a, b } = yield* Instances
        const tokens = yield* signInOnA
        const cached = yield* cachedOnB(tokens.access_token)
        const refreshed = yield* post(a, "/auth/idp/token/refresh", { "x-refresh-token": tokens.refresh_token })
        assert.strictEqual(refreshed.status, 200)
        yield* flipsOnB(tokens.access_token, cached, "rotation")
        assert.deepStrictEqual(yield* use(b, (refreshed.body as Tokens).access_token), [200, 200])
      }))

    it.effect("a rotated refresh token presented again on A: the family's live access token dies on B at once (told)", () =>
      Effect.gen(function*() {
        const { a, admin, schema } = yield* Instances
        const tokens = yield* signInOnA
        const refreshed = yield* post(a, "/auth/idp/token/refresh", { "x-refresh-token": tokens.refresh_token })
        assert.strictEqual(refreshed.status, 200)
        const next = refreshed.body as Tokens
        const cached = yield* cachedOnB(next.access_token)
        // Past the 10 s race grace without waiting for it: the rotation happened 11 s ago.
        yield* admin.unsafe(
          `UPDATE ${schema}.tokens SET used_at = used_at - interval '11 seconds' WHERE kind = 'refresh' AND used_at IS NOT NULL
             AND family_id = (SELECT family_id FROM ${schema}.tokens WHERE kind = 'refresh' AND used_at IS NULL
               AND token_sha256 = encode(sha256(convert_to($1, 'UTF8')), 'hex'))`,
          [next.refresh_token]
        )
        const reused = yield* post(a, "/auth/idp/token/refresh", { "x-refresh-token": tokens.refresh_token })
        assert.strictEqual(reused.status, 401)
        yield* flipsOnB(next.access_token, cached, "family revocation on reuse")
      }))

    it.effect("B's LISTEN connection terminated: B answers 401 at once for a token revoked on A, then listens and caches again", () =>
      Effect.gen(function*() {
        const { a, admin, logsB } = yield* Instances
        const first = yield* signInOnA
        yield* cachedOnB(first.access_token)
        const before = yield* listenersOfB
        assert.strictEqual(before.length, 1)
        yield* logsB.take
        const pid = before[0]!.pid
        assert.isTrue((yield* admin<{ ok: boolean }>`SELECT pg_terminate_backend(${pid}) AS ok`)[0]!.ok)
        // pg_terminate_backend only signals: wait for the backend to be gone (it has told B by then).
        const gone = Date.now() + 5_000
        while ((yield* admin`SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}`).length > 0) {
          if (Date.now() > gone) assert.fail("the LISTEN backend is still there")
          yield* Effect.sleep("5 millis")
        }
        // Revoked while B has no LISTEN connection (it tries again after 100-300 ms): no answer from its cache.
        const revoked = yield* post(a, "/auth/idp/token/revoke", { authorization: first.access_token })
        assert.strictEqual(revoked.status, 200)
        const { b } = yield* Instances
        assert.deepStrictEqual(yield* use(b, first.access_token), [401, 401], "the first request after the revoke")

        // B listens again (a new backend) ...
        const deadline = Date.now() + 10_000
        let after: ReadonlyArray<{ pid: number }> = []
        while (Date.now() < deadline) {
          after = yield* listenersOfB
          if (after.length === 1 && after[0]!.pid !== before[0]!.pid) break
          yield* Effect.sleep("50 millis")
        }
        assert.strictEqual(after.length, 1, "B listens again")
        assert.notStrictEqual(after[0]!.pid, before[0]!.pid)
        // ... caches again, and hears the next revocation.
        const second = yield* signInOnA
        const cached = yield* cachedOnB(second.access_token)
        assert.strictEqual((yield* post(a, "/auth/idp/token/revoke", { authorization: second.access_token })).status, 200)
        yield* flipsOnB(second.access_token, cached, "revoke after B reconnected")

        // One line when listening was lost, one when it was back.
        const lines = (yield* logsB.lines).filter((l) => l.text.includes("token revocations"))
        assert.deepStrictEqual(lines.map((l) => l.level), ["Warn", "Info"], JSON.stringify(lines))
        assert.include(lines[0]!.text, "not listening")
        assert.include(lines[1]!.text, "listening again")
      }))
  }))
