/**
 * decisions.md "Errors" over real HTTP: a defect (a bug) answers the 500 envelope with the request id
 * and no internals; the details go to the log, once, redacted.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, References } from "effect"
import { liveCapabilities, makeApp } from "../../src/layers/App.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import type { Capabilities } from "../../src/layers/App.ts"
import { ALICE_ID } from "../../src/sandbox/Seed.ts"
import { generateKey, parseKeyring } from "../../src/services/infra/Cipher.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { makeFormsRepoMemory } from "../layers/FormsRepoMemory.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { testDb } from "../utils/Db.ts"
import { freePort, raw, signIn, TestApp, testAppConfig } from "../utils/TestApp.ts"
import { text } from "./ContractFixtures.ts"
import { checkEnvelope, FORMS } from "./EnvelopeFixtures.ts"

const LEAK = "SELECT secret FROM tokens WHERE token_sha256 = 'bmg_at_leaky' -- FormsRepoSql"

/** The live capabilities with a FormsRepo whose `list` dies (a bug), as a test-only capability. */
const FaultyApp = Layer.unwrap(Effect.gen(function*() {
  const port = yield* Effect.promise(freePort)
  const config = testAppConfig(port)
  const dying = Layer.effect(
    FormsRepo,
    Effect.map(makeFormsRepoMemory, (repo) => FormsRepo.of({ ...repo, list: () => Effect.die(new Error(LEAK)) }))
  )
  const capabilities = Layer.merge(liveCapabilities(config, SandboxMode.of(config), parseKeyring(generateKey()), testDb("pglite")), dying)
  return makeApp(config, SandboxMode.of(config), capabilities as Layer.Layer<Capabilities, unknown>).pipe(
    Layer.merge(Layer.succeed(TestApp, TestApp.of({ url: config.publicUrl, config }))),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
}))

// The defect's ERROR line is part of the behaviour: kept (not printed) and checked.
layer(FaultyApp.pipe(Layer.provideMerge(CapturedLogs.layer)), { excludeTestServices: true, timeout: 60_000 })("defects", (it) => {
  it.effect("a 500 carries the envelope and the request id, no internals", () =>
    Effect.gen(function*() {
      const { access_token: t } = yield* signIn(ALICE_ID)
      const res = yield* raw({ token: t, headers: { "x-request-id": "defect-probe-1" } }, FORMS)
      const body = yield* text(res)
      assert.strictEqual(res.status, 500, body)
      assert.strictEqual(res.headers.get("x-request-id"), "defect-probe-1")
      const [item] = checkEnvelope(500, res.headers.get("content-type"), res.headers.get("x-request-id"), body)
      assert.include(item!.message, "defect-probe-1")
      for (const internal of ["SELECT", "bmg_at_", "tokens", "FormsRepo", "Error:", "    at ", ".ts:", "node_modules"]) {
        assert.notInclude(body, internal)
      }
      // The rest of the API still answers.
      const user = yield* raw({ token: t }, "/api/v1/user")
      assert.strictEqual(user.status, 200)
      // The details went to the log instead, once, under the request id, with the token in them redacted.
      const errors = yield* logged("unhandled failure", ["Error", "Fatal"])
      assert.strictEqual(errors.length, 1, JSON.stringify(errors))
      assert.strictEqual(errors[0]!.annotations["request_id"], "defect-probe-1")
      assert.include(errors[0]!.text, "FormsRepoSql", "the operator gets what failed")
      assert.notInclude(errors[0]!.text, "bmg_at_leaky")
      assert.notInclude(JSON.stringify(yield* CapturedLogs.use((c) => c.lines)), t)
    }))
})
