/**
 * The chat platform's rate limiter (DiscordRateLimits.ts), issue #19: when the shared counter store
 * (Redis) fails, limits are counted in memory and the outage is reported; and every upstream answer
 * is counted in the metrics. Shared setup: RateLimitFixtures.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Metric, Redacted } from "effect"
import { RateLimiter } from "effect/persistence"
import { DiscordGlobalBudget } from "../../src/layers/platform/discord/DiscordGlobalBudget.ts"
import { DiscordRateLimits } from "../../src/layers/platform/discord/DiscordRateLimits.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"
import { upstreamRateLimited, upstreamRequests } from "../../src/services/infra/Metrics.ts"
import { fakeDiscord, maxInWindow } from "./DiscordFixtures.ts"
import { answer, botToken, fakeClient, guild, limits, statusOf, target } from "./RateLimitFixtures.ts"

describe("the shared store failing, against a scripted platform", () => {
  it.live("the shared store failing: limits are counted in memory, never dropped", () =>
    Effect.gen(function*() {
      const down = new RateLimiter.RateLimiterError({
        reason: new RateLimiter.RateLimitStoreError({ message: "connect ECONNREFUSED 127.0.0.1:6379" })
      })
      const failing = Layer.succeed(RateLimiter.RateLimiterStore, {
        fixedWindow: () => Effect.fail(down),
        tokenBucket: () => Effect.fail(down),
        adaptiveConsume: () => Effect.fail(down),
        adaptiveFeedback: () => Effect.fail(down)
      })
      const server = yield* fakeDiscord((request) =>
        request.path.startsWith("/users") ? { status: 401, json: { message: "401: Unauthorized", code: 0 } } : { json: guild(request.path.split("/")[2]!) }
      )
      const failingBudget = Layer.succeed(DiscordGlobalBudget, { reserve: () => Effect.fail(down) })
      const platform = yield* fakeClient(server.url, { globalPerSecond: 5, invalidRequestLimit: 2 }, failing, failingBudget)
      // The global limit (5 per second) still holds over distinct buckets.
      yield* Effect.all(Array.from({ length: 7 }, (_, i) => platform.getGuild(botToken, String(100 + i))), {
        concurrency: "unbounded",
        discard: true
      })
      assert.strictEqual(server.calls.length, 7)
      assert.isAtMost(maxInWindow(server.calls.map((c) => c.at), 1000), 5)
      // The invalid-request budget (1 here) still holds.
      assert.strictEqual(statusOf(yield* Effect.flip(platform.getCurrentUser(Redacted.make("bad")))), 401)
      assert.strictEqual((yield* Effect.flip(platform.getCurrentUser(Redacted.make("bad-2"))))._tag, "ServiceUnavailable")
      assert.strictEqual(server.calls.length, 8)
    }))
})

describe("the shared store and the metrics on the test clock", () => {
  it.effect("the shared store's outage is reported once and its end too; counting goes on in memory meanwhile", () =>
    Effect.gen(function*() {
      let up = false
      const down = new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message: "ECONNREFUSED" }) })
      // Once back, the shared store has every budget full (another instance's view, say).
      const flaky = Layer.succeed(RateLimiter.RateLimiterStore, {
        fixedWindow: () => Effect.fail(down),
        tokenBucket: (o) => Effect.suspend(() => (up ? Effect.succeed([o.limit - o.tokens, 0] as const) : Effect.fail(down))),
        adaptiveConsume: () => Effect.fail(down),
        adaptiveFeedback: () => Effect.fail(down)
      })
      const flakyBudget = Layer.succeed(DiscordGlobalBudget, {
        reserve: () => Effect.suspend(() => (up ? Effect.succeed({ waitMs: 0, reserved: true }) : Effect.fail(down)))
      })
      const health = makeDependencyHealth()
      const limiter = yield* Layer.build(DiscordRateLimits.layer({ invalidRequestLimit: 2 }).pipe(Layer.provide([flaky, flakyBudget])))
        .pipe(Effect.map((context) => Context.get(context, DiscordRateLimits)))
      const run = (status: number) => limiter.run(target, Effect.succeed(answer(status))).pipe(Effect.provideService(DependencyHealth, health))
      yield* run(401)
      assert.deepStrictEqual(health.down(), ["redis"])
      // Counted in memory: the budget of one is spent.
      assert.strictEqual((yield* Effect.flip(run(200)))._tag, "ServiceUnavailable")
      up = true
      assert.strictEqual((yield* run(200)).status, 200)
      assert.deepStrictEqual(health.down(), [])
    }))

  it.effect("every answer is counted in the upstream metrics under platform discord", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      // A route of its own, shaped like a template (the metrics registry is the process's: other test
      // files in this worker scrape it and check that no label holds a raw id), counted as deltas.
      const route = "GET /rate-limit-behaviour/metrics"
      const count = (metric: typeof upstreamRequests, labels: Record<string, string>) =>
        Effect.map(Metric.value(Metric.withAttributes(metric, labels)), (state) => Number(state.count))
      const counts = Effect.all([
        count(upstreamRequests, { platform: "discord", route, status: "429" }),
        count(upstreamRateLimited, { platform: "discord", route }),
        count(upstreamRequests, { platform: "discord", route, status: "error" }),
        count(upstreamRequests, { platform: "discord", route, status: "200" })
      ])
      const before = yield* counts
      // A 429 at a deadline already reached: sent once, then given up.
      yield* Effect.ignore(limiter.run({ ...target, route }, Effect.succeed(answer(429, {}, JSON.stringify({ retry_after: 0 }))), 0))
      yield* Effect.ignore(limiter.run({ ...target, route }, Effect.fail("unreachable")))
      yield* limiter.run({ ...target, route, major: "2" }, Effect.succeed(answer(200)))
      const after = yield* counts
      // 429, rate limited, error, 200: one each.
      assert.deepStrictEqual(after.map((n, i) => n - before[i]!), [1, 1, 1, 1])
    }))
})
