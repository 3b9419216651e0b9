/**
 * #12 item 9, decisions.md "Sandbox mode": the sandbox starts by itself only on a loopback address
 * without platform credentials; elsewhere it needs SANDBOX=true and warns at start; without either,
 * start-up stops with one line naming the variables.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Logger } from "effect"
import { generateKey } from "../../src/services/infra/Cipher.ts"
import { isLoopbackHost, loadConfig } from "../../src/layers/config/AppConfig.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { BotsMemory } from "../layers/BotsMemory.ts"

const load = (env: Record<string, string>) =>
  Effect.exit(loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))

const sandboxOf = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const exit = yield* load(env)
    assert.isTrue(Exit.isSuccess(exit), JSON.stringify(exit))
    return Exit.isSuccess(exit) ? exit.value.sandbox : undefined
  })

/** The start-up failure's message (ConfigInvalid: what main prints as its one line). */
const failureOf = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip(loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))
    assert.strictEqual(error._tag, "ConfigInvalid")
    return error.message
  })

describe("sandbox mode is never fail-open", () => {
  it("loopback addresses", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "0:0:0:0:0:0:0:1"]) assert.isTrue(isLoopbackHost(h), h)
    for (const h of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "gateway.example.com", "128.0.0.1", "::ffff:10.0.0.1"]) {
      assert.isFalse(isLoopbackHost(h), h)
    }
  })

  it.effect("by default on a loopback address without platform credentials", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* sandboxOf({}))
      assert.isTrue(yield* sandboxOf({ HOST: "localhost" }))
      assert.isTrue(yield* sandboxOf({ HOST: "::1", PUBLIC_URL: "http://[::1]:8080" }))
      assert.isFalse(
        yield* sandboxOf({ DISCORD_CLIENT_ID: "1", DISCORD_CLIENT_SECRET: "s", TOKEN_ENCRYPTION_KEY: `k1:${generateKey()}` }),
        "platform credentials: platform mode"
      )
    }))

  it.effect("HOST=0.0.0.0 (or a public PUBLIC_URL) without SANDBOX: not sandbox mode; one line naming the variables", () =>
    Effect.gen(function*() {
      for (const env of [{ HOST: "0.0.0.0" }, { HOST: "10.1.2.3" }, { PUBLIC_URL: "https://gateway.example.com" }]) {
        const message = yield* failureOf(env)
        assert.include(message, "DISCORD_CLIENT_ID")
        assert.include(message, "DISCORD_CLIENT_SECRET")
        assert.include(message, "SANDBOX=true")
        // Every problem is reported at once, one line each naming its variable (#13 item 6); the
        // missing credentials are said once.
        const lines = message.split("\n")
        for (const line of lines) assert.match(line, /^[A-Z][A-Z0-9_]*: /)
        assert.strictEqual(lines.filter((l) => l.includes("DISCORD_CLIENT_SECRET")).length, 1)
      }
      assert.isFalse(yield* sandboxOf({
        HOST: "0.0.0.0",
        DISCORD_CLIENT_ID: "1",
        DISCORD_CLIENT_SECRET: "s",
        TOKEN_ENCRYPTION_KEY: `k1:${generateKey()}`
      }))
    }))

  it.effect("SANDBOX=true on another address: sandbox mode, with a warning at start", () =>
    Effect.gen(function*() {
      const exit = yield* load({ HOST: "0.0.0.0", SANDBOX: "true", PUBLIC_URL: "http://192.168.1.20:8080" })
      assert.isTrue(Exit.isSuccess(exit))
      if (!Exit.isSuccess(exit)) return
      assert.isTrue(exit.value.sandbox)
      const warnings: Array<string> = []
      const capture = Logger.make((o) => {
        if (o.logLevel === "Warn") warnings.push(String(o.message))
      })
      const start = (config: typeof exit.value) =>
        Effect.scoped(Layer.build(SandboxMode.of(config).startup.pipe(
          Layer.provide(BotsMemory([])),
          Layer.provide(Logger.layer([capture]))
        )))
      yield* start(exit.value)
      assert.strictEqual(warnings.length, 1, JSON.stringify(warnings))
      assert.include(warnings[0]!, "HOST=0.0.0.0")

      warnings.splice(0)
      const local = yield* load({ SANDBOX: "true" })
      if (Exit.isSuccess(local)) yield* start(local.value)
      assert.deepStrictEqual(warnings, [], "no warning on a loopback address")
    }))
})
