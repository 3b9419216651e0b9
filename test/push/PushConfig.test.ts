/**
 * PUSH_* at start (delivery.md §9): push is on when PUBLIC_URL is https (PUSH=auto, the default),
 * or when PUSH=on says so (the sandbox and the tests, on http), never with PUSH=off; the lease and
 * sweep settings; a line naming the variable for a bad value (the PUSH_* group reports its first).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { loadConfig } from "../../src/layers/config/AppConfig.ts"
import { pushEnabled } from "../../src/layers/push/PushLive.ts"

const PLATFORM = { DISCORD_CLIENT_ID: "app", DISCORD_CLIENT_SECRET: "secret", TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") }

const load = (env: Record<string, string>) =>
  loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { HOST: "127.0.0.1", ...PLATFORM, ...env } }))))

describe("PUSH_* at start", () => {
  it.effect("auto: on for an https PUBLIC_URL only; on and off whatever the URL", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Record<string, string>, boolean]> = [
        [{ PUBLIC_URL: "https://gateway.example.com" }, true],
        [{ PUBLIC_URL: "http://gateway.example.com" }, false],
        [{}, false],
        [{ PUBLIC_URL: "https://gateway.example.com", PUSH: "off" }, false],
        [{ PUBLIC_URL: "http://127.0.0.1:8080", PUSH: "on" }, true]
      ]
      for (const [env, on] of cases) assert.strictEqual(pushEnabled(yield* load(env)), on, JSON.stringify(env))
    }))

  it.effect("defaults, and the values given", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* load({})).push, { mode: "auto", leaseSeconds: 432_000, sweepSeconds: 60, websubHubUrl: undefined })
      const set = yield* load({ PUSH: "on", PUSH_LEASE_SECONDS: "600", PUSH_SWEEP_SECONDS: "5", PUSH_WEBSUB_HUB_URL: "https://hub.example.com/" })
      assert.deepStrictEqual(set.push, { mode: "on", leaseSeconds: 600, sweepSeconds: 5, websubHubUrl: "https://hub.example.com/" })
    }))

  it.effect("a bad value: one line naming the variable", () =>
    Effect.gen(function*() {
      for (const [env, name] of [[{ PUSH: "maybe" }, "PUSH"], [{ PUSH_LEASE_SECONDS: "0" }, "PUSH_LEASE_SECONDS"], [{ PUSH_SWEEP_SECONDS: "x" }, "PUSH_SWEEP_SECONDS"]] as const) {
        const bad = yield* Effect.flip(load(env))
        assert.strictEqual(bad.message.split("\n").length, 1, bad.message)
        assert.isTrue(bad.message.startsWith(`${name}: `), bad.message)
      }
    }))
})
