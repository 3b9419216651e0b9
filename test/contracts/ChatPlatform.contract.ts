/**
 * The ChatPlatform contract: what the gateway relies on from the chat platform, whichever layer
 * provides it (the live Discord client against the sandbox, the memory layer). Statuses and
 * Discord's JSON codes of the refusals are part of it: `rejectedToApiError` and the feeds rules read them.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import type { Layer } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { PlatformError, PlatformGuildSummary, PlatformUser } from "../../src/services/platform/ChatPlatform.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"

/** What the suite needs to know about the data behind the layer. */
export interface ChatPlatformFixture<R> {
  /** The user approves the sign-in at the platform: the code and state sent back to the redirect URI. */
  readonly approve: (authorizeUrl: string, userId: string) => Effect.Effect<{ readonly code: string; readonly state: string }, never, R>
  /** A user who may sign in, as GET /users/@me shows them, and what GET /users/@me/guilds says of their guilds. */
  readonly user: {
    readonly profile: PlatformUser
    readonly guilds: ReadonlyArray<Pick<PlatformGuildSummary, "id" | "owner" | "permissions">>
  }
  readonly bot: { readonly token: string; readonly id: string; readonly username: string; readonly guildIds: ReadonlyArray<string> }
  /** A guild the bot is in, where it may manage webhooks. */
  readonly guild: {
    readonly id: string
    readonly name: string
    readonly ownerId: string
    readonly channels: ReadonlyArray<{ readonly id: string; readonly type: number }>
    readonly roleIds: ReadonlyArray<string>
    /** A text channel of it, with `webhook` in it; and a category (no webhooks there). */
    readonly textChannel: string
    /** An announcement channel of it, where the bot holds MANAGE_MESSAGES (it may publish). */
    readonly newsChannel: string
    readonly category: string
    readonly webhook: { readonly id: string; readonly token: string }
    /** A thread of it that is not archived, as GET /guilds/{id}/threads/active lists it. */
    readonly thread: { readonly id: string; readonly name: string; readonly parent_id: string }
  }
  /** A guild that exists but the bot is not in; an id nobody uses. */
  readonly otherGuild: string
  readonly missingGuild: string
  readonly missingChannel: string
  /** A channel of a guild the bot is not in. */
  readonly outsideChannel: string
  /** Another bot, in a guild where it lacks MANAGE_WEBHOOKS, and a channel there. */
  readonly withoutManageWebhooks: { readonly token: string; readonly channel: string }
}

/** The refusal as [status, Discord code], or the tag of an outage. */
const refusal = <A>(effect: Effect.Effect<A, PlatformError>) =>
  Effect.map(Effect.flip(effect), (e) => e._tag === "PlatformRejected" ? [e.status, e.code] as const : [e._tag] as const)

const pkce = () => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}
const REDIRECT = "http://127.0.0.1:9/callback"

export const chatPlatformContract = <R, E>(
  name: string,
  platformLayer: Layer.Layer<ChatPlatform | R, E>,
  fixture: ChatPlatformFixture<R>
) => {
  /** A sign-in of the fixture's user through the authorize URL and the code exchange. */
  const signIn = Effect.gen(function*() {
    const platform = yield* ChatPlatform
    const { challenge, verifier } = pkce()
    const url = platform.authorizeUrl({ state: "st-1", codeChallenge: challenge, redirectUri: REDIRECT })
    const back = yield* fixture.approve(url, fixture.user.profile.id)
    assert.strictEqual(back.state, "st-1")
    return yield* platform.exchangeCode({ code: back.code, codeVerifier: verifier, redirectUri: REDIRECT })
  })
  const bot = Redacted.make(fixture.bot.token)

  layer(platformLayer, { excludeTestServices: true })(`ChatPlatform contract (${name})`, (it) => {
    it.effect("the authorize URL asks for identify and guilds, with PKCE S256, the state and the redirect URI", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const url = new URL(platform.authorizeUrl({ state: "s-42", codeChallenge: "c-42", redirectUri: REDIRECT }))
        const q = url.searchParams
        assert.deepStrictEqual(
          [q.get("response_type"), q.get("scope"), q.get("state"), q.get("redirect_uri"), q.get("code_challenge"), q.get("code_challenge_method")],
          ["code", "identify guilds", "s-42", REDIRECT, "c-42", "S256"]
        )
      }))

    it.effect("a signed-in user: their profile, and their guilds with the owner flag and permissions", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const tokens = yield* signIn
        assert.deepStrictEqual(tokens.scope.split(" ").sort(), ["guilds", "identify"])
        assert.isAbove(tokens.expires_in, 0)
        assert.deepStrictEqual(yield* platform.getCurrentUser(tokens.access_token), fixture.user.profile)
        const guilds = yield* platform.getCurrentUserGuilds(tokens.access_token)
        assert.deepStrictEqual(guilds.map((g) => ({ id: g.id, owner: g.owner, permissions: g.permissions })), fixture.user.guilds)
      }))

    it.effect("a code is spent by its first use; a wrong verifier or redirect URI is refused (400)", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const start = () => {
          const p = pkce()
          return { ...p, url: platform.authorizeUrl({ state: "s", codeChallenge: p.challenge, redirectUri: REDIRECT }) }
        }
        const first = start()
        const { code } = yield* fixture.approve(first.url, fixture.user.profile.id)
        yield* platform.exchangeCode({ code, codeVerifier: first.verifier, redirectUri: REDIRECT })
        const again = yield* refusal(platform.exchangeCode({ code, codeVerifier: first.verifier, redirectUri: REDIRECT }))
        assert.strictEqual(again[0], 400)
        const second = start()
        const wrongVerifier = (yield* fixture.approve(second.url, fixture.user.profile.id)).code
        assert.strictEqual((yield* refusal(platform.exchangeCode({ code: wrongVerifier, codeVerifier: pkce().verifier, redirectUri: REDIRECT })))[0], 400)
        const third = start()
        const wrongRedirect = (yield* fixture.approve(third.url, fixture.user.profile.id)).code
        assert.strictEqual((yield* refusal(platform.exchangeCode({ code: wrongRedirect, codeVerifier: third.verifier, redirectUri: "http://127.0.0.1:9/other" })))[0], 400)
      }))

    it.effect("a refresh rotates: new tokens that work, the used refresh token refused (400)", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const tokens = yield* signIn
        const refreshed = yield* platform.refreshToken(tokens.refresh_token)
        assert.notStrictEqual(Redacted.value(refreshed.access_token), Redacted.value(tokens.access_token))
        assert.notStrictEqual(Redacted.value(refreshed.refresh_token), Redacted.value(tokens.refresh_token))
        assert.strictEqual((yield* platform.getCurrentUser(refreshed.access_token)).id, fixture.user.profile.id)
        assert.strictEqual((yield* refusal(platform.refreshToken(tokens.refresh_token)))[0], 400)
      }))

    it.effect("a revocation ends the sign-in: its access token is refused (401), its refresh token too (400)", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const tokens = yield* signIn
        yield* platform.revokeToken(tokens.access_token)
        assert.strictEqual((yield* refusal(platform.getCurrentUser(tokens.access_token)))[0], 401)
        assert.strictEqual((yield* refusal(platform.refreshToken(tokens.refresh_token)))[0], 400)
        // Revoking a token the platform does not know is no error.
        yield* platform.revokeToken(Redacted.make("never-issued"))
      }))

    it.effect("an unknown user or bot token is refused (401)", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const nobody = Redacted.make("no-such-token")
        assert.strictEqual((yield* refusal(platform.getCurrentUser(nobody)))[0], 401)
        assert.strictEqual((yield* refusal(platform.getBotUser(nobody)))[0], 401)
        assert.strictEqual((yield* refusal(platform.getGuild(nobody, fixture.guild.id)))[0], 401)
      }))

    it.effect("the bot: its profile and the ids of its guilds", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const me = yield* platform.getBotUser(bot)
        assert.deepStrictEqual([me.id, me.username, me.bot], [fixture.bot.id, fixture.bot.username, true])
        assert.deepStrictEqual((yield* platform.getBotGuilds(bot)).map((g) => g.id), fixture.bot.guildIds)
      }))

    it.effect("a guild the bot is in: the guild, its channels and its roles", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const g = fixture.guild
        const guild = yield* platform.getGuild(bot, g.id)
        assert.deepStrictEqual([guild.id, guild.name, guild.owner_id], [g.id, g.name, g.ownerId])
        const channels = yield* platform.getGuildChannels(bot, g.id)
        assert.deepStrictEqual(channels.map((c) => ({ id: c.id, type: c.type })), g.channels)
        const roles = yield* platform.getGuildRoles(bot, g.id)
        assert.deepStrictEqual(roles.map((r) => r.id), g.roleIds)
        for (const role of roles) assert.match(role.permissions, /^\d+$/)
      }))

    it.effect("an unknown guild, or one the bot is not in, is 404 Unknown Guild (10004) for every guild read", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        for (const id of [fixture.missingGuild, fixture.otherGuild]) {
          assert.deepStrictEqual(yield* refusal(platform.getGuild(bot, id)), [404, 10004], `guild ${id}`)
          assert.deepStrictEqual(yield* refusal(platform.getGuildChannels(bot, id)), [404, 10004], `channels ${id}`)
          assert.deepStrictEqual(yield* refusal(platform.getGuildRoles(bot, id)), [404, 10004], `roles ${id}`)
        }
      }))

    it.effect("webhooks: the channel's list, a created one joins it with a token, and reads back by id and token", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const g = fixture.guild
        const before = yield* platform.getChannelWebhooks(bot, g.textChannel)
        assert.isTrue(before.some((w) => w.id === g.webhook.id))
        const created = yield* platform.createWebhook(bot, g.textChannel, "Contract hook")
        assert.deepStrictEqual(
          [created.channel_id, created.guild_id, created.name, created.application_id],
          [g.textChannel, g.id, "Contract hook", fixture.bot.id]
        )
        assert.isDefined(created.token)
        const after = yield* platform.getChannelWebhooks(bot, g.textChannel)
        assert.deepStrictEqual(after.map((w) => w.id).sort(), [...before.map((w) => w.id), created.id].sort())
        const read = yield* platform.getWebhookWithToken(created.id, created.token!)
        assert.deepStrictEqual([read.id, read.channel_id, read.guild_id], [created.id, g.textChannel, g.id])
        const seeded = yield* platform.getWebhookWithToken(g.webhook.id, Redacted.make(g.webhook.token))
        assert.strictEqual(seeded.channel_id, g.textChannel)
      }))

    it.effect("webhook refusals: unknown channel 10003, outside the guild 50001, without MANAGE_WEBHOOKS 50013, a category, a wrong token 10015", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const g = fixture.guild
        const limited = Redacted.make(fixture.withoutManageWebhooks.token)
        assert.deepStrictEqual(yield* refusal(platform.getChannelWebhooks(bot, fixture.missingChannel)), [404, 10003])
        assert.deepStrictEqual(yield* refusal(platform.createWebhook(bot, fixture.missingChannel, "x")), [404, 10003])
        assert.deepStrictEqual(yield* refusal(platform.getChannelWebhooks(bot, fixture.outsideChannel)), [403, 50001])
        assert.deepStrictEqual(yield* refusal(platform.createWebhook(bot, fixture.outsideChannel, "x")), [403, 50001])
        const channel = fixture.withoutManageWebhooks.channel
        assert.deepStrictEqual(yield* refusal(platform.getChannelWebhooks(limited, channel)), [403, 50013])
        assert.deepStrictEqual(yield* refusal(platform.createWebhook(limited, channel, "x")), [403, 50013])
        assert.strictEqual((yield* refusal(platform.createWebhook(bot, g.category, "x")))[0], 400)
        assert.strictEqual((yield* refusal(platform.createWebhook(bot, g.textChannel, "My Discord hook")))[0], 400)
        assert.deepStrictEqual(yield* refusal(platform.getWebhookWithToken(g.webhook.id, Redacted.make("wrong-token"))), [404, 10015])
        assert.deepStrictEqual(yield* refusal(platform.getWebhookWithToken("349999999999999999", Redacted.make(g.webhook.token))), [404, 10015])
      }))

    it.effect("executing a webhook: with wait its message id, without null; a wrong token 401 50027, an unknown id 404 10015; an empty message 400", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const g = fixture.guild
        const token = Redacted.make(g.webhook.token)
        const body = { content: "Contract message <@1> @everyone", username: "Contract", allowed_mentions: { parse: [] } }
        const id = yield* platform.executeWebhook(g.webhook.id, token, body, { wait: true })
        assert.match(id ?? "", /^\d{17,20}$/)
        const again = yield* platform.executeWebhook(g.webhook.id, token, body)
        assert.notStrictEqual(again, id, "wait is the default; each post is its own message")
        assert.isNull(yield* platform.executeWebhook(g.webhook.id, token, body, { wait: false }))
        assert.deepStrictEqual(yield* refusal(platform.executeWebhook(g.webhook.id, Redacted.make("wrong-token"), body)), [401, 50027])
        assert.deepStrictEqual(yield* refusal(platform.executeWebhook("349999999999999999", token, body)), [404, 10015])
        assert.deepStrictEqual(yield* refusal(platform.executeWebhook(g.webhook.id, token, { content: "" })), [400, 50006])
      }))

    it.effect("a channel's messages with the bot's token: newest first, a webhook's with its id as webhook and author; limit, before, after; 403 50001 outside, 404 10003 unknown", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const g = fixture.guild
        const token = Redacted.make(g.webhook.token)
        const tag = randomBytes(4).toString("hex")
        const ids: Array<string> = []
        for (const n of [1, 2, 3]) ids.push((yield* platform.executeWebhook(g.webhook.id, token, { content: `read ${tag} ${n}` }))!)
        const newest = yield* platform.getChannelMessages(bot, g.textChannel, { limit: 3 })
        assert.deepStrictEqual(newest.map((m) => [m.id, m.content, m.webhook_id, m.author_id]), [
          [ids[2], `read ${tag} 3`, g.webhook.id, g.webhook.id],
          [ids[1], `read ${tag} 2`, g.webhook.id, g.webhook.id],
          [ids[0], `read ${tag} 1`, g.webhook.id, g.webhook.id]
        ])
        assert.isFalse(Number.isNaN(Date.parse(newest[0]!.timestamp)))
        assert.isAtMost(Math.abs(Date.parse(newest[0]!.timestamp) - Date.now()), 60_000)
        assert.deepStrictEqual((yield* platform.getChannelMessages(bot, g.textChannel, { limit: 2, before: ids[2]! })).map((m) => m.id), [ids[1], ids[0]])
        assert.deepStrictEqual((yield* platform.getChannelMessages(bot, g.textChannel, { limit: 1, after: ids[0]! })).map((m) => m.id), [ids[1]])
        assert.deepStrictEqual((yield* platform.getChannelMessages(bot, g.textChannel, { after: ids[0]! })).map((m) => m.id), [ids[2], ids[1]])
        assert.isAtMost((yield* platform.getChannelMessages(bot, g.textChannel)).length, 50)
        assert.deepStrictEqual(yield* refusal(platform.getChannelMessages(bot, fixture.outsideChannel)), [403, 50001])
        assert.deepStrictEqual(yield* refusal(platform.getChannelMessages(bot, fixture.missingChannel)), [404, 10003])
        assert.deepStrictEqual((yield* refusal(platform.getChannelMessages(Redacted.make("not-a-bot"), g.textChannel)))[0], 401)
      }))

    it.effect("publishing (crosspost): a webhook's message of an announcement channel once; twice 400 40033, a text channel 400 50024, unknown message 404 10008, unknown channel 404 10003", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const g = fixture.guild
        const hook = yield* platform.createWebhook(bot, g.newsChannel, "Contract news")
        const id = (yield* platform.executeWebhook(hook.id, hook.token!, { content: "Contract news" }))!
        yield* platform.crosspostMessage(bot, g.newsChannel, id)
        assert.deepStrictEqual(yield* refusal(platform.crosspostMessage(bot, g.newsChannel, id)), [400, 40033])
        const text = (yield* platform.executeWebhook(g.webhook.id, Redacted.make(g.webhook.token), { content: "Contract text" }))!
        assert.deepStrictEqual(yield* refusal(platform.crosspostMessage(bot, g.textChannel, text)), [400, 50024])
        assert.deepStrictEqual(yield* refusal(platform.crosspostMessage(bot, g.newsChannel, text)), [404, 10008])
        assert.deepStrictEqual(yield* refusal(platform.crosspostMessage(bot, fixture.missingChannel, id)), [404, 10003])
        assert.deepStrictEqual((yield* refusal(platform.crosspostMessage(Redacted.make("not-a-bot"), g.newsChannel, id)))[0], 401)
      }))

    it.effect("a guild's active threads with the bot's token: its thread with its channel; a guild the bot is not in 404 10004", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const bot = Redacted.make(fixture.bot.token)
        const threads = yield* platform.getActiveThreads(bot, fixture.guild.id)
        assert.deepInclude(threads, fixture.guild.thread)
        assert.deepStrictEqual(yield* refusal(platform.getActiveThreads(bot, fixture.otherGuild)), [404, 10004])
        assert.deepStrictEqual(yield* refusal(platform.getActiveThreads(bot, fixture.missingGuild)), [404, 10004])
        assert.deepStrictEqual((yield* refusal(platform.getActiveThreads(Redacted.make("not-a-bot"), fixture.guild.id)))[0], 401)
      }))

    it.effect("a direct message from the bot: its message id; an unknown user 400 50033; an empty message 400 50006", () =>
      Effect.gen(function*() {
        const platform = yield* ChatPlatform
        const bot = Redacted.make(fixture.bot.token)
        const body = { content: "Your feed was disabled.", allowed_mentions: { parse: [] } }
        const id = yield* platform.sendDirectMessage(bot, fixture.user.profile.id, body)
        assert.match(id, /^\d{17,20}$/)
        assert.notStrictEqual(yield* platform.sendDirectMessage(bot, fixture.user.profile.id, body), id)
        assert.deepStrictEqual(yield* refusal(platform.sendDirectMessage(bot, "100000000000000999", body)), [400, 50033])
        assert.deepStrictEqual(yield* refusal(platform.sendDirectMessage(bot, fixture.user.profile.id, { content: "" })), [400, 50006])
        assert.deepStrictEqual((yield* refusal(platform.sendDirectMessage(Redacted.make("not-a-bot"), fixture.user.profile.id, body)))[0], 401)
      }))
  })
}
