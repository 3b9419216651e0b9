/**
 * The platform connectors' configuration: SourcePollerHttp.config reads the FEED_* variables and the
 * source credentials, and a module without credentials fails `not-configured`, naming the variables.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect } from "effect"
import { SourcePollerHttp, userAgentOf } from "../../../src/layers/sources/poll/SourcePollerHttp.ts"
import { emptyPollState, SourcePoller } from "../../../src/services/sources/SourcePoller.ts"
import { USER_AGENT_PRODUCT } from "../../../src/domain/infra/Version.ts"
import { withPoller } from "./PollServerFixtures.ts"
import { flip } from "./PlatformPollsFixtures.ts"

describe("configuration", () => {
  it.effect("SourcePollerHttp.config reads the FEED_* variables and the source credentials", () =>
    Effect.gen(function*() {
      const env = {
        FEED_CONTACT: "https://ops.example.org/feeds", FEED_FETCH_TIMEOUT_MS: "8000", FEED_MAX_BODY_BYTES: "2097152",
        FEED_HOST_CONCURRENCY: "3", FEED_OFFLINE_GRACE_SECONDS: "120", YOUTUBE_API_KEY: "k", X_BEARER_TOKEN: ""
      }
      const o = yield* SourcePollerHttp.config.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
      assert.deepStrictEqual(
        [o.contact, o.userAgent, o.maxBodyBytes, o.hostConcurrency, o.offlineGraceSeconds, Duration.toMillis(Duration.fromInputUnsafe(o.timeout!))],
        ["https://ops.example.org/feeds", undefined, 2097152, 3, 120, 8000]
      )
      assert.deepStrictEqual([o.video !== undefined, o.microblog, o.forum, o.rss], [true, undefined, undefined, { allowPrivateAddresses: false }])
      assert.strictEqual(userAgentOf(o), `${USER_AGENT_PRODUCT} (+https://ops.example.org/feeds)`)
      assert.strictEqual(userAgentOf({ userAgent: "custom/1.0" }), "custom/1.0")
    }))
})

describe("not configured", () => {
  it.live("a module without credentials fails `not-configured`, naming the variables", () =>
    withPoller({}, Effect.gen(function*() {
      const e = yield* flip("video", "UC_x5XG1OV2P6uZZ5FSM9Ttw")
      assert.strictEqual(e.kind, "not-configured")
      assert.include(e.message, "YOUTUBE_API_KEY")
      const many = yield* SourcePoller.use((p) => p.pollMany("photo", [{ identifier: "a", previous: emptyPollState }]))
      assert.strictEqual((many.get("a") as { kind: string }).kind, "not-configured")
    })))
})
