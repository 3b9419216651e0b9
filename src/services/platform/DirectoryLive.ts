/** Directory on the chat platform: the permission rules of decisions.md. */
import { Effect, Layer } from "effect"
import type { Redacted } from "effect"
import { Forbidden, NotFound } from "../../domain/infra/Errors.ts"
import type { Channel, Module, ModuleName } from "../../domain/platform/Platform.ts"
import type { Principal } from "../../domain/auth/Principal.ts"
import { Bots } from "./Bots.ts"
import type { BotRecord } from "./Bots.ts"
import { ChatPlatform, Permission, PlatformRejected, rejectedToApiError } from "./ChatPlatform.ts"
import type { PlatformChannel, PlatformError, PlatformGuildSummary } from "./ChatPlatform.ts"
import { Directory, DirectorySettings } from "./Directory.ts"
import type { Need } from "./Directory.ts"
import { boundedMemo } from "../infra/Memo.ts"
import { has, MODULES } from "./Modules.ts"
import { PlatformSession, withUserToken } from "./PlatformSession.ts"

const CHANNEL_TYPES: Record<number, Channel["type"]> = { 0: "GuildText", 5: "GuildNews", 2: "GuildVoice" }
const ALL = (1n << 53n) - 1n

export const toChannels = (channels: ReadonlyArray<PlatformChannel>): Array<Channel> =>
  channels.flatMap((c) => {
    const type = CHANNEL_TYPES[c.type]
    return type === undefined ? [] : [{ id: c.id, name: c.name, type }]
  })

export const colorHex = (color: number) => `#${color.toString(16).padStart(6, "0").toLowerCase()}`

// A guild's permissions arrive as the same few decimal strings request after request: parsed once.
const permsOf = boundedMemo(1_000, BigInt)

/** 404 unless the bot is in the server. */
const botAbsent = (botGuilds: ReadonlyArray<PlatformGuildSummary>, b: BotRecord, serverId: string) =>
  botGuilds.some((g) => g.id === serverId)
    ? undefined
    : Effect.fail(NotFound.of(`Server ${serverId} does not exist or bot ${b.id} is not in it.`))

/** The user's permissions in the server from their server list: 403 unless a member who may manage it. */
const permissionsIn = (guilds: ReadonlyArray<PlatformGuildSummary>, serverId: string): Effect.Effect<bigint, Forbidden> => {
  const guild = guilds.find((g) => g.id === serverId)
  if (guild === undefined) return Effect.fail(Forbidden.of(`You are not a member of server ${serverId}.`))
  const perms = guild.owner ? ALL : permsOf(guild.permissions)
  if (!has(perms, Permission.MANAGE_GUILD)) {
    return Effect.fail(Forbidden.of(`You may not manage server ${serverId}: it needs MANAGE_GUILD, ADMINISTRATOR or ownership.`))
  }
  return Effect.succeed(perms)
}

const platform = <A>(what: string, credential: "user" | "bot" = "user") => (effect: Effect.Effect<A, PlatformError>) =>
  Effect.catchTag(effect, "PlatformRejected", (e: PlatformRejected) => Effect.fail(rejectedToApiError(e, what, credential)))

export const DirectoryLive = Layer.effect(
  Directory,
  Effect.gen(function*() {
    const chat = yield* ChatPlatform
    const bots = yield* Bots
    const session = yield* PlatformSession
    const settings = yield* DirectorySettings

    const bot = (botId: string) =>
      Effect.flatMap(bots.get(botId), (b) =>
        b === undefined ? Effect.fail(NotFound.of(`There is no bot ${botId}; GET /api/v1/bots lists them.`)) : Effect.succeed(b))

    // A 401 on the user's token renews it once before it becomes "sign in again" (PlatformSession.ts).
    const asUser = <A>(principal: Principal, token: Redacted.Redacted<string>, what: string, call: (t: Redacted.Redacted<string>) => Effect.Effect<A, PlatformError>) =>
      withUserToken(session, principal, token, call).pipe(
        Effect.catchTag("PlatformRejected", (e: PlatformRejected) => Effect.fail(rejectedToApiError(e, what)))
      )
    const userGuilds = (principal: Principal, token: Redacted.Redacted<string>) =>
      asUser(principal, token, "your servers", chat.getCurrentUserGuilds)
    const currentUser = (principal: Principal) =>
      Effect.flatMap(session.userToken(principal), (t) => asUser(principal, t, "your user", chat.getCurrentUser))

    /** The user's permissions in a server the bot is in; 404/403 as decisions.md says. */
    const membership = (principal: Principal, b: BotRecord, serverId: string) =>
      Effect.gen(function*() {
        const [botGuilds, token] = yield* Effect.all([
          chat.getBotGuilds(b.token).pipe(platform("the bot's servers", "bot")),
          session.userToken(principal)
        ], { concurrency: 2 })
        const absent = botAbsent(botGuilds, b, serverId)
        if (absent !== undefined) return yield* absent
        return yield* permissionsIn(yield* userGuilds(principal, token), serverId)
      })

    // A read whose server lists are both in this instance's caches (the chat platform's
    // `cachedGuildLists`) decides in one step, with the same rules and the same failures, in the same
    // order: the bot, then the user's platform token (its failure first, as when both are read at
    // once), then 404, then 403. Otherwise `membership` reads them.
    const cachedMembership = (principal: Principal, b: BotRecord, serverId: string) => {
      const cachedLists = chat.cachedGuildLists
      if (cachedLists === undefined) return membership(principal, b, serverId)
      return Effect.flatMap(session.userToken(principal), (token) =>
        Effect.flatMap(cachedLists(b.token, token), (lists) => {
          if (lists === undefined) return membership(principal, b, serverId)
          return botAbsent(lists[0], b, serverId) ?? permissionsIn(lists[1], serverId)
        }))
    }

    const access = Effect.fn("Directory.access")(function*(principal: Principal, botId: string, serverId: string, need: Need) {
      const b = yield* bot(botId)
      const perms = yield* cachedMembership(principal, b, serverId)
      if (need === "logs" && !has(perms, Permission.VIEW_AUDIT_LOG)) {
        return yield* Forbidden.of("The audit log needs the VIEW_AUDIT_LOG permission on this server.")
      }
      if (need !== "logs" && need !== "server") {
        const info = MODULES.find((m) => m.name === need)!
        if (!has(perms, info.needs)) {
          return yield* Forbidden.of(`The ${need} module is not available to you: it needs ${need === "forms" ? "MANAGE_GUILD" : "MANAGE_GUILD and MANAGE_WEBHOOKS"}.`)
        }
      }
      const [channels, roles, me] = yield* Effect.all([
        chat.getGuildChannels(b.token, serverId).pipe(platform("the server's channels", "bot")),
        chat.getGuildRoles(b.token, serverId).pipe(platform("the server's roles", "bot")),
        currentUser(principal)
      ], { concurrency: 3 })
      return {
        botId: b.id,
        botToken: b.token,
        serverId,
        channels,
        roles,
        // Audit entries name the account (`username`, as GET /user shows it), never the display name.
        actor: { userId: me.id, userName: me.username, avatar: me.avatar },
        perms
      }
    })

    // The list depends only on which modules the permissions make available (and PUBLIC_URL): one
    // frozen list per combination, so the answer built from it can be kept too (handlers/General.ts).
    const moduleLists = new Map<number, ReadonlyArray<Module>>()
    const moduleList = (perms: bigint): ReadonlyArray<Module> => {
      let bits = 0
      for (let i = 0; i < MODULES.length; i++) if (has(perms, MODULES[i]!.needs)) bits |= 1 << i
      let list = moduleLists.get(bits)
      if (list === undefined) {
        list = Object.freeze(MODULES.map((m, i) =>
          Object.freeze({
            name: m.name as ModuleName,
            full_name: m.full_name,
            short_description: m.short_description,
            available: (bits & (1 << i)) !== 0,
            image: `${settings.publicUrl}/assets/modules/${m.name}.svg`
          })
        ))
        moduleLists.set(bits, list)
      }
      return list
    }

    return Directory.of({
      user: (principal) =>
        currentUser(principal).pipe(
          Effect.map((u) => ({
            username: u.username,
            discriminator: u.discriminator,
            id: u.id,
            avatar: u.avatar,
            locale: u.locale ?? "en-US"
          }))
        ),
      bots: Effect.map(bots.list, (list) => list.map((b) => ({ id: b.id, name: b.name, icon: b.icon }))),
      servers: (principal, botId) =>
        Effect.gen(function*() {
          const b = yield* bot(botId)
          const [botGuilds, token] = yield* Effect.all([
            chat.getBotGuilds(b.token).pipe(platform("the bot's servers", "bot")),
            session.userToken(principal)
          ], { concurrency: 2 })
          const guilds = yield* userGuilds(principal, token)
          const withBot = new Set(botGuilds.map((g) => g.id))
          return guilds
            .filter((g) => withBot.has(g.id) && (g.owner || has(BigInt(g.permissions), Permission.MANAGE_GUILD)))
            .map((g) => ({ id: g.id, name: g.name, icon: g.icon }))
        }),
      server: (principal, botId, serverId) =>
        Effect.gen(function*() {
          const a = yield* access(principal, botId, serverId, "server")
          const guild = yield* chat.getGuild(a.botToken, serverId).pipe(platform("the server", "bot"))
          return {
            id: guild.id,
            name: guild.name,
            icon: guild.icon,
            channels: toChannels(a.channels),
            roles: [...a.roles]
              .sort((x, y) => y.position - x.position)
              .map((r) => ({ id: r.id, name: r.name, color_hex: colorHex(r.color) }))
          }
        }),
      modules: (principal, botId, serverId) =>
        Effect.flatMap(bot(botId), (b) => Effect.map(cachedMembership(principal, b, serverId), moduleList)),
      access: (principal, botId, serverId, need) => access(principal, botId, serverId, need)
    })
  })
)
