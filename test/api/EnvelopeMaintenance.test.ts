/**
 * decisions.md "Errors" over real HTTP: in maintenance mode, /api and /auth routes answer the 503
 * envelope, with the Retry-After and `retry_after` every 503 carries.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { raw, TestApp } from "../utils/TestApp.ts"
import { expectEnvelope, FORMS } from "./EnvelopeFixtures.ts"

layer(TestApp.layer({ capabilities: "memory", config: { maintenance: true } }), { excludeTestServices: true, timeout: 60_000 })(
  "maintenance mode",
  (it) => {
    it.effect("503 envelope with Retry-After on /api and /auth routes, also spelled otherwise", () =>
      Effect.gen(function*() {
        const answers = [
          yield* raw({}, "/api/v1/user"),
          yield* raw({ token: "bmg_at_whatever" }, `${FORMS}`),
          yield* raw({}, "/auth/idp/login?redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback"),
          yield* raw({ method: "POST", headers: { authorization: "x" } }, "/auth/idp/token"),
          yield* raw({ method: "POST", headers: { "x-refresh-token": "x" } }, "/auth/idp/token/refresh"),
          yield* raw({}, "/API/v1/user")
        ]
        for (const res of answers) {
          assert.strictEqual(res.headers.get("retry-after"), "60")
          const errors = yield* expectEnvelope(res, 503)
          assert.deepStrictEqual(errors[0]!.additionalProperties, { retry_after: 60 })
        }
      }))
  }
)
