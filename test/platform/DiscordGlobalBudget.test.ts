/**
 * Two gateway instances (two client layers, each with its own buckets and caches) sharing one
 * global budget per bot token stay under it together. With TEST_REDIS_URL the budget is counted in
 * that Redis (each instance its own connection); without it, in one memory store the two share.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { RateLimiter } from "effect/persistence"
import type { DiscordChatPlatformOptions } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { DiscordGlobalBudget } from "../../src/layers/platform/discord/DiscordGlobalBudget.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { countSince, fakeDiscord, maxInWindow } from "./DiscordFixtures.ts"

const redisUrl = process.env["TEST_REDIS_URL"]
const perSecond = 20
// The fake platform counts any 800 ms, not 1 s: it runs in this process with both instances, so on a
// loaded machine a request reaches its handler up to a few hundred ms after it was sent, and the first
// sends of a window can arrive late next to the next window's punctual ones (the limiter keeps 200 ms
// of its 1.2 s window for such lateness; its exact window is pinned on the test clock,
// RateLimitBehaviourBudgets.test.ts). Two instances that did not share the budget would send 40 at once.
const windowMs = 800
const botToken = Redacted.make("shared-bot-token")

describe(`global budget shared by two instances (${redisUrl === undefined ? "memory store" : "Redis store"})`, () => {
  it.live("two instances together stay under the per-token global limit", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((request) => {
        const times = server.calls.filter((c) => c.headers["authorization"] === request.headers["authorization"])
        if (countSince(times.map((c) => c.at), request.at, windowMs) > perSecond) {
          return { status: 429, json: { message: "global", retry_after: 1, global: true } }
        }
        const id = request.path.split("/")[2]!
        return { json: { id, name: `Guild ${id}`, icon: null, owner_id: "1" } }
      })
      const options: DiscordChatPlatformOptions = {
        baseUrl: server.url,
        clientId: "1",
        clientSecret: Redacted.make("s"),
        globalPerSecond: perSecond,
        // Fresh keys per run, so an earlier run's counts in a shared Redis do not matter.
        keyPrefix: `test:discord:${Date.now()}:${Math.random()}:`
      }
      const sharedMemory = yield* Layer.build(Layer.merge(RateLimiter.layerStoreMemory, DiscordGlobalBudget.layerMemory))
      const instance = () =>
        Layer.build(
          (redisUrl === undefined
            ? ChatPlatformDiscord.layerWithStore(options).pipe(Layer.provide(Layer.succeedContext(sharedMemory)))
            : ChatPlatformDiscord.layerRedis({ ...options, redisUrl })).pipe(Layer.provide(FetchHttpClient.layer))
        ).pipe(Effect.map((context) => Context.get(context, ChatPlatform)))
      const one = yield* instance()
      const two = yield* instance()

      const started = Date.now()
      // 60 distinct guilds (distinct buckets, no cache hits): only the global budget limits them.
      yield* Effect.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? one : two).getGuild(botToken, String(1000 + i))),
        { concurrency: "unbounded", discard: true }
      )
      const elapsed = Date.now() - started
      const peak = maxInWindow(server.calls.map((c) => c.at), windowMs)
      const measured = `60 calls in ${elapsed} ms, peak ${peak} in any ${windowMs} ms`
      assert.strictEqual(server.calls.length, 60)
      assert.deepStrictEqual(server.statuses.filter((s) => s === 429), [], measured)
      assert.isEmpty(yield* logged("Chat platform answered 429"), "no 429 for the clients to log")
      assert.isAtMost(peak, perSecond, measured)
      // The first 20 at once, then 20 more 1.2 s after them, and the last 20 at 2.4 s (how soon the
      // burst goes is pinned on the test clock, RateLimitBehaviourBudgets.test.ts: under load it is late).
      // (Less 50 ms: Redis's clock, in whole ms, against this process's.)
      assert.isAtLeast(elapsed, 2350, measured)
    }).pipe(Effect.provide(CapturedLogs.layer)))
})
