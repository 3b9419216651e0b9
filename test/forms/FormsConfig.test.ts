/** FORMS_MAX_PER_SERVER (README's configuration table): default 50, a positive integer, else start-up stops naming it. */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { FormsConfigEnv } from "../../src/layers/config/FormsConfigEnv.ts"
import { FormsSettings } from "../../src/services/forms/Forms.ts"

const load = (env: Record<string, string>) =>
  Effect.exit(
    Effect.gen(function*() {
      return (yield* FormsSettings).maxFormsPerServer
    }).pipe(Effect.provide(FormsConfigEnv), Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
  )

describe("FORMS_MAX_PER_SERVER", () => {
  it.effect("default 50; a positive integer is taken", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* load({}), Exit.succeed(50))
      assert.deepStrictEqual(yield* load({ FORMS_MAX_PER_SERVER: "7" }), Exit.succeed(7))
    }))

  it.effect("0, -1, 1.5, abc: refused with one message naming the variable", () =>
    Effect.gen(function*() {
      for (const bad of ["0", "-1", "1.5", "abc"]) {
        const exit = yield* load({ FORMS_MAX_PER_SERVER: bad })
        assert.isTrue(Exit.isFailure(exit), bad)
        assert.include(String(Exit.isFailure(exit) ? JSON.stringify(exit.cause) : ""), "FORMS_MAX_PER_SERVER: expected a positive integer", bad)
      }
    }))
})
