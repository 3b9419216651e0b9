/**
 * The live chat-platform client against the gateway's sandbox Discord (src/sandbox) over real HTTP:
 * the sign-in flow with PKCE, every read and write the gateway uses, the sandbox's rate-limit
 * headers, and injected faults (`POST /sandbox/faults`) checked through `GET /sandbox/stats`.
 */
import { createHash, randomBytes } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import type { DiscordChatPlatformOptions } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { ALICE_ID, BOT1_ID, BOT1_TOKEN, BOT2_TOKEN, CHANNEL_INDEX, channelId, S1_ID, SEED } from "../../src/sandbox/Seed.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { CapturedLogs } from "../utils/CapturedLogs.ts"

const bot1 = Redacted.make(BOT1_TOKEN)
const bot2 = Redacted.make(BOT2_TOKEN)

const client = (options: Partial<DiscordChatPlatformOptions> = {}) =>
  Effect.gen(function*() {
    const sandbox = yield* SandboxServer
    const context = yield* Layer.build(
      ChatPlatformDiscord.layer({
        baseUrl: sandbox.discordApiUrl,
        authorizeUrl: sandbox.authorizeUrl,
        clientId: SEED.oauth.clientId,
        clientSecret: Redacted.make(SEED.oauth.clientSecret),
        ...options
      }).pipe(Layer.provide(FetchHttpClient.layer))
    )
    return Context.get(context, ChatPlatform)
  })

const control = (path: string, init?: RequestInit) =>
  Effect.gen(function*() {
    const sandbox = yield* SandboxServer
    return yield* Effect.promise(async () => {
      const response = await fetch(`${sandbox.url}${path}`, init)
      return response.headers.get("content-type")?.includes("json") ? await response.json() as unknown : undefined
    })
  })

const fault = (body: Record<string, unknown>) =>
  control("/sandbox/faults", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

const stats = control("/sandbox/stats").pipe(
  Effect.map((s) => s as { readonly calls: Record<string, number>; readonly status429: number; readonly invalid: number })
)
const callsOf = (route: string) => Effect.map(stats, (s) => s.calls[route] ?? 0)

/** Signs a seeded user in through the authorize page (login_hint) and the token endpoint. */
const signIn = (platform: ChatPlatform["Service"], userId: string) =>
  Effect.gen(function*() {
    const verifier = randomBytes(32).toString("base64url")
    const challenge = createHash("sha256").update(verifier).digest("base64url")
    const redirectUri = "http://127.0.0.1:9/callback"
    const url = `${platform.authorizeUrl({ state: "st-1", codeChallenge: challenge, redirectUri })}&login_hint=${userId}`
    const location = yield* Effect.promise(async () => (await fetch(url, { redirect: "manual" })).headers.get("location"))
    const back = new URL(location ?? "http://invalid/")
    assert.strictEqual(back.searchParams.get("state"), "st-1")
    const code = back.searchParams.get("code") ?? ""
    return yield* platform.exchangeCode({ code, codeVerifier: verifier, redirectUri })
  })

// The injected 429s and 500s are logged as warnings: kept, not printed.
layer(SandboxServer.layer().pipe(Layer.provideMerge(CapturedLogs.layer)), { excludeTestServices: true })("ChatPlatformDiscord against the sandbox", (it) => {
  it.effect("signs in with PKCE, reads the user and their guilds, refreshes and revokes", () =>
    Effect.gen(function*() {
      const platform = yield* client()
      const tokens = yield* signIn(platform, ALICE_ID)
      assert.strictEqual(tokens.scope.split(" ").sort().join(" "), "guilds identify")
      const me = yield* platform.getCurrentUser(tokens.access_token)
      assert.strictEqual(me.id, ALICE_ID)
      const guilds = yield* platform.getCurrentUserGuilds(tokens.access_token)
      assert.isTrue(guilds.some((g) => g.id === S1_ID))
      const refreshed = yield* platform.refreshToken(tokens.refresh_token)
      assert.notStrictEqual(Redacted.value(refreshed.access_token), Redacted.value(tokens.access_token))
      // The rotated refresh token no longer works.
      const reused = yield* Effect.flip(platform.refreshToken(tokens.refresh_token))
      assert.strictEqual(reused._tag, "PlatformRejected")
      yield* platform.revokeToken(refreshed.access_token)
      const after = yield* Effect.flip(platform.getCurrentUser(refreshed.access_token))
      assert.deepStrictEqual([after._tag, after._tag === "PlatformRejected" ? after.status : 0], ["PlatformRejected", 401])
    }))

  it.effect("bot reads: user, guilds, guild, channels, roles, webhooks; creates a webhook", () =>
    Effect.gen(function*() {
      const platform = yield* client()
      const me = yield* platform.getBotUser(bot1)
      assert.strictEqual(me.id, BOT1_ID)
      assert.isTrue(me.bot)
      const guilds = yield* platform.getBotGuilds(bot1)
      assert.isTrue(guilds.some((g) => g.id === S1_ID))
      const guild = yield* platform.getGuild(bot1, S1_ID)
      assert.strictEqual(guild.id, S1_ID)
      const channels = yield* platform.getGuildChannels(bot1, S1_ID)
      assert.isTrue(channels.some((c) => c.type === 0))
      const roles = yield* platform.getGuildRoles(bot1, S1_ID)
      assert.isTrue(roles.some((r) => r.id === S1_ID))
      const channel = SEED.ids.textChannels.s1
      const before = yield* platform.getChannelWebhooks(bot2, channel)
      const created = yield* platform.createWebhook(bot2, channel, "Feeds test")
      assert.strictEqual(created.channel_id, channel)
      assert.isDefined(created.token)
      const list = yield* platform.getChannelWebhooks(bot2, channel)
      assert.strictEqual(list.length, before.length + 1)
      const hook = yield* platform.getWebhookWithToken(SEED.ids.webhooks.s1.id, Redacted.make(SEED.ids.webhooks.s1.token))
      assert.strictEqual(hook.id, SEED.ids.webhooks.s1.id)
      const missing = yield* Effect.flip(platform.getGuild(bot1, "399999999999999999"))
      assert.strictEqual(missing._tag === "PlatformRejected" ? missing.status : 0, 404)
    }))

  it.effect("100 concurrent identical reads: one upstream call", () =>
    Effect.gen(function*() {
      const platform = yield* client()
      const before = yield* callsOf("GET /guilds/{id}/channels")
      yield* Effect.all(Array.from({ length: 100 }, () => platform.getGuildChannels(bot2, SEED.ids.servers.s3)), {
        concurrency: "unbounded"
      })
      assert.strictEqual((yield* callsOf("GET /guilds/{id}/channels")) - before, 1)
    }))

  it.effect("an injected 429 is waited out; the answer arrives", () =>
    Effect.gen(function*() {
      const platform = yield* client()
      const before = yield* stats
      yield* fault({ route: "GET /users/@me/guilds", count: 1, kind: "429", retry_after: 0.3 })
      const started = Date.now()
      const guilds = yield* platform.getBotGuilds(bot2)
      assert.isAbove(guilds.length, 0)
      assert.isAtLeast(Date.now() - started, 290)
      const after = yield* stats
      assert.strictEqual((after.calls["GET /users/@me/guilds"] ?? 0) - (before.calls["GET /users/@me/guilds"] ?? 0), 2)
      assert.strictEqual(after.status429 - before.status429, 1)
    }))

  it.effect("injected 500s: 3 attempts then ServiceUnavailable; an injected 401: 1 attempt", () =>
    Effect.gen(function*() {
      const platform = yield* client({ retryBaseDelay: "20 millis" })
      let before = yield* callsOf("GET /guilds/{id}/roles")
      yield* fault({ route: "GET /guilds/{id}/roles", count: 3, kind: "500" })
      const error = yield* Effect.flip(platform.getGuildRoles(bot2, SEED.ids.servers.s3))
      assert.strictEqual(error._tag, "ServiceUnavailable")
      assert.strictEqual((yield* callsOf("GET /guilds/{id}/roles")) - before, 3)
      before = yield* callsOf("GET /guilds/{id}")
      yield* fault({ route: "GET /guilds/{id}", count: 1, kind: "401" })
      const refused = yield* Effect.flip(platform.getGuild(bot2, SEED.ids.servers.s3))
      assert.strictEqual(refused._tag === "PlatformRejected" ? refused.status : 0, 401)
      assert.strictEqual((yield* callsOf("GET /guilds/{id}")) - before, 1)
    }))

  it.effect("an injected hang becomes RequestTimeout", () =>
    Effect.gen(function*() {
      const platform = yield* client({ timeout: "300 millis" })
      yield* fault({ route: "GET /users/@me", count: 1, kind: "hang" })
      const error = yield* Effect.flip(platform.getBotUser(bot2))
      assert.strictEqual(error._tag, "RequestTimeout")
    }))

  it.effect("creating webhooks faster than the route's bucket (5/s) draws no 429", () =>
    Effect.gen(function*() {
      const platform = yield* client()
      const before = yield* stats
      const started = Date.now()
      yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => platform.createWebhook(bot2, SEED.ids.textChannels.s3, `Burst ${i}`)),
        { concurrency: "unbounded", discard: true }
      )
      const after = yield* stats
      assert.strictEqual(after.status429 - before.status429, 0)
      assert.isAtLeast(Date.now() - started, 900)
    }))

  it.effect("crosspost: past the channel's 10 an hour the 429 (retry_after ~1 h) is a 503 at once, never waited; the next is not sent; a bot without MANAGE_MESSAGES 403 50013", () =>
    Effect.gen(function*() {
      const platform = yield* client()
      const news = channelId(3, CHANNEL_INDEX.news)
      const hook = yield* platform.createWebhook(bot2, news, "Crosspost hook")
      const ids: Array<string> = []
      for (let i = 0; i < 12; i++) ids.push((yield* platform.executeWebhook(hook.id, hook.token!, { content: `news ${i}` }))!)
      for (const id of ids.slice(0, 10)) yield* platform.crosspostMessage(bot2, news, id)
      const route = "POST /channels/{id}/messages/{message_id}/crosspost"
      const before = yield* stats
      const started = Date.now()
      const over = yield* Effect.flip(platform.crosspostMessage(bot2, news, ids[10]!))
      assert.strictEqual(over._tag, "ServiceUnavailable")
      assert.isBelow(Date.now() - started, 5_000, "not waited out")
      const next = yield* Effect.flip(platform.crosspostMessage(bot2, news, ids[11]!))
      assert.strictEqual(next._tag, "ServiceUnavailable")
      const after = yield* stats
      assert.strictEqual((after.calls[route] ?? 0) - (before.calls[route] ?? 0), 1, "the 12th was held back by the client")
      assert.strictEqual(after.status429 - before.status429, 1)

      const s4News = channelId(4, CHANNEL_INDEX.news)
      const s4Hook = yield* platform.createWebhook(bot2, s4News, "Crosspost hook")
      const message = (yield* platform.executeWebhook(s4Hook.id, s4Hook.token!, { content: "news" }))!
      yield* control("/sandbox/discord/permissions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ guild_id: SEED.ids.servers.s4, user_id: SEED.ids.bots.bot2, deny: "8192" })
      })
      const refused = yield* Effect.flip(platform.crosspostMessage(bot2, s4News, message))
      assert.deepStrictEqual(refused._tag === "PlatformRejected" ? [refused.status, refused.code] : [refused._tag], [403, 50013])
      yield* control("/sandbox/discord/permissions", { method: "DELETE" })
      yield* platform.crosspostMessage(bot2, s4News, message)
    }), 60_000)
})
