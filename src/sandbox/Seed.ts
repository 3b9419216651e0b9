/**
 * The sandbox chat platform's fixed data, in one object (`SEED`) with its lookups: users, bots,
 * servers (guilds) with channels and roles, and webhooks, with FIXED ids so tests and demos can name
 * them. The data itself lives in seed/, one file per kind; this module is the one door to it.
 */
import { BOTS } from "./seed/Bots.ts"
import {
  ALICE_ID,
  BOB_ID,
  BOT1_ID,
  BOT1_TOKEN,
  BOT2_ID,
  BOT2_TOKEN,
  CAROL_ID,
  channelId,
  S1_ID,
  S1_TASKBOARD_TEAM,
  S2_ID,
  S3_ID,
  S4_ID,
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET,
  WEBHOOK_S1_ID,
  WEBHOOK_S1_TOKEN,
  WEBHOOK_S3_ID,
  WEBHOOK_S3_TOKEN
} from "./seed/Ids.ts"
import { GUILDS } from "./seed/Servers.ts"
import type { SeedBot, SeedChannel, SeedGuild, SeedUser } from "./seed/Shapes.ts"
import { USERS } from "./seed/Users.ts"
import { WEBHOOKS } from "./seed/Webhooks.ts"

export * from "./seed/Ids.ts"
export * from "./seed/Threads.ts"
export { ALL_PERMISSIONS, computePermissions, EVERYONE_PERMISSIONS, PermissionBits } from "./seed/Permissions.ts"
export type * from "./seed/Shapes.ts"
export { extraUsers } from "./seed/Users.ts"

/** Everything the sandbox starts with. Read-only: the sandbox copies what it mutates (webhooks). */
export const SEED = {
  users: USERS,
  bots: BOTS,
  guilds: GUILDS,
  webhooks: WEBHOOKS,
  ids: {
    users: { alice: ALICE_ID, bob: BOB_ID, carol: CAROL_ID },
    bots: { bot1: BOT1_ID, bot2: BOT2_ID },
    botTokens: { bot1: BOT1_TOKEN, bot2: BOT2_TOKEN },
    servers: { s1: S1_ID, s2: S2_ID, s3: S3_ID, s4: S4_ID },
    /** First text channel of each server (S1's holds the pre-existing webhook). */
    textChannels: { s1: channelId(1, 2), s2: channelId(2, 2), s3: channelId(3, 2), s4: channelId(4, 2) },
    webhooks: {
      s1: { id: WEBHOOK_S1_ID, token: WEBHOOK_S1_TOKEN },
      s3: { id: WEBHOOK_S3_ID, token: WEBHOOK_S3_TOKEN }
    }
  },
  /** S1 is paired with this task-board team. */
  taskboardTeam: S1_TASKBOARD_TEAM,
  oauth: { clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET }
} as const

export const findGuild = (guildId: string): SeedGuild | undefined => GUILDS.find((g) => g.id === guildId)
export const findUser = (userId: string): SeedUser | undefined => USERS.find((u) => u.id === userId)
export const findBotByToken = (token: string): SeedBot | undefined => BOTS.find((b) => b.token === token)
export const findChannel = (
  channelId: string
): { readonly guild: SeedGuild; readonly channel: SeedChannel } | undefined => {
  for (const guild of GUILDS) {
    const channel = guild.channels.find((c) => c.id === channelId)
    if (channel) return { guild, channel }
  }
  return undefined
}

/** The guilds a user or bot is a member of, in seed order. */
export const guildsOf = (userId: string): ReadonlyArray<SeedGuild> =>
  GUILDS.filter((g) => g.ownerId === userId || g.members.some((m) => m.userId === userId))
