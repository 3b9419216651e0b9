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
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"
import { countSince, fakeDiscord, maxInWindow } from "./DiscordFixtures.ts"

const redisUrl = process.env["TEST_REDIS_URL"]
const perSecond = 20
const botToken = Redacted.make("shared-bot-token")

describe(`global budget shared by two instances (${redisUrl === undefined ? "memory store" : "Redis store"})`, () => {
  it.live("two instances together stay under the per-token global limit", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((request) => {
        const times = server.calls.filter((c) => c.headers["authorization"] === request.headers["authorization"])
        if (countSince(times.map((c) => c.at), request.at, 1000) > perSecond) {
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
      const sharedMemory = yield* Layer.build(RateLimiter.layerStoreMemory)
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
      const peak = maxInWindow(server.calls.map((c) => c.at), 1000)
      const measured = `60 calls in ${elapsed} ms, peak ${peak} in any 1 s`
      assert.strictEqual(server.calls.length, 60)
      assert.deepStrictEqual(server.statuses.filter((s) => s === 429), [], measured)
      assert.isEmpty(yield* logged("Chat platform answered 429"), "no 429 for the clients to log")
      assert.isAtMost(peak, perSecond, measured)
      // Burst 4, then 16 per 1.2 s: (60 - 4) / 16 * 1.2 = 4.2 s at least.
      assert.isAtLeast(elapsed, 4000, measured)
    }).pipe(Effect.provide(CapturedLogs.layer)))
})
