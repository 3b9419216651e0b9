/** decisions.md "Errors" over real HTTP: in maintenance mode, /api and /auth routes answer the 503 envelope. */
import { layer } from "@effect/vitest"
import { Effect } from "effect"
import { raw, TestApp } from "../utils/TestApp.ts"
import { expectEnvelope, FORMS } from "./EnvelopeChecks.ts"

layer(TestApp.layer({ capabilities: "memory", config: { maintenance: true } }), { excludeTestServices: true, timeout: 60_000 })(
  "maintenance mode",
  (it) => {
    it.effect("503 envelope on /api and /auth routes", () =>
      Effect.gen(function*() {
        const answers = [
          yield* raw({}, "/api/v1/user"),
          yield* raw({ token: "bmg_at_whatever" }, `${FORMS}`),
          yield* raw({}, "/auth/idp/login?redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback"),
          yield* raw({ method: "POST", headers: { authorization: "x" } }, "/auth/idp/token"),
          yield* raw({ method: "POST", headers: { "x-refresh-token": "x" } }, "/auth/idp/token/refresh")
        ]
        for (const res of answers) yield* expectEnvelope(res, 503)
      }))
  }
)
