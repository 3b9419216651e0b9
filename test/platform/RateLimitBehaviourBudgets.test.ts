/**
 * The chat platform's rate limiter (DiscordRateLimits.ts), issue #19: the global limit (a token's
 * requests per second, and a global 429's pause) and the invalid-request budget (401, 403 and
 * non-shared 429 answers). Over real HTTP against the sandbox platform with injected faults, against a
 * scripted fake (DiscordFixtures.ts) for answers the sandbox does not give (a `shared` 429, a bare global
 * 429), and the limiter alone on the test clock for the defaults. "Was it sent?" is read from the
 * server's call counts: no timing assertions. Shared setup: RateLimitFixtures.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Fiber, Layer, Redacted } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import { DiscordGlobalBudget } from "../../src/layers/platform/discord/DiscordGlobalBudget.ts"
import { DiscordRateLimits } from "../../src/layers/platform/discord/DiscordRateLimits.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SEED } from "../../src/sandbox/Seed.ts"
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
  limits,
  messageOf,
  retryAfterOf,
  ROLES,
  sandboxClient,
  sentSince,
  statusOf,
  target,
  tooMany
} from "./RateLimitFixtures.ts"

const { s1, s3 } = SEED.ids.servers

layer(SandboxServer.layer(), { excludeTestServices: true })("global limit and invalid-request budget against the sandbox platform", (it) => {
  it.effect("a global 429 stops every route of that token, and only that token", () =>
    Effect.gen(function*() {
      yield* clearFaults
      const platform = yield* sandboxClient({ waitBudget: "1 second" })
      const before = yield* calls
      yield* fault({ route: GUILD, kind: "429", global: true, retry_after: 3 })
      const first = yield* Effect.flip(platform.getGuild(bot2, s3))
      // The pause (3 s) outlasts the budget (1 s): 503 at once, with the platform's wait.
      assert.strictEqual(first._tag, "ServiceUnavailable")
      assert.strictEqual(retryAfterOf(first), 3)
      // Another route of the same token is not sent during the pause.
      const other = yield* Effect.flip(platform.getGuildRoles(bot2, s3))
      assert.strictEqual(other._tag, "ServiceUnavailable")
      assert.isAtLeast(retryAfterOf(other) as number, 1)
      // Another token is not paused.
      const roles = yield* platform.getGuildRoles(bot1, s1)
      assert.isAbove(roles.length, 0)
      const sent = yield* sentSince(before)
      assert.strictEqual(sent(GUILD), 1)
      assert.strictEqual(sent(ROLES), 1)
    }))

  it.effect("the invalid-request budget counts 401, 403 and 429, not 2xx nor 404, and then sends nothing", () =>
    Effect.gen(function*() {
      yield* clearFaults
      // At most 8 in 10 minutes: a bucket of 4.
      const platform = yield* sandboxClient({ invalidRequestLimit: 8 })
      const before = yield* calls
      for (let i = 0; i < 4; i++) {
        assert.strictEqual((yield* platform.getGuild(bot2, s3)).id, s3)
        const missing = yield* Effect.flip(platform.getGuild(bot2, "399999999999999999"))
        assert.strictEqual(statusOf(missing), 404)
      }
      yield* fault({ route: GUILD, kind: "401" })
      assert.strictEqual(statusOf(yield* Effect.flip(platform.getGuild(bot2, s3))), 401)
      yield* fault({ route: GUILD, kind: "403" })
      assert.strictEqual(statusOf(yield* Effect.flip(platform.getGuild(bot2, s3))), 403)
      // A 429 is waited out (retry_after 0) and the retry answers.
      yield* fault({ route: GUILD, kind: "429", retry_after: 0 })
      assert.strictEqual((yield* platform.getGuild(bot2, s3)).id, s3)
      // Still sending after three.
      yield* fault({ route: ROLES, kind: "401" })
      assert.strictEqual(statusOf(yield* Effect.flip(platform.getGuildRoles(bot2, s3))), 401)
      assert.strictEqual((yield* sentSince(before))(GUILD), 8 + 2 + 2)
      // Four invalid answers: the next call is refused here, 503 with Retry-After, and not sent.
      const refused = yield* Effect.flip(platform.getGuildRoles(bot2, s3))
      assert.strictEqual(refused._tag, "ServiceUnavailable")
      assert.isAtLeast(retryAfterOf(refused) as number, 60)
      assert.include(messageOf(refused), "refused requests")
      const sent = yield* sentSince(before)
      assert.strictEqual(sent(ROLES), 1)
      assert.strictEqual(sent(GUILD), 12)
    }))
})

describe("global limit and invalid-request budget against a scripted platform", () => {
  it.live("a shared-scope 429 is not an invalid request; a user-scope 429 is", () =>
    Effect.gen(function*() {
      let scope = "shared"
      let left = 3
      const server = yield* fakeDiscord(() =>
        left-- > 0
          ? tooMany({ "x-ratelimit-scope": scope }, { message: "slow", retry_after: 0, global: false })
          : { json: user("5") }
      )
      // A budget of two invalid answers.
      const platform = yield* fakeClient(server.url, { invalidRequestLimit: 4 })
      assert.strictEqual((yield* platform.getBotUser(botToken)).id, "5")
      assert.strictEqual(server.calls.length, 4)
      // Still sending: one user-scope 429, waited out.
      scope = "user"
      left = 1
      assert.strictEqual((yield* platform.getBotUser(botToken)).id, "5")
      assert.strictEqual(server.calls.length, 6)
      // The second spends the budget: its retry is not sent, nor anything after it.
      left = 1
      const spent = yield* Effect.flip(platform.getBotUser(botToken))
      assert.include(messageOf(spent), "refused requests")
      assert.strictEqual(server.calls.length, 7)
      assert.strictEqual((yield* Effect.flip(platform.getGuild(botToken, "1")))._tag, "ServiceUnavailable")
      assert.strictEqual(server.calls.length, 7)
    }))

  it.live("a bare global 429 (headers only) pauses the token's other routes", () =>
    Effect.gen(function*() {
      for (const header of [{ "x-ratelimit-scope": "global" }, { "x-ratelimit-global": "true" }]) {
        const server = yield* fakeDiscord((_, i) => (i === 0 ? tooMany({ ...header, "retry-after": "3" }) : { json: guild("1") }))
        const platform = yield* fakeClient(server.url, { waitBudget: "1 second" })
        assert.strictEqual(retryAfterOf(yield* Effect.flip(platform.getGuild(botToken, "1"))), 3)
        const other = yield* Effect.flip(platform.getGuildRoles(botToken, "1"))
        assert.strictEqual(other._tag, "ServiceUnavailable")
        assert.include(messageOf(other), "global limit")
        assert.strictEqual(server.calls.length, 1)
        // Another token is not paused.
        assert.strictEqual((yield* platform.getGuild(Redacted.make("other-bot"), "1")).id, "1")
        assert.strictEqual(server.calls.length, 2)
      }
    }))

  it.live("a body's global: true wins over a per-route scope header", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((_, i) =>
        i === 0
          ? tooMany({ "x-ratelimit-scope": "user" }, { message: "global", retry_after: 3, global: true })
          : { json: guild("1") }
      )
      const platform = yield* fakeClient(server.url, { waitBudget: "1 second" })
      yield* Effect.flip(platform.getGuild(botToken, "1"))
      const other = yield* Effect.flip(platform.getGuildRoles(botToken, "1"))
      assert.include(messageOf(other), "global limit")
      assert.strictEqual(server.calls.length, 1)
    }))
})

describe("global limit and invalid-request budget on the test clock", () => {
  it.effect("by default at most 2,500 invalid answers, then nothing is sent for a while (under 10,000 per 10 minutes)", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      let sent = 0
      const send = Effect.sync(() => {
        sent++
        return answer(401)
      })
      // Distinct tokens and buckets: only the invalid-request budget applies.
      const each = (i: number) => ({ ...target, identity: `bot:${i}` })
      for (let i = 0; i < 2500; i++) yield* limiter.run(each(i), send)
      const refused = yield* Effect.flip(limiter.run(each(-1), send))
      assert.strictEqual(sent, 2500)
      assert.strictEqual(refused._tag, "ServiceUnavailable")
      // The budget refills by 2,500 over 10 minutes: 5,000 at most in any 10 minutes.
      yield* TestClock.adjust("5 minutes")
      for (let i = 0; i < 1300; i++) yield* Effect.ignore(limiter.run(each(i), send))
      assert.strictEqual(sent, 3750)
    }))

  it.effect("the global budget by default: 50 at once, then the next 50 1.2 s after them (never over 50 in any 1.2 s)", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      let sent = 0
      const send = Effect.sync(() => {
        sent++
        return answer(200)
      })
      const fibers = yield* Effect.forEach(
        Array.from({ length: 110 }, (_, i) => i),
        (i) => Effect.forkChild(limiter.run({ ...target, major: String(i) }, send, 1_000_000)),
        { concurrency: 1 }
      )
      yield* Effect.yieldNow
      assert.strictEqual(sent, 50)
      yield* TestClock.adjust("1199 millis")
      assert.strictEqual(sent, 50)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(sent, 100)
      // Two sends later: the 51st's slot is 1.2 s after the first's, not after the 50th's.
      yield* TestClock.adjust("1200 millis")
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      assert.strictEqual(sent, 110)
    }))

  it.effect("a send waits only for the sends of the last 1.2 s, however many went before", () =>
    Effect.gen(function*() {
      const limiter = yield* limits({ globalPerSecond: 2 })
      const at: Array<number> = []
      const send = Effect.map(Clock.currentTimeMillis, (now) => (at.push(now), answer(200)))
      const start = yield* Clock.currentTimeMillis
      const go = (major: string) => Effect.forkChild(limiter.run({ ...target, major }, send, 1_000_000))
      // Two at once, the third 1.2 s after the first.
      const early = yield* Effect.forEach(["1", "2", "3"], go)
      yield* TestClock.adjust("3 seconds")
      yield* Effect.forEach(early, Fiber.join, { discard: true })
      // At 3 s only the third is within the last 1.2 s: two go at once, the next 1.2 s after them.
      const late = yield* Effect.forEach(["4", "5", "6"], go)
      yield* TestClock.adjust("1200 millis")
      yield* Effect.forEach(late, Fiber.join, { discard: true })
      assert.deepStrictEqual(at.map((t) => t - start), [0, 0, 1200, 3000, 3000, 4200])
    }))

  it.effect("two tokens have their own global budget", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      const sent: Array<string> = []
      const send = (who: string) => Effect.sync(() => (sent.push(who), answer(200)))
      for (const who of ["bot:a", "bot:b"]) {
        for (let i = 0; i < 30; i++) {
          yield* Effect.forkChild(limiter.run({ identity: who, route: "GET /x", major: String(i) }, send(who), 1_000_000))
        }
      }
      yield* Effect.yieldNow
      assert.deepStrictEqual([sent.filter((w) => w === "bot:a").length, sent.filter((w) => w === "bot:b").length], [30, 30])
    }))

  it.effect("the default key prefix is discord: (instances sharing a store share the invalid budget)", () =>
    Effect.gen(function*() {
      const store = yield* Layer.build(RateLimiter.layerStoreMemory)
      const on = (options: Parameters<typeof DiscordRateLimits.layer>[0]) =>
        Layer.build(DiscordRateLimits.layer(options).pipe(Layer.provide([Layer.succeedContext(store), DiscordGlobalBudget.layerMemory])))
          .pipe(Effect.map((context) => Context.get(context, DiscordRateLimits)))
      const one = yield* on({ invalidRequestLimit: 2 })
      const two = yield* on({ invalidRequestLimit: 2, keyPrefix: "discord:" })
      const other = yield* on({ invalidRequestLimit: 2, keyPrefix: "elsewhere:" })
      yield* one.run(target, Effect.succeed(answer(403)))
      assert.strictEqual((yield* Effect.flip(two.run(target, Effect.succeed(answer(200)))))._tag, "ServiceUnavailable")
      assert.strictEqual((yield* other.run(target, Effect.succeed(answer(200)))).status, 200)
    }))
})
