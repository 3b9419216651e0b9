/**
 * The hot authenticated read (issue #16, bench S1): `GET …/modules` once its platform data is
 * cached makes no upstream call, and its answer (kept encoded per combination of available modules:
 * http/platform/GeneralHandlers.ts) is byte for byte the schema's JSON, with the same headers, for every user
 * and server, the RateLimit headers counted per request as before.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOB_ID, BOT1_ID, BOT2_ID, CAROL_ID, S1_ID, S2_ID, S3_ID } from "../../src/sandbox/Seed.ts"
import { MODULES } from "../../src/services/platform/Modules.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"

/** The answer as the contract spells it: ModulesResponse's fields in its order, JSON without spaces. */
const expectedBody = (publicUrl: string, available: (name: string) => boolean) =>
  JSON.stringify({
    modules: MODULES.map((m) => ({
      name: m.name,
      full_name: m.full_name,
      short_description: m.short_description,
      available: available(m.name),
      image: `${publicUrl}/assets/modules/${m.name}.svg`
    }))
  })

const read = (userId: string, bot: string, server: string) =>
  Effect.gen(function*() {
    const token = yield* tokenOf(userId)
    const res = yield* raw({ token }, `/api/v1/bots/${bot}/servers/${server}/modules`)
    const body = yield* Effect.promise(() => res.text())
    return { status: res.status, headers: res.headers, body }
  })

const upstreamCalls = Effect.gen(function*() {
  const app = yield* TestApp
  const res = yield* Effect.promise(() => fetch(`${app.url}/sandbox/stats`))
  const stats = (yield* Effect.promise(() => res.json())) as { calls: Record<string, number> }
  return Object.values(stats.calls).reduce((a, b) => a + b, 0)
})

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })("cached modules read", (it) => {
  it.effect("answers the schema's exact bytes per user and server, and a cached read calls no upstream", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const all = expectedBody(app.url, () => true)
      const formsOnly = expectedBody(app.url, (name) => name === "forms")
      // Owner, administrator, MANAGE_GUILD only (forms alone), in turn: one kept answer must not leak into another.
      const cases = [
        [ALICE_ID, BOT1_ID, S1_ID, all],
        [ALICE_ID, BOT1_ID, S2_ID, formsOnly],
        [BOB_ID, BOT2_ID, S3_ID, all],
        [CAROL_ID, BOT1_ID, S2_ID, all]
      ] as const
      // Warm-up: the platform data of every case is read (and cached) once.
      for (const [user, bot, server, body] of cases) {
        const r = yield* read(user, bot, server)
        assert.strictEqual(r.status, 200, r.body)
        assert.strictEqual(r.body, body)
      }
      const before = yield* upstreamCalls
      for (let round = 0; round < 3; round++) {
        for (const [user, bot, server, body] of cases) {
          const r = yield* read(user, bot, server)
          assert.strictEqual(r.status, 200, r.body)
          assert.strictEqual(r.body, body, `${user} in ${server}, round ${round}`)
          assert.strictEqual(r.headers.get("content-type"), "application/json")
          assert.strictEqual(r.headers.get("content-length"), String(Buffer.byteLength(body)))
          assert.strictEqual(r.headers.get("ratelimit-policy"), `"api";q=${app.config.rateLimitApiPerMinute};w=60`)
          assert.match(r.headers.get("ratelimit") ?? "", /^"api";r=\d+;t=\d+$/)
          assert.match(r.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
        }
      }
      assert.strictEqual(yield* upstreamCalls, before, "a cached read made an upstream call")
    }))
})

// 3 a minute: the memory store adds a token every 20 s, so four reads in a row are four counts.
layer(TestApp.layer({ capabilities: "memory", config: { rateLimitApiPerMinute: 3 } }), { excludeTestServices: true, timeout: 60_000 })(
  "cached modules read, rate limited",
  (it) => {
    it.effect("each cached read is counted: r goes 2, 1, 0, then 429 with Retry-After", () =>
      Effect.gen(function*() {
        const reads = []
        for (let i = 0; i < 4; i++) reads.push(yield* read(CAROL_ID, BOT1_ID, S3_ID))
        assert.deepStrictEqual(reads.map((r) => r.status), [200, 200, 200, 429])
        assert.deepStrictEqual(reads.slice(0, 3).map((r) => /;r=(\d+);/.exec(r.headers.get("ratelimit") ?? "")?.[1]), ["2", "1", "0"])
        for (const r of reads) assert.strictEqual(r.headers.get("ratelimit-policy"), `"api";q=3;w=60`)
        assert.match(reads[3]!.headers.get("retry-after") ?? "", /^\d+$/)
        assert.strictEqual(JSON.parse(reads[3]!.body).errors[0].code, "Too Many Requests")
      }))
  }
)
