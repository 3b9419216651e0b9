/**
 * The chat platform's rate limiter (DiscordRateLimits.ts) as issue #19 lists its behaviours, over
 * real HTTP: against the gateway's sandbox platform with injected faults (`POST /sandbox/faults`),
 * and against a scripted fake (FakeDiscord.ts) where the sandbox cannot answer the case (a `shared`
 * 429, a 429 without a JSON body, two routes of one bucket hash). Most cases give the call a short
 * wait budget, so a wait that would outlast it is answered at once with 503 + Retry-After, and
 * "was it sent?" is read from the server's call counts: no timing assertions.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Metric, Redacted } from "effect"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/DependencyHealth.ts"
import { upstreamRateLimited, upstreamRequests } from "../../src/services/Metrics.ts"
import { FetchHttpClient } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import type { DiscordChatPlatformOptions } from "../../src/layers/discord/ChatPlatformDiscord.ts"
import { ChatPlatformDiscord } from "../../src/layers/discord/ChatPlatformDiscord.ts"
import type { Answer } from "../../src/layers/discord/DiscordRateLimits.ts"
import { DiscordRateLimits } from "../../src/layers/discord/DiscordRateLimits.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { BOT1_TOKEN, BOT2_TOKEN, SEED } from "../../src/sandbox/Seed.ts"
import type { PlatformError } from "../../src/services/ChatPlatform.ts"
import { ChatPlatform } from "../../src/services/ChatPlatform.ts"
import type { Reply } from "./FakeDiscord.ts"
import { fakeDiscord, maxInWindow, user } from "./FakeDiscord.ts"

const bot1 = Redacted.make(BOT1_TOKEN)
const bot2 = Redacted.make(BOT2_TOKEN)
const { s1, s3, s4 } = SEED.ids.servers
const noCache = { guild: 0, guildList: 0, webhooks: 0, user: 0, me: 0 } as const

const build = (options: DiscordChatPlatformOptions, store = RateLimiter.layerStoreMemory) =>
  Layer.build(ChatPlatformDiscord.layerWithStore(options).pipe(Layer.provide(store), Layer.provide(FetchHttpClient.layer)))
    .pipe(Effect.map((context) => Context.get(context, ChatPlatform)))

/** `Retry-After` of a 503 (the envelope turns `retry_after` into the header), else undefined. */
const retryAfterOf = (error: PlatformError): unknown =>
  error._tag === "ServiceUnavailable" ? error.problems[0]?.additionalProperties?.["retry_after"] : undefined
const messageOf = (error: PlatformError): string => error._tag === "PlatformRejected" ? error.message : error.problems[0]?.message ?? ""
const statusOf = (error: PlatformError): number =>
  error._tag === "PlatformRejected" ? error.status : error._tag === "ServiceUnavailable" ? 503 : 408

// ---------------------------------------------------------------------------------------------------
// Against the sandbox platform.

const sandboxClient = (options: Partial<DiscordChatPlatformOptions> = {}) =>
  Effect.flatMap(SandboxServer, (sandbox) =>
    build({
      baseUrl: sandbox.discordApiUrl,
      clientId: SEED.oauth.clientId,
      clientSecret: Redacted.make(SEED.oauth.clientSecret),
      cacheTtl: noCache,
      // Fresh keys per client: the invalid-request budget is not shared between tests.
      keyPrefix: `test:${Math.random()}:`,
      ...options
    }))

const control = (path: string, init?: RequestInit) =>
  Effect.flatMap(SandboxServer, (sandbox) =>
    Effect.promise(async () => {
      const response = await fetch(`${sandbox.url}${path}`, init)
      return response.headers.get("content-type")?.includes("json") ? await response.json() as unknown : undefined
    }))

const fault = (body: Record<string, unknown>) =>
  control("/sandbox/faults", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
const clearFaults = control("/sandbox/faults", { method: "DELETE" })
const calls = Effect.map(control("/sandbox/stats"), (s) => (s as { readonly calls: Record<string, number> }).calls)
/** Calls the sandbox received per route name since `before`. */
const sentSince = (before: Record<string, number>) =>
  Effect.map(calls, (now) => (route: string) => (now[route] ?? 0) - (before[route] ?? 0))

const GUILD = "GET /guilds/{id}"
const ROLES = "GET /guilds/{id}/roles"
const WEBHOOKS = "GET /channels/{id}/webhooks"
const guildPath = (id: string) => `/sandbox/discord/api/v10/guilds/${id}`

layer(SandboxServer.layer(), { excludeTestServices: true })("rate limits against the sandbox platform", (it) => {
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

// ---------------------------------------------------------------------------------------------------
// Against a scripted fake, for answers the sandbox does not give.

const fakeClient = (url: string, options: Partial<DiscordChatPlatformOptions> = {}, store?: Layer.Layer<RateLimiter.RateLimiterStore>) =>
  build({ baseUrl: url, clientId: "1", clientSecret: Redacted.make("s"), cacheTtl: noCache, ...options }, store)

const guild = (id: string) => ({ id, name: `Guild ${id}`, icon: null, owner_id: "1" })
const tooMany = (headers: Record<string, string>, json?: unknown): Reply => ({ status: 429, headers, json })
const botToken = Redacted.make("bot-token-rl")

describe("rate limits against a scripted platform", () => {
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
      const platform = yield* fakeClient(server.url, { globalPerSecond: 5, invalidRequestLimit: 2 }, failing)
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

// ---------------------------------------------------------------------------------------------------
// The limiter alone, on the test clock: the defaults, where HTTP would be too slow.

const limits = (options: Parameters<typeof DiscordRateLimits.layer>[0] = {}) =>
  Layer.build(DiscordRateLimits.layer(options).pipe(Layer.provide(RateLimiter.layerStoreMemory)))
    .pipe(Effect.map((context) => Context.get(context, DiscordRateLimits)))

const target = { identity: "bot:x", route: "GET /guilds/:guild", major: "1" }
const answer = (status: number, headers: Record<string, string> = {}, body = ""): Answer => ({ status, headers, body })

describe("DiscordRateLimits on the test clock", () => {
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

  it.effect("the global budget by default: a burst of 10, then about 33 a second", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      let sent = 0
      const send = Effect.sync(() => {
        sent++
        return answer(200)
      })
      const fibers = yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) => Effect.forkChild(limiter.run({ ...target, major: String(i) }, send, 1_000_000)),
        { concurrency: 1 }
      )
      yield* Effect.yieldNow
      assert.strictEqual(sent, 10)
      yield* TestClock.adjust("1200 millis")
      assert.strictEqual(sent, 50)
      yield* TestClock.adjust("1200 millis")
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      assert.strictEqual(sent, 60)
    }))

  it.effect("two tokens have their own global budget", () =>
    Effect.gen(function*() {
      const limiter = yield* limits()
      const sent: Array<string> = []
      const send = (who: string) => Effect.sync(() => (sent.push(who), answer(200)))
      for (const who of ["bot:a", "bot:b"]) {
        for (let i = 0; i < 12; i++) {
          yield* Effect.forkChild(limiter.run({ identity: who, route: "GET /x", major: String(i) }, send(who), 1_000_000))
        }
      }
      yield* Effect.yieldNow
      assert.deepStrictEqual([sent.filter((w) => w === "bot:a").length, sent.filter((w) => w === "bot:b").length], [10, 10])
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

  it.effect("the default key prefix is discord: (instances sharing a store share the invalid budget)", () =>
    Effect.gen(function*() {
      const store = yield* Layer.build(RateLimiter.layerStoreMemory)
      const on = (options: Parameters<typeof DiscordRateLimits.layer>[0]) =>
        Layer.build(DiscordRateLimits.layer(options).pipe(Layer.provide(Layer.succeedContext(store))))
          .pipe(Effect.map((context) => Context.get(context, DiscordRateLimits)))
      const one = yield* on({ invalidRequestLimit: 2 })
      const two = yield* on({ invalidRequestLimit: 2, keyPrefix: "discord:" })
      const other = yield* on({ invalidRequestLimit: 2, keyPrefix: "elsewhere:" })
      yield* one.run(target, Effect.succeed(answer(403)))
      assert.strictEqual((yield* Effect.flip(two.run(target, Effect.succeed(answer(200)))))._tag, "ServiceUnavailable")
      assert.strictEqual((yield* other.run(target, Effect.succeed(answer(200)))).status, 200)
    }))

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
      const health = makeDependencyHealth()
      const limiter = yield* Layer.build(DiscordRateLimits.layer({ invalidRequestLimit: 2 }).pipe(Layer.provide(flaky)))
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
