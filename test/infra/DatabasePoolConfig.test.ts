/**
 * DATABASE_POOL_SIZE at start: its default, a value within bounds as given, and one line naming the
 * variable for anything else (test/process/Cli.test.ts checks a running server keeps to it).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { loadConfig } from "../../src/layers/config/AppConfig.ts"

const load = (env: Record<string, string>) =>
  loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { HOST: "127.0.0.1", ...env } }))))

describe("DATABASE_POOL_SIZE", () => {
  it.effect("10 unless set; 2 to 1000 connections as given", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* load({})).databasePoolSize, 10)
      for (const n of [2, 4, 1000]) assert.strictEqual((yield* load({ DATABASE_POOL_SIZE: String(n) })).databasePoolSize, n)
    }))

  it.effect("anything else stops the start with one line naming it", () =>
    Effect.gen(function*() {
      for (const value of ["0", "1", "-3", "1001", "2.5", "ten"]) {
        const error = yield* Effect.flip(load({ DATABASE_POOL_SIZE: value }))
        assert.strictEqual(error._tag, "ConfigInvalid")
        assert.match(error.message, /^DATABASE_POOL_SIZE: /, value)
        assert.notInclude(error.message, "\n")
      }
      // Reported beside another bad variable, each on its own line.
      const both = yield* Effect.flip(load({ DATABASE_POOL_SIZE: "1", PORT: "x" }))
      assert.sameMembers(both.message.split("\n").map((l) => l.split(":")[0]), ["DATABASE_POOL_SIZE", "PORT"])
    }))
})
