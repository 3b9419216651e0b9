/**
 * Each metric family of issue 13 item 7 produced as an operator would meet it and read back from a
 * scrape of GET /metrics, parsed: the chat platform's 429 (a sandbox fault), a source's and the task
 * board's calls, cache hits of a read made twice, a refusal of the gateway's own /api limit, the
 * job engine's queues and the database's connections. One in-process gateway on PGlite with the
 * sandbox mounted; values are read as differences between two scrapes (the registry is per process).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Deferred, Effect, Layer, Redacted, References, Schema } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { DatabaseMetrics } from "../../src/layers/infra/DatabaseMetrics.ts"
import { ALICE_ID, BOB_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { JobEngine, JobQueue } from "../../src/services/jobs/JobEngine.ts"
import { runSamplers } from "../../src/services/infra/Metrics.ts"
import { dbKinds, testDb } from "../utils/Db.ts"
import { freePort, json, raw, TestApp, testAppConfig, tokenOf } from "../utils/TestApp.ts"

const METRICS_TOKEN = "scrape-families"

/** The gateway with /metrics on, its job engine refreshing queue counts every second. */
const App = Layer.unwrap(Effect.gen(function*() {
  const port = yield* Effect.promise(freePort)
  const config = testAppConfig(port, { metricsToken: Redacted.make(METRICS_TOKEN), rateLimitApiPerMinute: 30 })
  const capabilities = liveCapabilities(config, SandboxMode.of(config), parseKeyring(generateKey()), testDb("pglite"), {
    pollingInterval: "0.5 seconds",
    superviseInterval: "1 second"
  })
  return makeApp(config, SandboxMode.of(config), capabilities).pipe(
    Layer.merge(Layer.succeed(TestApp, TestApp.of({ url: config.publicUrl, config }))),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
  )
}))

type Labels = Readonly<Record<string, string>>
interface Sample { readonly name: string; readonly labels: Labels; readonly value: number }

/** The samples of a scrape in the text exposition format. */
const parse = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((line) => {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) throw new Error(`not a sample: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:\\.|[^"\\])*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, "$1")
    return { name: m[1]!, labels, value: Number(m[3]) }
  })

const scrape = Effect.gen(function*() {
  const res = yield* raw({ headers: { authorization: `Bearer ${METRICS_TOKEN}` } }, "/metrics")
  assert.strictEqual(res.status, 200)
  return parse(yield* Effect.promise(() => res.text()))
})

/** The sum of the series of `name` that carry every label of `labels` (0 when none does). */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Labels) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0)

/** How much a series grew while `effect` ran. */
const growth = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, labels: Labels) =>
  Effect.gen(function*() {
    const before = valueOf(yield* scrape, name, labels)
    const result = yield* effect
    return { result, delta: valueOf(yield* scrape, name, labels) - before }
  })

const get = (path: string, userId = ALICE_ID) =>
  Effect.gen(function*() {
    const res = yield* raw({ token: yield* tokenOf(userId) }, path)
    return { status: res.status, body: yield* json(res) }
  })

const fault = (body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const res = yield* raw({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }, "/sandbox/faults")
    assert.strictEqual(res.status, 200)
  })

const modules = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules`

layer(App, { excludeTestServices: true, timeout: 60_000 })("metric families on GET /metrics", (it) => {
  describe("upstream calls", () => {
    it.effect("a 429 of the chat platform is counted by platform and route template", () =>
      Effect.gen(function*() {
        yield* tokenOf(ALICE_ID)
        yield* fault({ route: "GET /users/@me/guilds", count: 1, kind: "429", retry_after: 0.1 })
        const labels = { platform: "discord", route: "GET /users/@me/guilds" }
        const before = yield* scrape
        // A bot's servers read the bot's and the user's guilds: the first answer is the 429, waited out and retried.
        const { status } = yield* get(`/api/v1/bots/${BOT1_ID}/servers`)
        assert.strictEqual(status, 200)
        const after = yield* scrape
        assert.strictEqual(valueOf(after, "upstream_rate_limited_total", labels) - valueOf(before, "upstream_rate_limited_total", labels), 1)
        assert.strictEqual(valueOf(after, "upstream_requests_total", { ...labels, status: "429" }) - valueOf(before, "upstream_requests_total", { ...labels, status: "429" }), 1)
        assert.isAtLeast(valueOf(after, "upstream_requests_total", { ...labels, status: "200" }) - valueOf(before, "upstream_requests_total", { ...labels, status: "200" }), 1)
        for (const s of after.filter((s) => s.name === "upstream_requests_total" && s.labels.platform === "discord")) {
          assert.notMatch(s.labels.route!, /[0-9]{5,}/, `a raw id in a label: ${s.labels.route}`)
        }
      }))

    it.effect("a source's calls and 429s: the streaming lookup (Twitch) under its route template", () =>
      Effect.gen(function*() {
        const route = { platform: "twitch", route: "GET /sandbox/streaming/helix/users" }
        const ok = yield* growth(get(`${modules}/streaming/getUserId/sandboxstreamer`), "upstream_requests_total", { ...route, status: "200" })
        assert.strictEqual(ok.result.status, 200)
        assert.strictEqual(ok.delta, 1)
        yield* fault({ route: "GET /sandbox/streaming/helix/users", count: 1, kind: "429", retry_after: 1 })
        const limited = yield* growth(get(`${modules}/streaming/getUserId/pixelpainter`), "upstream_rate_limited_total", route)
        assert.strictEqual(limited.result.status, 503)
        assert.strictEqual(limited.delta, 1)
        const text = JSON.stringify(yield* scrape)
        assert.notInclude(text, "sandboxstreamer", "never the looked-up name")
        assert.notInclude(text, "pixelpainter", "never the looked-up name")
      }))
  })

  describe("cache lookups", () => {
    it.effect("the task board's boards read twice: one upstream call, one hit", () =>
      Effect.gen(function*() {
        const before = yield* scrape
        const first = yield* get(`${modules}/forms/taskboardBoards`)
        const second = yield* get(`${modules}/forms/taskboardBoards`)
        assert.strictEqual(first.status, 200)
        assert.deepStrictEqual(second.body, first.body)
        const after = yield* scrape
        const delta = (name: string, labels: Labels) => valueOf(after, name, labels) - valueOf(before, name, labels)
        assert.strictEqual(delta("cache_lookups_total", { cache: "taskboard.boards", result: "miss" }), 1)
        assert.strictEqual(delta("cache_lookups_total", { cache: "taskboard.boards", result: "hit" }), 1)
        assert.strictEqual(delta("upstream_requests_total", { platform: "trello", route: "GET /sandbox/taskboard/1/organizations/:name/boards" }), 1)
      }))

    it.effect("the chat platform's and the token cache's hits", () =>
      Effect.gen(function*() {
        yield* get("/api/v1/user")
        const firstAt = Date.now()
        const before = yield* scrape
        const secondAt = Date.now()
        assert.strictEqual((yield* get("/api/v1/user")).status, 200)
        const after = yield* scrape
        const delta = (name: string, labels: Labels) => valueOf(after, name, labels) - valueOf(before, name, labels)
        // GET /users/@me is kept 10 s: the second read is served from the cache, not the platform.
        assert.isAtLeast(delta("cache_lookups_total", { cache: "discord.user", result: "hit" }), 1)
        assert.strictEqual(delta("cache_lookups_total", { cache: "discord.user", result: "miss" }), 0)
        assert.strictEqual(delta("upstream_requests_total", { platform: "discord", route: "GET /users/@me" }), 0)
        // The access token was resolved moments ago: a hit of the token cache, which keeps it 5 s. (On
        // a loaded machine the scrape between the two reads once took longer: then one miss, no hit.)
        const kept = secondAt - firstAt < 4_500
        assert.strictEqual(delta("cache_lookups_total", { cache: "tokens.access", result: "hit" }), kept ? 1 : 0)
        assert.strictEqual(delta("cache_lookups_total", { cache: "tokens.access", result: "miss" }), kept ? 0 : 1)
      }))
  })

  it.effect("a refusal of the gateway's own /api limit", () =>
    Effect.gen(function*() {
      const { delta, result } = yield* growth(
        Effect.gen(function*() {
          const statuses: Array<number> = []
          for (let i = 0; i < 31; i++) statuses.push((yield* get("/api/v1/user", BOB_ID)).status)
          return statuses
        }),
        "rate_limit_rejections_total",
        { limit: "api" }
      )
      assert.deepStrictEqual(result.filter((s) => s === 429).length, 1, JSON.stringify(result))
      assert.strictEqual(delta, 1)
    }))

  it.effect("the job engine's queues: a job queued, a job failed", () =>
    Effect.gen(function*() {
      const engine = yield* JobEngine
      const waiting = JobQueue("metrics-waiting", Schema.Struct({ n: Schema.Number }))
      const failing = JobQueue("metrics-failing", Schema.Struct({ n: Schema.Number }), { retryLimit: 0 })
      yield* engine.send(waiting, { n: 1 })
      yield* engine.send(waiting, { n: 2 })
      yield* engine.work(failing, () => Effect.fail("refused on purpose"), { pollingInterval: "0.5 seconds" })
      yield* engine.send(failing, { n: 1 })
      // pg-boss's monitor refreshes the counts every supervise interval (1 s here).
      let samples = yield* scrape
      for (let i = 0; i < 40; i++) {
        const queued = valueOf(samples, "job_queue_jobs", { queue: "metrics-waiting", state: "queued" })
        const failed = valueOf(samples, "job_queue_jobs", { queue: "metrics-failing", state: "failed" })
        if (queued === 2 && failed === 1) break
        yield* Effect.sleep("250 millis")
        samples = yield* scrape
      }
      assert.strictEqual(valueOf(samples, "job_queue_jobs", { queue: "metrics-waiting", state: "queued" }), 2)
      assert.strictEqual(valueOf(samples, "job_queue_jobs", { queue: "metrics-waiting", state: "active" }), 0)
      assert.strictEqual(valueOf(samples, "job_queue_jobs", { queue: "metrics-failing", state: "failed" }), 1)
    }).pipe(Effect.scoped))

  it.effect("the database's connections by state", () =>
    Effect.gen(function*() {
      const samples = (yield* scrape).filter((s) => s.name === "db_connections")
      assert.sameMembers(samples.map((s) => s.labels.state), ["active", "idle", "idle_in_transaction"])
      // The scrape's own query is running (PGlite: the one connection).
      assert.isAtLeast(valueOf(samples, "db_connections", { state: "active" }), 1)
    }))
})

// On PostgreSQL (TEST_DATABASE_URL): a transaction held open shows, as a leaking handler's would.
for (const kind of dbKinds.filter((k) => k === "postgres")) {
  layer(DatabaseMetrics.pipe(Layer.provideMerge(testDb(kind))), { excludeTestServices: true, timeout: 30_000 })("db_connections on PostgreSQL", (it) => {
    it.effect("a transaction held open between statements is idle_in_transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        yield* sql.withTransaction(sql`SELECT 1`.pipe(
          Effect.andThen(Deferred.succeed(held, undefined)),
          Effect.andThen(Deferred.await(release))
        )).pipe(Effect.forkChild)
        yield* Deferred.await(held)
        yield* runSamplers
        const samples = parse(yield* PrometheusMetrics.format())
        yield* Deferred.succeed(release, undefined)
        assert.isAtLeast(valueOf(samples, "db_connections", { state: "idle_in_transaction" }), 1)
        assert.isAtLeast(valueOf(samples, "db_connections", { state: "active" }), 1)
      }))
  })
}
