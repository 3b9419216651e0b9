/**
 * ROLE and the FEED_* variables at start (delivery.md §1, §6): their defaults (the poll interval is
 * 15 s in sandbox mode), the per-module interval overrides, what reaches DeliverySettings and the
 * poller's options, and one line naming the variable for a bad value.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect } from "effect"
import { loadConfig } from "../../src/layers/config/AppConfig.ts"
import { deliverySettings, pollerOptions } from "../../src/layers/config/Settings.ts"
import { userAgentOf } from "../../src/layers/sources/poll/SourcePollerHttp.ts"
import { DeliverySettings, pollIntervalOf } from "../../src/services/delivery/DeliverySettings.ts"
import { USER_AGENT_PRODUCT } from "../../src/domain/infra/Version.ts"

const PLATFORM = { DISCORD_CLIENT_ID: "app", DISCORD_CLIENT_SECRET: "secret", TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") }

const load = (env: Record<string, string>) =>
  loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { HOST: "127.0.0.1", ...env } }))))

describe("ROLE and FEED_* at start", () => {
  it.effect("defaults: ROLE all; 300 s polls in platform mode, 15 s in sandbox mode; the spec's limits", () =>
    Effect.gen(function*() {
      const platform = yield* load(PLATFORM)
      assert.strictEqual(platform.role, "all")
      assert.deepStrictEqual(platform.delivery, {
        pollIntervalSeconds: 300,
        pollIntervalSecondsByModule: {},
        maxItemAgeHours: 24,
        maxItemsPerPoll: 5,
        offlineGraceSeconds: 300,
        failedAfterHours: 24,
        fetchTimeoutMs: 15_000,
        maxBodyBytes: 5 * 1024 * 1024,
        hostConcurrency: 2,
        contact: undefined,
        userAgent: undefined
      })
      const sandbox = yield* load({})
      assert.isTrue(sandbox.sandbox)
      assert.strictEqual(sandbox.delivery.pollIntervalSeconds, 15)
      // Set explicitly, it wins in sandbox mode too.
      assert.strictEqual((yield* load({ FEED_POLL_INTERVAL_SECONDS: "1" })).delivery.pollIntervalSeconds, 1)
    }))

  it.effect("every variable read; per-module intervals override the global one", () =>
    Effect.gen(function*() {
      const c = yield* load({
        ...PLATFORM,
        ROLE: "worker",
        FEED_POLL_INTERVAL_SECONDS: "600",
        FEED_POLL_INTERVAL_SECONDS_STREAMING: "60",
        FEED_POLL_INTERVAL_SECONDS_RSS: "900",
        FEED_MAX_ITEM_AGE_HOURS: "48",
        FEED_MAX_ITEMS_PER_POLL: "3",
        FEED_OFFLINE_GRACE_SECONDS: "120",
        FEED_FAILED_AFTER_HOURS: "12",
        FEED_FETCH_TIMEOUT_MS: "5000",
        FEED_MAX_BODY_BYTES: "1048576",
        FEED_HOST_CONCURRENCY: "4",
        FEED_CONTACT: "ops@example.com"
      })
      assert.strictEqual(c.role, "worker")
      assert.deepStrictEqual(c.delivery.pollIntervalSecondsByModule, { streaming: 60, rss: 900 })

      const settings = yield* Effect.provide(DeliverySettings, deliverySettings(c))
      assert.deepInclude(settings, { pollIntervalSeconds: 600, maxItemAgeHours: 48, maxItemsPerPoll: 3, offlineGraceSeconds: 120, failedAfterHours: 12 })
      assert.strictEqual(pollIntervalOf(settings, "streaming"), 60)
      assert.strictEqual(pollIntervalOf(settings, "rss"), 900)
      assert.strictEqual(pollIntervalOf(settings, "video"), 600)

      const poller = pollerOptions(c, {})
      assert.strictEqual(Duration.toMillis(Duration.fromInputUnsafe(poller.timeout!)), 5000)
      assert.deepInclude(poller, { maxBodyBytes: 1_048_576, hostConcurrency: 4, offlineGraceSeconds: 120, contact: "ops@example.com" })
      assert.strictEqual(userAgentOf(poller), `${USER_AGENT_PRODUCT} (+ops@example.com)`)
    }))

  for (
    const [name, value] of [
      ["ROLE", "scheduler"],
      ["FEED_POLL_INTERVAL_SECONDS", "0"],
      ["FEED_POLL_INTERVAL_SECONDS_VIDEO", "soon"],
      ["FEED_MAX_ITEM_AGE_HOURS", "-1"],
      ["FEED_MAX_ITEMS_PER_POLL", "1.5"],
      ["FEED_HOST_CONCURRENCY", "0"],
      ["FEED_MAX_BODY_BYTES", "big"]
    ] as const
  ) {
    it.effect(`${name}=${value} → one line naming ${name}`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(load({ [name]: value }))
        assert.strictEqual(error._tag, "ConfigInvalid")
        assert.match(error.message, new RegExp(`^${name}: `))
        assert.notInclude(error.message, "\n")
      }))
  }
})
