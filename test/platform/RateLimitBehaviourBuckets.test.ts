/**
 * The chat platform's rate limiter (DiscordRateLimits.ts), issue #19: per-route buckets, the waits
 * they impose and the caller's deadline. Over real HTTP against the gateway's sandbox platform with
 * injected faults (`POST /sandbox/faults`), against a scripted fake (DiscordFixtures.ts) where the
 * sandbox cannot answer the case (a 429 without a JSON body, two routes of one bucket hash), and the
 * limiter alone on the test clock. Most cases give the call a short wait budget, so a wait that would
 * outlast it is answered at once with 503 + Retry-After, and "was it sent?" is read from the server's
 * call counts: no timing assertions. The global limit and the invalid-request budget:
 * RateLimitBehaviourBudgets.test.ts; the shared store and the metrics: RateLimitBehaviourStoreMetrics.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SEED } from "../../src/sandbox/Seed.ts"
import type { Reply } from "./DiscordFixtures.ts"
import { fakeDiscord, user } from "./DiscordFixtures.ts"
import {
  answer,
  bot1,
  bot2,
  botToken,
  calls,
  clearFaults,
  fakeClient,
  fault,
  GUILD,
  guild,
  guildPath,
  limits,
  messageOf,
  retryAfterOf,
  ROLES,
  sandboxClient,
  sentSince,
  target,
  tooMany,
  WEBHOOKS
} from "./RateLimitFixtures.ts"

const { s3, s4 } = SEED.ids.servers

layer(SandboxServer.layer(), { excludeTestServices: true })("buckets against the sandbox platform", (it) => {
  it.effect("a per-route 429 stops only its bucket: same route and major parameter, same token", () =>
    Effect.gen(function*() {
      yield* clearFaults
      const platform = yield* sandboxClient({ waitBudget: "1 second" })
      const before = yield* calls
      yield* fault({ route: GUILD, kind: "429", retry_after: 2.5, path: guildPath(s3) })
      const first = yield* Effect.flip(platform.getGuild(bot2, s3))
      assert.strictEqual(first._tag, "ServiceUnavailable")
      assert.strictEqual(retryAfterOf(first), 3)
      // The same bucket again: refused without sending, within the budget.
      const again = yield* Effect.flip(platform.getGuild(bot2, s3))
      assert.strictEqual(again._tag, "ServiceUnavailable")
      assert.isAtLeast(retryAfterOf(again) as number, 1)
      assert.strictEqual((yield* sentSince(before))(GUILD), 1)
      // Another major parameter (guild), another route, another token: each sent and answered.
      assert.strictEqual((yield* platform.getGuild(bot2, s4)).id, s4)
      assert.isAbove((yield* platform.getGuildRoles(bot2, s3)).length, 0)
      assert.strictEqual((yield* platform.getGuild(bot1, s3)).id, s3)
      const sent = yield* sentSince(before)
      assert.strictEqual(sent(GUILD), 3)
      assert.strictEqual(sent(ROLES), 1)
    }))

  it.effect("two channels never share a wait", () =>
    Effect.gen(function*() {
      yield* clearFaults
      const platform = yield* sandboxClient({ waitBudget: "1 second" })
      const [a, b] = [SEED.ids.textChannels.s3, SEED.ids.textChannels.s4]
      const before = yield* calls
      yield* fault({ route: WEBHOOKS, kind: "429", retry_after: 2, path: `/sandbox/discord/api/v10/channels/${a}/` })
      assert.strictEqual((yield* Effect.flip(platform.getChannelWebhooks(bot2, a)))._tag, "ServiceUnavailable")
      assert.isArray(yield* platform.getChannelWebhooks(bot2, b))
      assert.strictEqual((yield* Effect.flip(platform.getChannelWebhooks(bot2, a)))._tag, "ServiceUnavailable")
      assert.strictEqual((yield* sentSince(before))(WEBHOOKS), 2)
    }))

  it.effect("429s with retry_after 0 do not spin: 10 attempts, then 503 with Retry-After", () =>
    Effect.gen(function*() {
      yield* clearFaults
      const platform = yield* sandboxClient({ invalidRequestLimit: 1000 })
      const before = yield* calls
      yield* fault({ route: ROLES, kind: "429", retry_after: 0, count: 50 })
      const error = yield* Effect.flip(platform.getGuildRoles(bot2, s3))
      assert.strictEqual(error._tag, "ServiceUnavailable")
      assert.strictEqual(retryAfterOf(error), 1)
      assert.include(messageOf(error), "(route GET /guilds/:guild/roles)")
      assert.strictEqual((yield* sentSince(before))(ROLES), 10)
      yield* clearFaults
    }))
})

describe("buckets against a scripted platform", () => {
  it.live("a 429 without a JSON body: the wait comes from X-RateLimit-Reset-After, then Retry-After", () =>
    Effect.gen(function*() {
      const bare: Array<Record<string, string>> = [
        { "x-ratelimit-reset-after": "0.3", "retry-after": "5" },
        { "retry-after": "4" }
      ]
      const server = yield* fakeDiscord((_, i) => (i === 0 ? tooMany(bare[0]!) : { json: user("6") }))
      const platform = yield* fakeClient(server.url, { waitBudget: "2 seconds" })
      // 0.3 s from the bucket header, not the 5 s of Retry-After (past the budget).
      assert.strictEqual((yield* platform.getBotUser(botToken)).id, "6")
      assert.isAtLeast(server.calls[1]!.at - server.calls[0]!.at, 290)
      // Only Retry-After: 4 s is past the budget: 503 at once with that wait.
      server.handler = (_, i) => (i === 2 ? tooMany(bare[1]!) : { json: user("6") })
      const error = yield* Effect.flip(platform.getGuild(botToken, "1"))
      assert.strictEqual(retryAfterOf(error), 4)
      assert.strictEqual(server.calls.length, 3)
      // A header that is not a number is skipped; a body's retry_after that is not a number too.
      server.handler = (_, i) =>
        i === 3 ? tooMany({ "x-ratelimit-reset-after": "soon", "retry-after": "4" }) :
        i === 4 ? tooMany({ "x-ratelimit-reset-after": "0.2" }, { message: "slow", retry_after: "5", global: false }) :
        { json: guild("3") }
      assert.strictEqual(retryAfterOf(yield* Effect.flip(platform.getGuild(botToken, "3"))), 4)
      assert.strictEqual((yield* platform.getGuild(botToken, "4")).id, "3")
      assert.strictEqual(server.calls.length, 6)
      // Neither header nor body: 1 s.
      server.handler = (_, i) => (i === 6 ? tooMany({}, "not json") : { json: guild("2") })
      const slow = yield* fakeClient(server.url, { waitBudget: "500 millis" })
      const fallback = yield* Effect.flip(slow.getGuild(botToken, "2"))
      assert.strictEqual(retryAfterOf(fallback), 1)
    }))

  it.live("a bucket hash learned from X-RateLimit-Bucket is shared by the routes that return it", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((request) => {
        const id = request.path.split("/")[2]!
        // Both routes of guild 9 return the bucket "h1": the guild read spends it for 3 s.
        const headers = request.path.endsWith("/roles")
          ? { "x-ratelimit-bucket": "h1", "x-ratelimit-remaining": "4", "x-ratelimit-reset-after": "0.1" }
          : { "x-ratelimit-bucket": "h1", "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "3" }
        return { headers, json: request.path.endsWith("/roles") ? [] : guild(id) }
      })
      const platform = yield* fakeClient(server.url, { waitBudget: "1 second" })
      yield* platform.getGuild(botToken, "9")
      // The roles route does not know its hash yet: sent; its answer names "h1".
      yield* platform.getGuildRoles(botToken, "9")
      assert.strictEqual(server.calls.length, 2)
      // From now on it waits for the bucket the guild read spent (3 s, past the budget).
      const roles = yield* Effect.flip(platform.getGuildRoles(botToken, "9"))
      assert.strictEqual(roles._tag, "ServiceUnavailable")
      assert.include(messageOf(roles), "bucket")
      assert.strictEqual(retryAfterOf(roles), 3)
      const again = yield* Effect.flip(platform.getGuild(botToken, "9"))
      assert.strictEqual(again._tag, "ServiceUnavailable")
      assert.strictEqual(server.calls.length, 2)
      // Another guild has its own count of that bucket; another token too.
      yield* platform.getGuildRoles(botToken, "10")
      yield* platform.getGuild(Redacted.make("other-bot"), "9")
      assert.strictEqual(server.calls.length, 4)
    }))

  it.live("the stricter of two routes' answers holds for their shared bucket", () =>
    Effect.gen(function*() {
      // Now the guild read leaves room and the roles read (same hash) spends the bucket for 3 s.
      const server = yield* fakeDiscord((request) => {
        const roles = request.path.endsWith("/roles")
        const headers = roles
          ? { "x-ratelimit-bucket": "h2", "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "3" }
          : { "x-ratelimit-bucket": "h2", "x-ratelimit-remaining": "4", "x-ratelimit-reset-after": "0.1" }
        return { headers, json: roles ? [] : guild("9") }
      })
      const platform = yield* fakeClient(server.url, { waitBudget: "1 second" })
      yield* platform.getGuild(botToken, "9")
      yield* platform.getGuildRoles(botToken, "9")
      const again = yield* Effect.flip(platform.getGuild(botToken, "9"))
      assert.strictEqual(retryAfterOf(again), 3)
      assert.strictEqual(server.calls.length, 2)
    }))

  it.live("a route still busy past the deadline answers 503 with Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((request) =>
        new Promise((resolve) =>
          setTimeout(
            () => resolve({ json: { id: "77", type: 1, name: "n", avatar: null, channel_id: "5", guild_id: "9", application_id: null } }),
            1500
          )
        ).then((reply) => (request.method === "POST" ? reply as Reply : { json: [] }))
      )
      const platform = yield* fakeClient(server.url, { waitBudget: "500 millis" })
      // Two writes to one channel: one holds the bucket for 1.5 s, the other gives up at its deadline.
      const results = yield* Effect.all(
        [0, 1].map((i) => Effect.result(platform.createWebhook(botToken, "5", `hook ${i}`))),
        { concurrency: "unbounded" }
      )
      const failures = results.flatMap((r) => (r._tag === "Failure" ? [r.failure] : []))
      assert.strictEqual(failures.length, 1)
      assert.strictEqual(failures[0]!._tag, "ServiceUnavailable")
      assert.include(messageOf(failures[0]!), "route busy")
      assert.strictEqual(retryAfterOf(failures[0]!), 1)
      assert.strictEqual(server.calls.length, 1)
    }))
})

describe("buckets on the test clock", () => {
  it.effect("the default wait budget is 15 s; a bucket reset within it is waited for", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      const start = yield* limiter.deadline
      assert.strictEqual(start, 15_000)
      let sent = 0
      const send = Effect.sync(() => {
        sent++
        return answer(200, { "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "14" })
      })
      yield* limiter.run(target, send)
      const fiber = yield* Effect.forkChild(limiter.run(target, send))
      yield* TestClock.adjust("13 seconds")
      assert.strictEqual(sent, 1)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.strictEqual(sent, 2)
      // 16 s is past the budget: refused at once.
      const far = yield* limits()
      yield* far.run(target, Effect.succeed(answer(200, { "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "16" })))
      const error = yield* Effect.flip(far.run(target, Effect.succeed(answer(200))))
      assert.strictEqual(retryAfterOf(error), 16)
    }))

  it.effect("a reset exactly at the deadline is waited for; a wait past it is refused", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "10 seconds" })
      let sent = 0
      const send = (resetAfter: string) =>
        Effect.sync(() => (sent++, answer(200, { "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": resetAfter })))
      yield* limiter.run(target, send("10"))
      const fiber = yield* Effect.forkChild(limiter.run(target, send("10.001")))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.strictEqual(sent, 2)
      // Now reset at 20.001 s, the deadline at 20 s.
      const error = yield* Effect.flip(limiter.run(target, send("1")))
      assert.strictEqual(retryAfterOf(error), 11)
      assert.strictEqual(sent, 2)
    }))

  it.effect("a 429 answered at the deadline is given up at once; before it, retried", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "10 seconds" })
      let sent = 0
      // The platform takes the whole budget to answer 429 (retry_after 0).
      const slow = Effect.andThen(Effect.sleep("10 seconds"), Effect.sync(() => (sent++, answer(429, {}, JSON.stringify({ retry_after: 0, global: false })))))
      const fiber = yield* Effect.forkChild(Effect.flip(limiter.run(target, slow)))
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "ServiceUnavailable")
      assert.strictEqual(sent, 1)
    }))

  it.effect("a caller waiting on a busy bucket gives up at its deadline with the bucket's reset as Retry-After", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "1 second" })
      let sent = 0
      // The bucket has room (remaining 5) but resets only in 3 s.
      yield* limiter.run(target, Effect.sync(() => (sent++, answer(200, { "x-ratelimit-remaining": "5", "x-ratelimit-reset-after": "3" }))))
      const holder = yield* Effect.forkChild(limiter.run(target, Effect.andThen(Effect.sleep("5 seconds"), Effect.sync(() => (sent++, answer(200))))))
      yield* Effect.yieldNow
      const waiter = yield* Effect.forkChild(Effect.flip(limiter.run(target, Effect.sync(() => (sent++, answer(200))))))
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(waiter)
      assert.include(messageOf(error), "route busy")
      assert.strictEqual(retryAfterOf(error), 3)
      yield* TestClock.adjust("4 seconds")
      yield* Fiber.join(holder)
      assert.strictEqual(sent, 2)
    }))

  it.effect("answers without a bucket header keep their routes apart", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "1 second" })
      let sent = 0
      const limited = Effect.sync(() => (sent++, answer(429, {}, JSON.stringify({ retry_after: 3, global: false }))))
      const ok = Effect.sync(() => (sent++, answer(200)))
      yield* limiter.run({ ...target, route: "GET /a" }, ok)
      yield* Effect.flip(limiter.run({ ...target, route: "GET /a" }, limited))
      yield* limiter.run({ ...target, route: "GET /b" }, ok)
      assert.strictEqual(sent, 3)
    }))

  it.effect("idle buckets and pauses are forgotten after their reset, never before", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "10 seconds" })
      let sent = 0
      const ok = (headers: Record<string, string> = {}) => Effect.sync(() => (sent++, answer(200, headers)))
      const global429 = Effect.sync(() => (sent++, answer(429, {}, JSON.stringify({ retry_after: 200, global: true }))))
      yield* limiter.run(target, ok())
      yield* TestClock.adjust("61 seconds")
      // A bucket spent for 100 s, and a global pause of 200 s for another token.
      yield* limiter.run(target, ok({ "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "100" }))
      yield* Effect.flip(limiter.run({ ...target, identity: "bot:paused" }, global429))
      yield* TestClock.adjust("61 seconds")
      // Another call runs the clean-up; the spent bucket and the pause are still in force.
      yield* limiter.run({ ...target, major: "2" }, ok())
      assert.strictEqual(sent, 4)
      assert.strictEqual((yield* Effect.flip(limiter.run(target, ok())))._tag, "ServiceUnavailable")
      assert.strictEqual((yield* Effect.flip(limiter.run({ ...target, identity: "bot:paused", route: "GET /other" }, ok())))._tag, "ServiceUnavailable")
      assert.strictEqual(sent, 4)
      // After their reset, both send again.
      yield* TestClock.adjust("200 seconds")
      yield* limiter.run(target, ok())
      yield* limiter.run({ ...target, identity: "bot:paused" }, ok())
      assert.strictEqual(sent, 6)
    }))

  it.effect("a bucket in use is never forgotten, even when idle ones are", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ waitBudget: "10 seconds" })
      let sent = 0
      const ok = Effect.sync(() => (sent++, answer(200)))
      yield* limiter.run({ ...target, major: "0" }, ok)
      yield* TestClock.adjust("61 seconds")
      // A send that takes 100 s holds its bucket; meanwhile a clean-up runs.
      const holder = yield* Effect.forkChild(limiter.run(target, Effect.andThen(Effect.sleep("100 seconds"), ok)))
      yield* TestClock.adjust("61 seconds")
      yield* limiter.run({ ...target, major: "2" }, ok)
      // The same bucket still waits for the holder: busy past the deadline, nothing sent alongside.
      const waiter = yield* Effect.forkChild(Effect.flip(limiter.run(target, ok)))
      yield* TestClock.adjust("10 seconds")
      assert.include(messageOf(yield* Fiber.join(waiter)), "route busy")
      assert.strictEqual(sent, 2)
      yield* TestClock.adjust("30 seconds")
      yield* Fiber.join(holder)
      assert.strictEqual(sent, 3)
    }))
})
