/**
 * The hot answers of issue #16 (bench S1: the cached modules read; S4: the token check) carry the
 * same headers after their CPU work was cut (RateLimit.ts and Envelope.ts set headers one by one,
 * the permission check reads cached platform data without forking): the RateLimit fields counted per
 * request, the request id, and on the token answer `Cache-Control: no-store` and `Pragma: no-cache`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"

const RATELIMIT = (name: string) => new RegExp(`^"${name}";r=(\\d+);t=(\\d+)$`)

const limitOf = (policy: string) => Number(/;q=(\d+);/.exec(policy)![1])

const remaining = (res: Response, name: string) => {
  const m = RATELIMIT(name).exec(res.headers.get("ratelimit") ?? "")
  assert.isNotNull(m, `ratelimit header: ${res.headers.get("ratelimit")}`)
  return Number(m![1])
}

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 60_000 })("hot path headers", (it) => {
  it.effect("S1: RateLimit fields counted per request and the request id, on every cached read", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const path = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules`
      const first = yield* raw({ token }, path)
      yield* Effect.promise(() => first.text())
      assert.strictEqual(first.status, 200)
      const policy = first.headers.get("ratelimit-policy") ?? ""
      assert.match(policy, /^"api";q=\d+;w=60$/)
      let before = remaining(first, "api")
      for (let i = 0; i < 3; i++) {
        const res = yield* raw({ token, headers: { "x-request-id": `hot-${i}` } }, path)
        yield* Effect.promise(() => res.text())
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.headers.get("content-type"), "application/json")
        assert.strictEqual(res.headers.get("ratelimit-policy"), policy)
        const now = remaining(res, "api")
        // One less, unless a new window started in between (then the limit less this request).
        assert.include([before - 1, limitOf(policy) - 1], now)
        before = now
        assert.strictEqual(res.headers.get("x-request-id"), `hot-${i}`)
        assert.isNull(res.headers.get("cache-control"))
      }
    }))

  it.effect("S4: the token check answers no-store, its RateLimit fields and a request id", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      let before: number | undefined
      for (let i = 0; i < 3; i++) {
        const res = yield* raw({ token, method: "POST" }, "/auth/idp/token/check")
        const body = yield* Effect.promise(() => res.json() as Promise<Record<string, unknown>>)
        assert.strictEqual(res.status, 200, JSON.stringify(body))
        assert.strictEqual(res.headers.get("cache-control"), "no-store")
        assert.strictEqual(res.headers.get("pragma"), "no-cache")
        assert.match(res.headers.get("ratelimit-policy") ?? "", /^"auth";q=\d+;w=3600$/)
        const now = remaining(res, "auth")
        if (before !== undefined) assert.include([before - 1, limitOf(res.headers.get("ratelimit-policy")!) - 1], now)
        before = now
        assert.match(res.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
      }
      // A refused check is a token answer too.
      const refused = yield* raw({ token: "bmg_at_not-a-token", method: "POST" }, "/auth/idp/token/check")
      yield* Effect.promise(() => refused.text())
      assert.strictEqual(refused.headers.get("cache-control"), "no-store")
      assert.strictEqual(refused.headers.get("pragma"), "no-cache")
    }))
})
