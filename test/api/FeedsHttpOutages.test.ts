/**
 * A source that hangs or is down, over HTTP (memory capabilities, a short upstream time-out): a 408
 * envelope naming the source, one log line when it goes down and one when it is back, and a 503 with
 * Retry-After (an RSS 429's own passed on). Creates and webhooks: FeedsHttpWrites.test.ts; options
 * and lookups: FeedsHttpOptions.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ALICE_ID, channelId } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { call, modulePath, sandbox } from "./FeedsHttpFixtures.ts"

// The outages these tests provoke are logged (one line down, one back): kept, with a state of their own, and checked.
// The time-out is every upstream call's (the sign-in's code exchange, the lookups that answer): 3 s, room
// for a loaded machine; the hung source's calls last it, then a 408.
const timingOut = TestApp.layer({ capabilities: "memory", config: { upstreamTimeoutMs: 3_000 } }).pipe(
  Layer.provide(Layer.succeed(DependencyHealth, makeDependencyHealth())),
  Layer.provideMerge(CapturedLogs.layer)
)
layer(timingOut, { excludeTestServices: true, timeout: 60_000 })(
  "feeds: a source that times out",
  (it) => {
    it.effect("getUserId and create → 408 envelope naming the source, when the source hangs", () =>
      Effect.gen(function*() {
        yield* sandbox("POST", "/sandbox/faults", { route: "GET /sandbox/streaming/helix/users", kind: "hang", count: 2 })
        const started = Date.now()
        const lookup = yield* call("GET", `${modulePath("streaming")}/getUserId/sandboxstreamer`)
        assert.strictEqual(lookup.status, 408, JSON.stringify(lookup.body))
        assert.strictEqual(lookup.body.errors[0].code, "Request Timeout")
        assert.include(lookup.body.errors[0].message, "streaming")
        // Ended by the time-out (3 s), not the hang (endless).
        assert.isBelow(Date.now() - started, 10_000)
        const create = yield* call("POST", `${modulePath("streaming")}/feeds`, {
          feed_identifier: "sandboxstreamer",
          webhook_channel: channelId(1, 2)
        })
        assert.strictEqual(create.status, 408, JSON.stringify(create.body))
        // The faults are spent: the source answers again.
        const again = yield* call("GET", `${modulePath("streaming")}/getUserId/sandboxstreamer`)
        assert.strictEqual(again.status, 200, JSON.stringify(again.body))
        // An operator reads two lines for it: down (the first time-out), back (with the count).
        const lines = yield* logged("streaming (Twitch)")
        assert.deepStrictEqual(lines.map((l) => l.text), ["dependency down: streaming (Twitch)", "dependency back: streaming (Twitch)"])
        assert.strictEqual(lines[1]!.annotations["failures"], 2)
        const downFor = lines[1]!.annotations["down_for_ms"] as number
        assert.isAtLeast(downFor, 0)
        assert.isBelow(downFor, 120_000, "an outage of this test, not an epoch")
      }))

    it.effect("every 503 of a source carries Retry-After and retry_after; an RSS 429's own Retry-After is passed on", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const retryOf = (init: RequestInit & { token?: string }, path: string) =>
          Effect.gen(function*() {
            const res = yield* raw(init, path)
            const body = JSON.parse(yield* Effect.promise(() => res.text()))
            return { status: res.status, header: res.headers.get("retry-after"), body }
          })
        const token = yield* tokenOf(ALICE_ID)
        yield* sandbox("POST", "/sandbox/faults", { route: `GET ${RSS_PATHS.rss}`, kind: "429", retry_after: 30 })
        const limited = yield* retryOf(
          { method: "POST", token, headers: { "content-type": "application/json" }, body: JSON.stringify({ feed_identifier: `${app.url}${RSS_PATHS.rss}`, webhook_channel: channelId(1, 2) }) },
          `${modulePath("rss")}/feeds`
        )
        assert.strictEqual(limited.status, 503, JSON.stringify(limited.body))
        assert.strictEqual(limited.header, "30")
        assert.strictEqual(limited.body.errors[0].additionalProperties.retry_after, 30)
        for (const kind of ["500", "429"] as const) {
          yield* sandbox("POST", "/sandbox/faults", { route: "GET /sandbox/streaming/helix/users", kind, retry_after: 0 })
          const down = yield* retryOf({ method: "GET", token }, `${modulePath("streaming")}/getUserId/sandboxstreamer`)
          assert.strictEqual(down.status, 503, JSON.stringify(down.body))
          assert.isAtLeast(Number(down.header), 1, `${kind}: Retry-After`)
          assert.isAtLeast(down.body.errors[0].additionalProperties.retry_after, 1, `${kind}: ${JSON.stringify(down.body)}`)
        }
      }))
  }
)
