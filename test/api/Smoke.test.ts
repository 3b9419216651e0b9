import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT1_ID, S1_ID } from "../../src/sandbox/Seed.ts"
import { json, raw, signIn, TestApp } from "../utils/TestApp.ts"

layer(TestApp.layer({ capabilities: { db: "pglite" } }), { excludeTestServices: true, timeout: 60_000 })("smoke", (it) => {
  it.effect("signs in and reads the user", () =>
    Effect.gen(function*() {
      const tokens = yield* signIn(ALICE_ID)
      const res = yield* raw({ token: tokens.access_token }, "/api/v1/user")
      const body = yield* json(res)
      assert.strictEqual(res.status, 200, JSON.stringify(body))
      assert.strictEqual(body.id, ALICE_ID)
      const mods = yield* raw({ token: tokens.access_token }, `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules`)
      const m = yield* json(mods)
      assert.strictEqual(mods.status, 200, JSON.stringify(m))
    }))
})
