import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import type { SchemaDocument } from "../../src/sandbox/DiscordSchemaCheck.ts"
import { checkSchema } from "../../src/sandbox/DiscordSchemaCheck.ts"
import { defaultSandboxConfig, SandboxConfig, SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT1_TOKEN, BOT2_TOKEN, S1_ID, S3_ID, SEED } from "../../src/sandbox/Seed.ts"
import { assertWindow429, call, field } from "./SandboxCallFixtures.ts"
import type { Answer } from "./SandboxCallFixtures.ts"

const doc = JSON.parse(
  readFileSync(new URL("../fixtures/discord/openapi-subset.json", import.meta.url), "utf8")
) as SchemaDocument
const assertShape = (schema: string, value: unknown) => assert.deepStrictEqual(checkSchema(doc, schema, value), [])


const bot1 = { authorization: `Bot ${BOT1_TOKEN}` }
const bot2 = { authorization: `Bot ${BOT2_TOKEN}` }
const api = (path: string, init?: RequestInit) => call(`/sandbox/discord/api/v10${path}`, init)

const postJson = (path: string, body: unknown, method = "POST") =>
  call(path, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
const fault = (body: unknown) =>
  Effect.gen(function*() {
    const answer = yield* postJson("/sandbox/faults", body)
    assert.strictEqual(answer.status, 200)
  })

// A window long enough that the four calls below land in it on a slow, loaded machine.
const ROLES_WINDOW_MS = 3000

const Small = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, {
    ...defaultSandboxConfig,
    buckets: { ...defaultSandboxConfig.buckets, "GET /guilds/{id}/roles": { limit: 3, windowMs: ROLES_WINDOW_MS } }
  }))
)

const SmallGlobal = SandboxServer.layer().pipe(
  Layer.provide(Layer.succeed(SandboxConfig, { ...defaultSandboxConfig, globalLimit: { limit: 20, windowMs: 5000 } }))
)

layer(Small, { excludeTestServices: true })("sandbox rate limits", (it) => {
  it.effect("a route bucket answers a real 429 with Discord's headers, per major parameter", () =>
    Effect.gen(function*() {
      const answers: Array<Answer> = []
      // Clock reads around the first call (which opens the window) and the last (the 429).
      const reads: Array<readonly [number, number]> = []
      for (let i = 0; i < 4; i++) {
        const before = Date.now()
        answers.push(yield* api(`/guilds/${S1_ID}/roles`, { headers: bot1 }))
        reads.push([before, Date.now()])
      }
      assert.deepStrictEqual(answers.map((a) => a.status), [200, 200, 200, 429])
      assert.deepStrictEqual(answers.map((a) => a.headers.get("x-ratelimit-remaining")), ["2", "1", "0", "0"])
      for (const a of answers) assert.strictEqual(a.headers.get("x-ratelimit-limit"), "3")
      const limited = answers[3]!
      assertShape("RatelimitedResponse", limited.body)
      const { retryAfter } = assertWindow429(limited, reads, 3, ROLES_WINDOW_MS)
      assert.strictEqual(limited.headers.get("x-ratelimit-scope"), "user")
      assert.isNull(limited.headers.get("x-ratelimit-global"))

      // Same bucket hash, another major parameter: its own count. Another token: its own count.
      const otherGuild = yield* api(`/guilds/${S3_ID}/roles`, { headers: bot1 })
      assert.strictEqual(otherGuild.status, 200)
      assert.strictEqual(otherGuild.headers.get("x-ratelimit-bucket"), limited.headers.get("x-ratelimit-bucket"))
      assert.strictEqual((yield* api(`/guilds/${S1_ID}/roles`, { headers: bot2 })).status, 200)
      // Another route: another bucket.
      const channels = yield* api(`/guilds/${S1_ID}/channels`, { headers: bot1 })
      assert.notStrictEqual(channels.headers.get("x-ratelimit-bucket"), limited.headers.get("x-ratelimit-bucket"))

      yield* Effect.sleep(`${Math.ceil(retryAfter * 1000) + 50} millis`)
      assert.strictEqual((yield* api(`/guilds/${S1_ID}/roles`, { headers: bot1 })).status, 200)
    }))
})

layer(SmallGlobal, { excludeTestServices: true })("sandbox global rate limit", (it) => {
  it.effect("the global limit per token answers 429 with X-RateLimit-Global", () =>
    Effect.gen(function*() {
      const answers = yield* Effect.forEach(
        Array.from({ length: 25 }, (_, i) => api(i % 2 === 0 ? "/users/@me" : `/guilds/${S1_ID}`, { headers: bot2 })),
        (e) => e,
        { concurrency: "unbounded" }
      )
      assert.strictEqual(answers.filter((a) => a.status === 200).length, 20)
      const global = answers.find((a) => a.status === 429)
      assert.isDefined(global)
      assertShape("RatelimitedResponse", global!.body)
      assert.strictEqual(field(global!.body, "global"), true)
      assert.strictEqual(global!.headers.get("x-ratelimit-global"), "true")
      assert.strictEqual(global!.headers.get("x-ratelimit-scope"), "global")
      assert.isNotNull(global!.headers.get("retry-after"))
      // Another token is not affected.
      assert.strictEqual((yield* api("/users/@me", { headers: bot1 })).status, 200)
    }))
})

layer(SandboxServer.layer(), { excludeTestServices: true })("sandbox faults and stats", (it) => {
  it.effect("default buckets: 5 webhook creations per second", () =>
    Effect.gen(function*() {
      const answers = yield* Effect.forEach(
        Array.from({ length: 6 }, (_, i) =>
          api(`/channels/${SEED.ids.textChannels.s3}/webhooks`, {
            method: "POST",
            headers: { ...bot2, "content-type": "application/json" },
            body: JSON.stringify({ name: `hook ${i}` })
          })),
        (e) => e,
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 429])
    }))

  it.effect("stats count calls per route template and 429s", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* call("/sandbox/stats", { method: "DELETE" })).status, 204)
      for (let i = 0; i < 3; i++) yield* api("/users/@me", { headers: bot1 })
      yield* api(`/guilds/${S1_ID}`, { headers: bot1 })
      yield* api(`/guilds/${S3_ID}`, { headers: bot1 })
      yield* fault({ route: "GET /users/@me/guilds", count: 1, kind: "429" })
      yield* api("/users/@me/guilds", { headers: bot1 })
      const stats = yield* call("/sandbox/stats")
      assert.deepStrictEqual(stats.body, {
        calls: { "GET /users/@me": 3, "GET /guilds/{id}": 2, "GET /users/@me/guilds": 1 },
        status429: 1,
        invalid: 1
      })
    }))

  it.effect("concurrent identical reads are each counted (what a coalescing client must avoid)", () =>
    Effect.gen(function*() {
      yield* call("/sandbox/stats", { method: "DELETE" })
      yield* Effect.forEach(
        Array.from({ length: 30 }, () => api(`/guilds/${S1_ID}/channels`, { headers: bot2 })),
        (e) => e,
        { concurrency: "unbounded" }
      )
      const stats = yield* call("/sandbox/stats")
      assert.strictEqual(field(field(stats.body, "calls"), "GET /guilds/{id}/channels"), 30)
    }))

  it.effect("a 429 fault answers like Discord for the next N calls of that route only", () =>
    Effect.gen(function*() {
      yield* fault({ route: "GET /users/@me", count: 2, kind: "429", retry_after: 2.5 })
      const first = yield* api("/users/@me", { headers: bot1 })
      assert.strictEqual(first.status, 429)
      assertShape("RatelimitedResponse", first.body)
      assert.strictEqual(field(first.body, "retry_after"), 2.5)
      assert.strictEqual(first.headers.get("retry-after"), "3")
      assert.strictEqual(first.headers.get("x-ratelimit-scope"), "user")
      assert.strictEqual((yield* api(`/guilds/${S1_ID}`, { headers: bot1 })).status, 200)
      assert.strictEqual((yield* api("/users/@me", { headers: bot1 })).status, 429)
      assert.strictEqual((yield* api("/users/@me", { headers: bot1 })).status, 200)
    }))

  it.effect("500 and 401 faults, on any route with \"*\"", () =>
    Effect.gen(function*() {
      yield* fault({ route: "*", count: 1, kind: "500" })
      const failed = yield* api(`/guilds/${S1_ID}/roles`, { headers: bot1 })
      assert.deepStrictEqual([failed.status, failed.body], [500, { message: "500: Internal Server Error", code: 0 }])
      yield* fault({ route: "GET /guilds/{id}/roles", count: 1, kind: "401" })
      const refused = yield* api(`/guilds/${S1_ID}/roles`, { headers: bot1 })
      assert.deepStrictEqual([refused.status, refused.body], [401, { message: "401: Unauthorized", code: 0 }])
      assert.strictEqual((yield* api(`/guilds/${S1_ID}/roles`, { headers: bot1 })).status, 200)
    }))

  it.effect("a hang fault never answers: the client gives up", () =>
    Effect.gen(function*() {
      yield* fault({ route: "GET /guilds/{id}", count: 1, kind: "hang" })
      const server = yield* SandboxServer
      const outcome = yield* Effect.promise(() =>
        fetch(`${server.url}/sandbox/discord/api/v10/guilds/${S1_ID}`, {
          headers: bot1,
          signal: AbortSignal.timeout(300)
        }).then(() => "answered", (error: unknown) => error instanceof Error ? error.name : "failed")
      )
      assert.strictEqual(outcome, "TimeoutError")
      assert.strictEqual((yield* api(`/guilds/${S1_ID}`, { headers: bot1 })).status, 200)
    }))

  it.effect("DELETE /sandbox/faults clears pending faults; bad fault bodies are 400", () =>
    Effect.gen(function*() {
      yield* fault({ route: "GET /users/@me", count: 5, kind: "500" })
      assert.strictEqual((yield* call("/sandbox/faults", { method: "DELETE" })).status, 204)
      assert.strictEqual((yield* api("/users/@me", { headers: bot1 })).status, 200)
      assert.strictEqual((yield* postJson("/sandbox/faults", { route: "x", kind: "418" })).status, 400)
    }))

  it.effect("faults and stats also cover the external-source routes mounted in SandboxRoutes", () =>
    Effect.gen(function*() {
      yield* call("/sandbox/stats", { method: "DELETE" })
      const route = "GET /sandbox/streaming/helix/users"
      const plain = yield* call("/sandbox/streaming/helix/users?login=sandboxstreamer")
      assert.notStrictEqual(plain.status, 404)
      yield* fault({ route, count: 1, kind: "500" })
      assert.strictEqual((yield* call("/sandbox/streaming/helix/users?login=sandboxstreamer")).status, 500)
      const stats = yield* call("/sandbox/stats")
      assert.strictEqual(field(field(stats.body, "calls"), route), 2)
    }))
})
