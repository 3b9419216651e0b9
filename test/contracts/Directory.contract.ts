/**
 * The Directory contract: the permission rules of decisions.md ("Servers, modules, permissions") as
 * the signed-in user meets them. Directory is a business service, not an I/O capability: it has one
 * implementation (DirectoryLive), and this suite runs it over each layer of what it reads, the chat
 * platform (the live Discord client against the sandbox, ChatPlatformMemory), with the seeded bots.
 * Each user signs in at the platform once (the layer's `approve`), as the real sign-in does.
 *
 * The data is the sandbox's seed (src/sandbox/seed/Servers.ts): Alice owns S1 and manages S2
 * (MANAGE_GUILD only), is a plain member of S3; Bob is a plain member of S1, an ADMINISTRATOR of S3,
 * owns S4; Carol owns S2 and S3 and holds MANAGE_GUILD, MANAGE_WEBHOOKS and VIEW_AUDIT_LOG in S4.
 * FormsBot is in S1, S2, S3; FeedsBot in S1, S3, S4. Expected answers are written out.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Unauthorized } from "../../src/domain/infra/Errors.ts"
import type { UserId } from "../../src/domain/infra/Ids.ts"
import type { Principal } from "../../src/domain/auth/Principal.ts"
import { ALICE_ID, BOB_ID, BOT1_ID, BOT1_TOKEN, BOT2_ID, BOT2_TOKEN, CAROL_ID, S1_ID, S2_ID, S3_ID, S4_ID } from "../../src/sandbox/Seed.ts"
import { ChatPlatform } from "../../src/services/platform/ChatPlatform.ts"
import { Directory, DirectorySettings } from "../../src/services/platform/Directory.ts"
import type { Need } from "../../src/services/platform/Directory.ts"
import { DirectoryLive } from "../../src/services/platform/DirectoryLive.ts"
import { PlatformSession } from "../../src/services/platform/PlatformSession.ts"
import { BotsMemory } from "../layers/BotsMemory.ts"

/** The user approves a sign-in at the platform: the code and state sent back. */
export type Approve<R> = (authorizeUrl: string, userId: string) => Effect.Effect<{ readonly code: string; readonly state: string }, never, R>

const REDIRECT = "http://127.0.0.1:9/callback"
const PUBLIC_URL = "https://gateway.test"
const principal = (userId: string): Principal => ({ userId: userId as UserId, familyId: `family-${userId}`, accessExpiresAt: new Date(Date.now() + 3_600_000) })
const [alice, bob, carol] = [principal(ALICE_ID), principal(BOB_ID), principal(CAROL_ID)]

/** Each user's platform token, from one sign-in at the platform (code exchange, as the gateway's sign-in). */
const signedInSession = <R>(approve: Approve<R>) =>
  Layer.effect(PlatformSession, Effect.gen(function*() {
    const platform = yield* ChatPlatform
    const context = yield* Effect.context<R>()
    const tokens = new Map<string, Redacted.Redacted<string>>()
    const userToken = (p: Principal) =>
      Effect.gen(function*() {
        const known = tokens.get(p.userId)
        if (known !== undefined) return known
        const url = platform.authorizeUrl({ state: "st", codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", redirectUri: REDIRECT })
        const back = yield* approve(url, p.userId).pipe(Effect.provideContext(context))
        const exchanged = yield* platform.exchangeCode({ code: back.code, codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", redirectUri: REDIRECT })
          .pipe(Effect.orDie)
        tokens.set(p.userId, exchanged.access_token)
        return exchanged.access_token
      })
    return PlatformSession.of({ userToken, renewUserToken: () => Effect.fail(Unauthorized.of("sign in again")) })
  }))

/** DirectoryLive over a chat platform layer, with the seeded bots and a session per user. */
export const directoryOver = <R, E>(platform: Layer.Layer<ChatPlatform | R, E>, approve: Approve<R>) =>
  DirectoryLive.pipe(
    Layer.provide(Layer.mergeAll(
      signedInSession(approve),
      BotsMemory([
        { id: BOT1_ID, name: "FormsBot", icon: "f0000000000000000000000000000b01", token: Redacted.make(BOT1_TOKEN) },
        { id: BOT2_ID, name: "FeedsBot", icon: "fe000000000000000000000000000b02", token: Redacted.make(BOT2_TOKEN) }
      ]),
      Layer.succeed(DirectorySettings, DirectorySettings.of({ publicUrl: PUBLIC_URL }))
    )),
    Layer.provideMerge(platform)
  )

const serverIds = (p: Principal, botId: string) =>
  Effect.map(Directory.use((d) => d.servers(p, botId)), (list) => list.map((s) => s.id).sort())
const refusal = (p: Principal, botId: string, serverId: string, need: Need) =>
  Effect.map(Effect.flip(Directory.use((d) => d.access(p, botId, serverId, need))), (e) => e._tag)
const available = (p: Principal, botId: string, serverId: string) =>
  Effect.map(Directory.use((d) => d.modules(p, botId, serverId)), (list) => list.filter((m) => m.available).map((m) => m.name))
const FEEDS = ["photo", "forum", "rss", "streaming", "microblog", "video"]

export const directoryContract = <R, E>(name: string, platform: Layer.Layer<ChatPlatform | R, E>, approve: Approve<R>) =>
  layer(directoryOver(platform, approve), { excludeTestServices: true, timeout: "60 seconds" })(`Directory contract (${name})`, (it) => {
    it.effect("servers: exactly those the bot is in and the user owns, administers or may manage", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* serverIds(alice, BOT1_ID), [S1_ID, S2_ID])
        assert.deepStrictEqual(yield* serverIds(alice, BOT2_ID), [S1_ID])
        assert.deepStrictEqual(yield* serverIds(bob, BOT1_ID), [S3_ID])
        assert.deepStrictEqual(yield* serverIds(bob, BOT2_ID), [S3_ID, S4_ID])
        assert.deepStrictEqual(yield* serverIds(carol, BOT1_ID), [S2_ID, S3_ID])
        assert.deepStrictEqual(yield* serverIds(carol, BOT2_ID), [S3_ID, S4_ID])
        const [s1] = (yield* Directory.use((d) => d.servers(alice, BOT2_ID)))
        assert.deepStrictEqual(s1, { id: S1_ID, name: "Sandbox One", icon: "51000000000000000000000000000001" })
        assert.strictEqual((yield* Effect.flip(Directory.use((d) => d.servers(alice, "299999999999999999"))))._tag, "NotFound")
      }))

    it.effect("a server the bot is not in, or that does not exist, or an unknown bot → 404, whatever the user", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusal(alice, BOT2_ID, S2_ID, "server"), "NotFound", "FeedsBot is not in S2, which Alice manages")
        assert.strictEqual(yield* refusal(carol, BOT1_ID, S4_ID, "forms"), "NotFound")
        assert.strictEqual(yield* refusal(alice, BOT1_ID, "399999999999999999", "server"), "NotFound")
        assert.strictEqual(yield* refusal(alice, "299999999999999999", S1_ID, "server"), "NotFound")
      }))

    it.effect("a server the user may not manage → 403: a plain member, or not a member at all", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusal(alice, BOT1_ID, S3_ID, "server"), "Forbidden")
        assert.strictEqual(yield* refusal(bob, BOT1_ID, S1_ID, "forms"), "Forbidden")
        assert.strictEqual(yield* refusal(carol, BOT2_ID, S1_ID, "logs"), "Forbidden", "not a member: 403 before the log rule")
        assert.strictEqual((yield* Effect.flip(Directory.use((d) => d.modules(bob, BOT2_ID, S1_ID))))._tag, "Forbidden")
      }))

    it.effect("modules: forms needs MANAGE_GUILD, the feed modules MANAGE_WEBHOOKS too; owners and administrators have all", () =>
      Effect.gen(function*() {
        const all = ["forms", ...FEEDS]
        assert.deepStrictEqual(yield* available(alice, BOT1_ID, S1_ID), all, "owner")
        assert.deepStrictEqual(yield* available(bob, BOT2_ID, S3_ID), all, "administrator")
        assert.deepStrictEqual(yield* available(carol, BOT2_ID, S4_ID), all, "MANAGE_GUILD and MANAGE_WEBHOOKS")
        assert.deepStrictEqual(yield* available(alice, BOT1_ID, S2_ID), ["forms"], "MANAGE_GUILD alone")
        const listed = yield* Directory.use((d) => d.modules(alice, BOT1_ID, S2_ID))
        assert.deepStrictEqual(listed.map((m) => m.name), all)
        assert.deepStrictEqual(listed[3], {
          name: "rss",
          full_name: "RSS reader",
          short_description: "Items of RSS and Atom feeds.",
          available: false,
          image: `${PUBLIC_URL}/assets/modules/rss.svg`
        })
      }))

    it.effect("a module whose `available` is false → 403; one that is true is granted", () =>
      Effect.gen(function*() {
        for (const module of FEEDS) assert.strictEqual(yield* refusal(alice, BOT1_ID, S2_ID, module as Need), "Forbidden", module)
        const granted = yield* Directory.use((d) => d.access(alice, BOT1_ID, S2_ID, "forms"))
        assert.strictEqual(granted.serverId, S2_ID)
        yield* Directory.use((d) => d.access(carol, BOT2_ID, S4_ID, "rss"))
      }))

    it.effect("the audit log needs VIEW_AUDIT_LOG, ADMINISTRATOR or ownership", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusal(alice, BOT1_ID, S2_ID, "logs"), "Forbidden", "MANAGE_GUILD alone")
        for (const [p, botId, serverId] of [[alice, BOT1_ID, S1_ID], [bob, BOT2_ID, S3_ID], [carol, BOT2_ID, S4_ID]] as const) {
          assert.strictEqual((yield* Directory.use((d) => d.access(p, botId, serverId, "logs"))).serverId, serverId)
        }
      }))

    it.effect("access carries the bot, its token, the server's channels and roles, and the user as the audit actor", () =>
      Effect.gen(function*() {
        const a = yield* Directory.use((d) => d.access(carol, BOT2_ID, S4_ID, "video"))
        assert.deepStrictEqual([a.botId, Redacted.value(a.botToken), a.serverId], [BOT2_ID, BOT2_TOKEN, S4_ID])
        assert.deepStrictEqual(a.actor, { userId: CAROL_ID, userName: "carol", avatar: "ca7010000000000000000000000000ca" })
        assert.lengthOf(a.channels, 5)
        assert.sameMembers(a.roles.map((r) => r.name), ["@everyone", "Webmasters", "Members", "FeedsBot"])
      }))

    it.effect("a server: text, news and voice channels (no categories), roles by position with #rrggbb in lower case", () =>
      Effect.gen(function*() {
        const server = yield* Directory.use((d) => d.server(alice, BOT2_ID, S1_ID))
        assert.deepStrictEqual({ ...server, channels: server.channels.map((c) => [c.name, c.type]), roles: server.roles.map((r) => [r.name, r.color_hex]) }, {
          id: S1_ID,
          name: "Sandbox One",
          icon: "51000000000000000000000000000001",
          channels: [["general", "GuildText"], ["feeds", "GuildText"], ["announcements", "GuildNews"], ["Lounge", "GuildVoice"]],
          roles: [["FeedsBot", "#000000"], ["FormsBot", "#000000"], ["Moderators", "#e74c3c"], ["Members", "#3498db"], ["@everyone", "#000000"]]
        })
      }))

    it.effect("the user as the platform knows them; the bots as registered", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* Directory.use((d) => d.user(alice)), {
          username: "alice",
          discriminator: "0",
          id: ALICE_ID,
          avatar: "a11ce0000000000000000000000000a1",
          locale: "en-US"
        })
        assert.deepStrictEqual(yield* Directory.use((d) => d.bots), [
          { id: BOT1_ID, name: "FormsBot", icon: "f0000000000000000000000000000b01" },
          { id: BOT2_ID, name: "FeedsBot", icon: "fe000000000000000000000000000b02" }
        ])
      }))
  })
