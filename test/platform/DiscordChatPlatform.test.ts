/**
 * The live chat-platform client against a scripted fake Discord over real HTTP: coalescing, caching,
 * rate-limit buckets, 429s, the global budget, timeouts, 5xx retries, refusals and OAuth2 bodies.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import type { DiscordChatPlatformOptions } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import type { Handler, Received } from "./DiscordFixtures.ts"
import { countSince, fakeDiscord, guildSummary, user } from "./DiscordFixtures.ts"
import { CapturedLogs, logged } from "../utils/CapturedLogs.ts"

const secret = Redacted.make("client-secret")
const tokenA = Redacted.make("user-token-a")
const botToken = Redacted.make("bot-token-1")

const client = (url: string, options: Partial<DiscordChatPlatformOptions> = {}) =>
  Layer.build(
    ChatPlatformDiscord.layer({ baseUrl: url, clientId: "1234", clientSecret: secret, ...options }).pipe(
      Layer.provide(FetchHttpClient.layer)
    )
  ).pipe(Effect.map((context) => Context.get(context, ChatPlatform)))

/** A server-side fixed-window bucket per key: answers the X-RateLimit headers, 429 when exceeded. */
const bucketing = (limit: number, windowMs: number, keyOf: (r: Received) => string, ok: (r: Received) => unknown) => {
  const windows = new Map<string, { start: number; count: number }>()
  const handler: Handler = (request) => {
    const key = keyOf(request)
    const now = Date.now()
    let w = windows.get(key)
    if (w === undefined || now - w.start >= windowMs) {
      w = { start: now, count: 0 }
      windows.set(key, w)
    }
    w.count++
    const resetAfter = ((w.start + windowMs - now) / 1000).toFixed(3)
    const headers = {
      "x-ratelimit-bucket": "bucket-" + request.path.split("/")[1],
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(Math.max(0, limit - w.count)),
      "x-ratelimit-reset-after": resetAfter
    }
    if (w.count > limit) {
      return { status: 429, headers, json: { message: "You are being rate limited.", retry_after: Number(resetAfter), global: false } }
    }
    return { status: 200, headers, json: ok(request) }
  }
  return handler
}

// The 429s, outages and refusals these tests provoke are logged as warnings: kept, not printed.
layer(CapturedLogs.layer, { excludeTestServices: true })("ChatPlatformDiscord (live client)", (it) => {
  it.effect("100 concurrent identical reads make one upstream call; the list is cached", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => new Promise((r) => setTimeout(() => r({ json: [guildSummary("1")] }), 50)))
      const platform = yield* client(server.url)
      const results = yield* Effect.all(
        Array.from({ length: 100 }, () => platform.getCurrentUserGuilds(tokenA)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(server.calls.length, 1)
      assert.strictEqual(results.length, 100)
      assert.deepStrictEqual(results[99], [{ id: "1", name: "Guild 1", icon: null, owner: false, permissions: "32" }])
      yield* platform.getCurrentUserGuilds(tokenA)
      assert.strictEqual(server.calls.length, 1)
      const call = server.calls[0]!
      assert.strictEqual(call.path, "/users/@me/guilds")
      assert.strictEqual(call.headers["authorization"], "Bearer user-token-a")
      assert.match(call.headers["user-agent"] ?? "", /^DiscordBot \(https:\/\/github\.com\/.+, 0\.1\.0\)$/)
    }))

  it.effect("the bot's server list is kept; `fresh` asks the platform again and keeps the new answer", () =>
    Effect.gen(function*() {
      let permissions = "65536"
      const server = yield* fakeDiscord(() => ({ json: [{ ...guildSummary("1"), permissions }] }))
      const platform = yield* client(server.url)
      const bits = (list: ReadonlyArray<{ readonly permissions: string }>) => list[0]!.permissions
      assert.strictEqual(bits(yield* platform.getBotGuilds(botToken)), "65536")
      permissions = "1024"
      assert.strictEqual(bits(yield* platform.getBotGuilds(botToken)), "65536", "the kept copy")
      assert.strictEqual(server.calls.length, 1)
      assert.strictEqual(bits(yield* platform.getBotGuilds(botToken, { fresh: true })), "1024")
      assert.strictEqual(bits(yield* platform.getBotGuilds(botToken)), "1024", "the fresh answer is kept")
      assert.strictEqual(server.calls.length, 2)
    }))

  it.effect("a 429 with retry_after is waited out and the answer still arrives", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((_, i) =>
        i === 0
          ? { status: 429, headers: { "x-ratelimit-scope": "user" }, json: { message: "slow", retry_after: 0.4, global: false } }
          : { json: user("7") }
      )
      const platform = yield* client(server.url)
      const started = Date.now()
      const me = yield* platform.getCurrentUser(tokenA)
      assert.strictEqual(me.id, "7")
      assert.strictEqual(server.calls.length, 2)
      assert.isAtLeast(server.calls[1]!.at - server.calls[0]!.at, 390)
      assert.isAtLeast(Date.now() - started, 390)
      assert.isNotEmpty(yield* logged("Chat platform answered 429"), "the 429 is logged")
    }))

  it.effect("a global 429 pauses the token, then retries", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((_, i) =>
        i === 0
          ? { status: 429, headers: { "x-ratelimit-global": "true", "x-ratelimit-scope": "global" }, json: { message: "global", retry_after: 0.3, global: true } }
          : { json: user("8") }
      )
      const platform = yield* client(server.url)
      const me = yield* platform.getBotUser(botToken)
      assert.strictEqual(me.id, "8")
      assert.strictEqual(server.calls[0]!.headers["authorization"], "Bot bot-token-1")
      assert.isAtLeast(server.calls[1]!.at - server.calls[0]!.at, 290)
    }))

  it.effect("429s past the wait budget become ServiceUnavailable with a retry-after", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => ({ status: 429, json: { message: "slow", retry_after: 30, global: false } }))
      // A budget of 10 s against a 30 s wait: failing at once takes well under 5 s even on a slow
      // machine, while waiting out the budget before failing would take 10 s.
      const platform = yield* client(server.url, { waitBudget: "10 seconds" })
      const started = Date.now()
      const error = yield* Effect.flip(platform.getGuild(botToken, "55"))
      assert.strictEqual(error._tag, "ServiceUnavailable")
      assert.deepStrictEqual(error._tag === "ServiceUnavailable" ? error.problems[0]?.additionalProperties : undefined, { retry_after: 30 })
      assert.strictEqual(server.calls.length, 1)
      assert.isBelow(Date.now() - started, 5000)
    }))

  it.effect("a bucket at remaining 0 delays the next call instead of drawing a 429", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(bucketing(2, 1000, (r) => r.path, () => ({ id: "9", name: "G", icon: null, owner_id: "1" })))
      const platform = yield* client(server.url, { cacheTtl: { guild: 0 } })
      let started = Date.now()
      // One caller, five calls in a row: 2 per second, so the 3rd and 5th wait for a reset.
      for (let i = 0; i < 5; i++) yield* platform.getGuild(botToken, "9")
      assert.strictEqual(server.calls.length, 5)
      assert.isAtLeast(Date.now() - started, 1950)
      // Three fibers calling the same route concurrently (in-flight calls are shared), four times each.
      yield* Effect.sleep("1 second")
      started = Date.now()
      yield* Effect.all(
        Array.from({ length: 3 }, () =>
          Effect.forEach(Array.from({ length: 4 }), () => platform.getGuild(botToken, "10"), { discard: true })),
        { concurrency: "unbounded", discard: true }
      )
      assert.deepStrictEqual(server.statuses.filter((s) => s === 429), [])
      const calls = server.calls.length - 5
      yield* Effect.log(`bucket: ${calls} upstream calls in ${Date.now() - started} ms`)
      assert.isAtLeast(calls, 4)
      assert.isAtLeast(Date.now() - started, (Math.ceil(calls / 2) - 1) * 1000 - 50)
    }))

  it.effect("a burst of 500 requests across 20 user tokens draws no 429", () =>
    Effect.gen(function*() {
      const globalTimes = new Map<string, Array<number>>()
      const routes = bucketing(3, 1000, (r) => `${r.headers["authorization"]} ${r.path}`, (r) =>
        r.path === "/users/@me" ? user("1") : [guildSummary("2")])
      const server = yield* fakeDiscord((request, i) => {
        // Discord's global limit: 50 per second per token.
        const times = globalTimes.get(request.headers["authorization"]!) ?? []
        times.push(request.at)
        globalTimes.set(request.headers["authorization"]!, times)
        if (countSince(times, request.at, 1000) > 50) return { status: 429, json: { message: "global", retry_after: 1, global: true } }
        return routes(request, i)
      })
      const platform = yield* client(server.url, { cacheTtl: { guildList: 0 } })
      const tokens = Array.from({ length: 20 }, (_, i) => Redacted.make(`burst-token-${i}`))
      const started = Date.now()
      const results = yield* Effect.all(
        Array.from({ length: 500 }, (_, i) => {
          const token = tokens[i % 20]!
          return i % 2 === 0 ? platform.getCurrentUser(token) : platform.getCurrentUserGuilds(token)
        }),
        { concurrency: 50 }
      )
      assert.strictEqual(results.length, 500)
      assert.deepStrictEqual(server.statuses.filter((s) => s === 429), [])
      assert.isAtLeast(server.calls.length, 40)
      yield* Effect.log(`burst: ${server.calls.length} upstream calls in ${Date.now() - started} ms`)
    }))

  it.effect("a time-out becomes RequestTimeout and is not retried", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => "hang")
      const platform = yield* client(server.url, { timeout: "300 millis" })
      const error = yield* Effect.flip(platform.getGuildChannels(botToken, "1"))
      assert.strictEqual(error._tag, "RequestTimeout")
      assert.strictEqual(server.calls.length, 1)
    }))

  it.effect("repeated 5xx on a read: 3 attempts, then ServiceUnavailable; a write is tried once", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => ({ status: 502, json: { message: "bad gateway" } }))
      const platform = yield* client(server.url, { retryBaseDelay: "20 millis" })
      const error = yield* Effect.flip(platform.getGuildRoles(botToken, "1"))
      assert.strictEqual(error._tag, "ServiceUnavailable")
      assert.strictEqual(server.calls.length, 3)
      const writeError = yield* Effect.flip(platform.createWebhook(botToken, "5", "feeds"))
      assert.strictEqual(writeError._tag, "ServiceUnavailable")
      assert.strictEqual(server.calls.length, 4)
    }))

  it.effect("an unreachable platform becomes ServiceUnavailable after retries", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => "destroy")
      const platform = yield* client(server.url, { retryBaseDelay: "20 millis" })
      const error = yield* Effect.flip(platform.getBotGuilds(botToken))
      assert.strictEqual(error._tag, "ServiceUnavailable")
      assert.strictEqual(server.calls.length, 3)
      assert.isNotEmpty(yield* logged("Chat platform unreachable"), "the outage is logged")
    }))

  it.effect("401, 403 and 404 are PlatformRejected and never retried", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((r) =>
        r.path.startsWith("/users")
          ? { status: 401, json: { message: "401: Unauthorized", code: 0 } }
          : r.path.endsWith("/roles")
          ? { status: 403, json: { message: "Missing Access", code: 50001 } }
          : { status: 404, json: { message: "Unknown Guild", code: 10004 } }
      )
      const platform = yield* client(server.url)
      const e401 = yield* Effect.flip(platform.getCurrentUser(tokenA))
      assert.strictEqual(server.calls.length, 1)
      assert.deepStrictEqual([e401._tag, e401._tag === "PlatformRejected" ? e401.status : 0], ["PlatformRejected", 401])
      const e403 = yield* Effect.flip(platform.getGuildRoles(botToken, "3"))
      assert.strictEqual(server.calls.length, 2)
      assert.strictEqual(e403._tag === "PlatformRejected" ? e403.code : undefined, 50001)
      const e404 = yield* Effect.flip(platform.getGuild(botToken, "3"))
      assert.strictEqual(server.calls.length, 3)
      assert.strictEqual(e404._tag === "PlatformRejected" ? e404.message : "", "Unknown Guild")
      // Failures are not cached.
      yield* Effect.flip(platform.getGuild(botToken, "3"))
      assert.strictEqual(server.calls.length, 4)
    }))

  it.effect("invalid answers are counted: past the budget nothing more is sent", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => ({ status: 401, json: { message: "401: Unauthorized", code: 0 } }))
      // At most 4 in any 10 minutes: a bucket of 2 refilled by 2 per 10 minutes.
      const platform = yield* client(server.url, { invalidRequestLimit: 4 })
      for (const i of [1, 2]) {
        const e = yield* Effect.flip(platform.getCurrentUser(Redacted.make(`bad-${i}`)))
        assert.strictEqual(e._tag, "PlatformRejected")
      }
      const refused = yield* Effect.flip(platform.getCurrentUser(Redacted.make("bad-3")))
      assert.strictEqual(refused._tag, "ServiceUnavailable")
      assert.strictEqual(server.calls.length, 2)
    }))

  it.effect("OAuth2 exchange, refresh and revoke send form bodies with Basic auth", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord((r) =>
        r.path === "/oauth2/token"
          ? { json: { access_token: "at-1", token_type: "Bearer", expires_in: 604800, refresh_token: "rt-1", scope: "identify guilds" } }
          : { json: {} }
      )
      const platform = yield* client(server.url)
      const tokens = yield* platform.exchangeCode({ code: "the-code", codeVerifier: "verifier", redirectUri: "http://127.0.0.1:9/cb" })
      assert.strictEqual(Redacted.value(tokens.access_token), "at-1")
      assert.strictEqual(Redacted.value(tokens.refresh_token), "rt-1")
      assert.strictEqual(tokens.expires_in, 604800)
      assert.notInclude(String(tokens.access_token), "at-1")
      yield* platform.refreshToken(Redacted.make("rt-1"))
      yield* platform.revokeToken(Redacted.make("at-1"))
      const basic = `Basic ${Buffer.from("1234:client-secret").toString("base64")}`
      for (const call of server.calls) {
        assert.strictEqual(call.method, "POST")
        assert.strictEqual(call.headers["authorization"], basic)
        assert.match(call.headers["content-type"] ?? "", /^application\/x-www-form-urlencoded/)
      }
      const bodies = server.calls.map((c) => Object.fromEntries(new URLSearchParams(c.body)))
      assert.deepStrictEqual(bodies[0], {
        grant_type: "authorization_code",
        code: "the-code",
        redirect_uri: "http://127.0.0.1:9/cb",
        code_verifier: "verifier"
      })
      assert.deepStrictEqual(bodies[1], { grant_type: "refresh_token", refresh_token: "rt-1" })
      assert.deepStrictEqual(bodies[2], { token: "at-1", token_type_hint: "access_token" })
      assert.deepStrictEqual(server.calls.map((c) => c.path), ["/oauth2/token", "/oauth2/token", "/oauth2/token/revoke"])
    }))

  it.effect("a refused OAuth code is PlatformRejected 400 with the OAuth error", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => ({ status: 400, json: { error: "invalid_grant", error_description: "Invalid \"code\" in request." } }))
      const platform = yield* client(server.url)
      const error = yield* Effect.flip(platform.exchangeCode({ code: "x", codeVerifier: "y", redirectUri: "http://127.0.0.1/cb" }))
      assert.strictEqual(error._tag, "PlatformRejected")
      assert.strictEqual(error._tag === "PlatformRejected" ? error.status : 0, 400)
      assert.strictEqual(server.calls.length, 1)
    }))

  it.effect("authorizeUrl carries PKCE S256, scopes and state", () =>
    Effect.gen(function*() {
      const platform = yield* client("http://127.0.0.1:1", { authorizeUrl: "https://example.test/oauth2/authorize" })
      const url = new URL(platform.authorizeUrl({ state: "st", codeChallenge: "cc", redirectUri: "https://gw.test/auth/idp/callback" }))
      assert.strictEqual(url.origin + url.pathname, "https://example.test/oauth2/authorize")
      assert.deepStrictEqual(Object.fromEntries(url.searchParams), {
        response_type: "code",
        client_id: "1234",
        scope: "identify guilds",
        redirect_uri: "https://gw.test/auth/idp/callback",
        state: "st",
        code_challenge: "cc",
        code_challenge_method: "S256"
      })
      assert.deepStrictEqual(SandboxMode.platformUrls("http://127.0.0.1:3000/"), {
        baseUrl: "http://127.0.0.1:3000/sandbox/discord/api/v10",
        authorizeUrl: "http://127.0.0.1:3000/sandbox/discord/oauth2/authorize"
      })
    }))

  it.effect("webhooks: the token is Redacted, creating one invalidates the channel's list", () =>
    Effect.gen(function*() {
      const hooks: Array<unknown> = []
      const server = yield* fakeDiscord((r) => {
        const hook = { id: String(100 + hooks.length), type: 1, name: "feeds", avatar: null, channel_id: "5", guild_id: "9", application_id: null, token: "secret-hook-token", user: { id: "1" } }
        if (r.method === "POST") {
          hooks.push(hook)
          return { json: hook }
        }
        if (r.path.startsWith("/webhooks/")) return { json: { ...hooks[0] as object } }
        return { json: hooks }
      })
      const platform = yield* client(server.url)
      assert.deepStrictEqual(yield* platform.getChannelWebhooks(botToken, "5"), [])
      yield* platform.getChannelWebhooks(botToken, "5")
      assert.strictEqual(server.calls.length, 1)
      const created = yield* platform.createWebhook(botToken, "5", "feeds")
      assert.strictEqual(JSON.parse(server.calls[1]!.body).name, "feeds")
      assert.strictEqual(created.token === undefined ? "" : Redacted.value(created.token), "secret-hook-token")
      assert.notInclude(JSON.stringify(created), "secret-hook-token")
      const list = yield* platform.getChannelWebhooks(botToken, "5")
      assert.strictEqual(list.length, 1)
      assert.strictEqual(server.calls.length, 3)
      const got = yield* platform.getWebhookWithToken("100", Redacted.make("secret-hook-token"))
      assert.strictEqual(got.id, "100")
      assert.strictEqual(server.calls[3]!.path, "/webhooks/100/secret-hook-token")
      assert.strictEqual(server.calls[3]!.headers["authorization"], undefined)
    }))

  it.effect("an answer in an unexpected shape is ServiceUnavailable, not a crash", () =>
    Effect.gen(function*() {
      const server = yield* fakeDiscord(() => ({ json: { nope: true } }))
      const platform = yield* client(server.url)
      const error = yield* Effect.flip(platform.getGuild(botToken, "1"))
      assert.strictEqual(error._tag, "ServiceUnavailable")
    }))
})
