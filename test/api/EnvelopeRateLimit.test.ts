/**
 * decisions.md "Errors" over real HTTP: the per-user rate limit answers the 429 envelope with
 * Retry-After, the RateLimit fields and retry_after; other users are unaffected.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOB_ID } from "../../src/sandbox/Seed.ts"
import { raw, signIn, TestApp } from "../utils/TestApp.ts"
import { text } from "./ContractFixtures.ts"
import { expectEnvelope } from "./EnvelopeFixtures.ts"

layer(TestApp.layer({ capabilities: "memory", config: { rateLimitApiPerMinute: 3 } }), { excludeTestServices: true, timeout: 60_000 })(
  "per-user rate limit",
  (it) => {
    it.effect("429 after the limit, with Retry-After, RateLimit fields and retry_after; other users unaffected", () =>
      Effect.gen(function*() {
        const alice = yield* signIn(ALICE_ID)
        const bob = yield* signIn(BOB_ID)
        for (let i = 0; i < 3; i++) {
          const res = yield* raw({ token: alice.access_token }, "/api/v1/user")
          assert.strictEqual(res.status, 200, yield* text(res))
          assert.strictEqual(res.headers.get("ratelimit-policy"), '"api";q=3;w=60')
          assert.match(res.headers.get("ratelimit") ?? "", new RegExp(`^"api";r=${2 - i};t=\\d+$`))
        }
        const limited = yield* raw({ token: alice.access_token }, "/api/v1/user")
        const retryAfter = Number(limited.headers.get("retry-after"))
        assert.isTrue(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
        assert.strictEqual(limited.headers.get("ratelimit-policy"), '"api";q=3;w=60')
        assert.match(limited.headers.get("ratelimit") ?? "", /^"api";r=0;t=\d+$/)
        const [item] = yield* expectEnvelope(limited, 429)
        assert.deepStrictEqual(item!.additionalProperties, { retry_after: retryAfter })

        const other = yield* raw({ token: bob.access_token }, "/api/v1/user")
        assert.strictEqual(other.status, 200, "the count is per user")
      }))
  }
)
