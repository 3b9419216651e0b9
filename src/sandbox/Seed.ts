/**
 * The sandbox chat platform's fixed data: users, bots, servers (guilds), channels, roles and webhooks
 * with FIXED ids, so tests and demos can name them. Permissions are decimal strings of Discord's bit
 * flags, exactly as Discord sends them.
 */

/** Discord permission bits the gateway checks, and the defaults the seed uses. */
export const PermissionBits = {
  CREATE_INSTANT_INVITE: 1n << 0n,
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  MANAGE_GUILD: 1n << 5n,
  ADD_REACTIONS: 1n << 6n,
  VIEW_AUDIT_LOG: 1n << 7n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  CONNECT: 1n << 20n,
  SPEAK: 1n << 21n,
  CHANGE_NICKNAME: 1n << 26n,
  MANAGE_WEBHOOKS: 1n << 29n,
  USE_APPLICATION_COMMANDS: 1n << 31n
} as const

/** Every permission bit Discord defines today (bits 0..50): what owners and administrators get. */
export const ALL_PERMISSIONS = (1n << 51n) - 1n

/** @everyone's permissions in every seeded server: none of MANAGE_GUILD, ADMINISTRATOR, VIEW_AUDIT_LOG, MANAGE_WEBHOOKS. */
export const EVERYONE_PERMISSIONS = PermissionBits.CREATE_INSTANT_INVITE | PermissionBits.ADD_REACTIONS |
  PermissionBits.VIEW_CHANNEL | PermissionBits.SEND_MESSAGES | PermissionBits.EMBED_LINKS |
  PermissionBits.ATTACH_FILES | PermissionBits.READ_MESSAGE_HISTORY | PermissionBits.CONNECT |
  PermissionBits.SPEAK | PermissionBits.CHANGE_NICKNAME | PermissionBits.USE_APPLICATION_COMMANDS

const BOT_BASE = PermissionBits.VIEW_CHANNEL | PermissionBits.SEND_MESSAGES | PermissionBits.EMBED_LINKS |
  PermissionBits.READ_MESSAGE_HISTORY

// ---- ids ----------------------------------------------------------------------------------------

export const ALICE_ID = "100000000000000001"
export const BOB_ID = "100000000000000002"
export const CAROL_ID = "100000000000000003"

export const BOT1_ID = "200000000000000001"
export const BOT2_ID = "200000000000000002"
export const BOT1_TOKEN = "sandbox-bot-1.token"
export const BOT2_TOKEN = "sandbox-bot-2.token"

export const S1_ID = "300000000000000001"
export const S2_ID = "300000000000000002"
export const S3_ID = "300000000000000003"
export const S4_ID = "300000000000000004"

/** The task-board team S1 is paired with (the task-board sandbox owns the team itself). */
export const S1_TASKBOARD_TEAM = "sandbox-team-1"

/** OAuth2 client of the sandbox (`client_id` / `client_secret`). */
export const SANDBOX_CLIENT_ID = "sandbox-client"
export const SANDBOX_CLIENT_SECRET = "sandbox-secret"

/** Channel ids: `310000000000000` + server digit + two-digit index (18 digits). */
export const channelId = (server: 1 | 2 | 3 | 4, index: number): string =>
  `310000000000000${server}${String(index).padStart(2, "0")}`
/** Role ids: `320000000000000` + server digit + two-digit index; @everyone's id is the server id. */
export const roleId = (server: 1 | 2 | 3 | 4, index: number): string =>
  `320000000000000${server}${String(index).padStart(2, "0")}`

/** Per server: 01 category (4), 02 first text (0), 03 second text (0), 04 news (5), 05 voice (2). */
export const CHANNEL_INDEX = { category: 1, text: 2, text2: 3, news: 4, voice: 5 } as const

export const WEBHOOK_S1_ID = "330000000000000101"
export const WEBHOOK_S1_TOKEN = "sandbox-webhook-s1-0000000000000000000000000000000000000000000000000"
export const WEBHOOK_S3_ID = "330000000000000301"
export const WEBHOOK_S3_TOKEN = "sandbox-webhook-s3-0000000000000000000000000000000000000000000000000"

// ---- shapes -------------------------------------------------------------------------------------

export interface SeedUser {
  readonly id: string
  readonly username: string
  readonly discriminator: "0"
  readonly global_name: string
  readonly avatar: string
  readonly locale: string
  readonly email: string
}

export interface SeedBot {
  readonly id: string
  readonly name: string
  readonly username: string
  readonly token: string
  readonly avatar: string
}

export interface SeedRole {
  readonly id: string
  readonly name: string
  readonly color: number
  /** Decimal string of the permission bits. */
  readonly permissions: string
  readonly position: number
  readonly hoist: boolean
  /** The bot whose integration manages this role (Discord's `tags.bot_id`). */
  readonly botId?: string
}

export interface SeedChannel {
  readonly id: string
  readonly name: string
  /** 0 text, 2 voice, 4 category, 5 news. */
  readonly type: 0 | 2 | 4 | 5
  readonly position: number
  readonly parent_id: string | null
  readonly topic: string | null
}

export interface SeedMember {
  readonly userId: string
  readonly roles: ReadonlyArray<string>
}

export interface SeedGuild {
  readonly id: string
  readonly name: string
  readonly icon: string
  readonly ownerId: string
  readonly botIds: ReadonlyArray<string>
  /** Users and bots; @everyone is implicit. */
  readonly members: ReadonlyArray<SeedMember>
  readonly roles: ReadonlyArray<SeedRole>
  readonly channels: ReadonlyArray<SeedChannel>
  readonly taskboardTeam: string | null
}

export interface SeedWebhook {
  readonly id: string
  readonly token: string
  readonly name: string
  readonly avatar: string | null
  readonly guildId: string
  readonly channelId: string
  /** The application (bot) that created it. */
  readonly applicationId: string
}

// ---- data ---------------------------------------------------------------------------------------

const users: Array<SeedUser> = [
  {
    id: ALICE_ID,
    username: "alice",
    discriminator: "0",
    global_name: "Alice",
    avatar: "a11ce0000000000000000000000000a1",
    locale: "en-US",
    email: "alice@sandbox.invalid"
  },
  {
    id: BOB_ID,
    username: "bob",
    discriminator: "0",
    global_name: "Bob",
    avatar: "b0b00000000000000000000000000b0b",
    locale: "en-US",
    email: "bob@sandbox.invalid"
  },
  {
    id: CAROL_ID,
    username: "carol",
    discriminator: "0",
    global_name: "Carol",
    avatar: "ca7010000000000000000000000000ca",
    locale: "en-US",
    email: "carol@sandbox.invalid"
  }
]

/**
 * Extra users for load tests (`SANDBOX_EXTRA_USERS=N`, at most 10,000): `loadN`, ids
 * `11` + 16 digits, members of S1 with its Moderators role (MANAGE_GUILD, VIEW_AUDIT_LOG).
 */
export const extraUsers = (count: number): ReadonlyArray<SeedUser> =>
  Array.from({ length: Math.max(0, Math.min(10_000, Math.floor(count))) }, (_, i) => ({
    id: `11${String(i + 1).padStart(16, "0")}`,
    username: `load${i + 1}`,
    discriminator: "0" as const,
    global_name: `Load ${i + 1}`,
    avatar: `10ad${String(i + 1).padStart(28, "0")}`,
    locale: "en-US",
    email: `load${i + 1}@sandbox.invalid`
  }))

const extra = extraUsers(Number(globalThis.process?.env?.["SANDBOX_EXTRA_USERS"] ?? 0) || 0)
users.push(...extra)

const bots: ReadonlyArray<SeedBot> = [
  { id: BOT1_ID, name: "FormsBot", username: "FormsBot", token: BOT1_TOKEN, avatar: "f0000000000000000000000000000b01" },
  { id: BOT2_ID, name: "FeedsBot", username: "FeedsBot", token: BOT2_TOKEN, avatar: "fe000000000000000000000000000b02" }
]

const perms = (...bits: ReadonlyArray<bigint>): string => bits.reduce((a, b) => a | b, 0n).toString()

const everyone = (guildId: string): SeedRole => ({
  id: guildId,
  name: "@everyone",
  color: 0,
  permissions: EVERYONE_PERMISSIONS.toString(),
  position: 0,
  hoist: false
})

const botRole = (server: 1 | 2 | 3 | 4, index: number, bot: SeedBot, manageWebhooks: boolean): SeedRole => ({
  id: roleId(server, index),
  name: bot.name,
  color: 0,
  permissions: manageWebhooks ? perms(BOT_BASE, PermissionBits.MANAGE_WEBHOOKS) : perms(BOT_BASE),
  position: 10 + index,
  hoist: false,
  botId: bot.id
})

const channels = (server: 1 | 2 | 3 | 4): ReadonlyArray<SeedChannel> => {
  const category = channelId(server, CHANNEL_INDEX.category)
  return [
    { id: category, name: "Text Channels", type: 4, position: 0, parent_id: null, topic: null },
    { id: channelId(server, CHANNEL_INDEX.text), name: "general", type: 0, position: 1, parent_id: category, topic: "General chat" },
    { id: channelId(server, CHANNEL_INDEX.text2), name: "feeds", type: 0, position: 2, parent_id: category, topic: null },
    { id: channelId(server, CHANNEL_INDEX.news), name: "announcements", type: 5, position: 3, parent_id: category, topic: null },
    { id: channelId(server, CHANNEL_INDEX.voice), name: "Lounge", type: 2, position: 4, parent_id: null, topic: null }
  ]
}

const [bot1, bot2] = bots as readonly [SeedBot, SeedBot]

const guilds: ReadonlyArray<SeedGuild> = [
  {
    id: S1_ID,
    name: "Sandbox One",
    icon: "51000000000000000000000000000001",
    ownerId: ALICE_ID,
    botIds: [BOT1_ID, BOT2_ID],
    roles: [
      everyone(S1_ID),
      { id: roleId(1, 1), name: "Moderators", color: 0xE74C3C, permissions: perms(PermissionBits.MANAGE_GUILD, PermissionBits.VIEW_AUDIT_LOG), position: 3, hoist: true },
      { id: roleId(1, 2), name: "Members", color: 0x3498DB, permissions: "0", position: 1, hoist: false },
      botRole(1, 3, bot1, true),
      botRole(1, 4, bot2, true)
    ],
    members: [
      { userId: ALICE_ID, roles: [] },
      { userId: BOB_ID, roles: [roleId(1, 2)] },
      { userId: BOT1_ID, roles: [roleId(1, 3)] },
      { userId: BOT2_ID, roles: [roleId(1, 4)] },
      ...extra.map((u) => ({ userId: u.id, roles: [roleId(1, 1)] }))
    ],
    channels: channels(1),
    taskboardTeam: S1_TASKBOARD_TEAM
  },
  {
    id: S2_ID,
    name: "Sandbox Two",
    icon: "52000000000000000000000000000002",
    ownerId: CAROL_ID,
    botIds: [BOT1_ID],
    roles: [
      everyone(S2_ID),
      { id: roleId(2, 1), name: "Managers", color: 0xE74C3C, permissions: perms(PermissionBits.MANAGE_GUILD), position: 2, hoist: true },
      { id: roleId(2, 2), name: "Helpers", color: 0x2ECC71, permissions: "0", position: 1, hoist: false },
      // FormsBot lacks MANAGE_WEBHOOKS here on purpose.
      botRole(2, 3, bot1, false)
    ],
    members: [
      { userId: CAROL_ID, roles: [] },
      { userId: ALICE_ID, roles: [roleId(2, 1)] },
      { userId: BOT1_ID, roles: [roleId(2, 3)] }
    ],
    channels: channels(2),
    taskboardTeam: null
  },
  {
    id: S3_ID,
    name: "Sandbox Three",
    icon: "53000000000000000000000000000003",
    ownerId: CAROL_ID,
    botIds: [BOT1_ID, BOT2_ID],
    roles: [
      everyone(S3_ID),
      { id: roleId(3, 1), name: "Admins", color: 0xE74C3C, permissions: perms(PermissionBits.ADMINISTRATOR), position: 3, hoist: true },
      { id: roleId(3, 2), name: "Members", color: 0x3498DB, permissions: "0", position: 1, hoist: false },
      botRole(3, 3, bot1, true),
      botRole(3, 4, bot2, true)
    ],
    members: [
      { userId: CAROL_ID, roles: [] },
      { userId: BOB_ID, roles: [roleId(3, 1)] },
      { userId: ALICE_ID, roles: [roleId(3, 2)] },
      { userId: BOT1_ID, roles: [roleId(3, 3)] },
      { userId: BOT2_ID, roles: [roleId(3, 4)] }
    ],
    channels: channels(3),
    taskboardTeam: null
  },
  {
    id: S4_ID,
    name: "Sandbox Four",
    icon: "54000000000000000000000000000004",
    ownerId: BOB_ID,
    botIds: [BOT2_ID],
    roles: [
      everyone(S4_ID),
      {
        id: roleId(4, 1),
        name: "Webmasters",
        color: 0x9B59B6,
        permissions: perms(PermissionBits.MANAGE_GUILD, PermissionBits.MANAGE_WEBHOOKS, PermissionBits.VIEW_AUDIT_LOG),
        position: 2,
        hoist: true
      },
      { id: roleId(4, 2), name: "Members", color: 0xF1C40F, permissions: "0", position: 1, hoist: false },
      botRole(4, 3, bot2, true)
    ],
    members: [
      { userId: BOB_ID, roles: [] },
      { userId: CAROL_ID, roles: [roleId(4, 1)] },
      { userId: BOT2_ID, roles: [roleId(4, 3)] }
    ],
    channels: channels(4),
    taskboardTeam: null
  }
]

const webhooks: ReadonlyArray<SeedWebhook> = [
  {
    id: WEBHOOK_S1_ID,
    token: WEBHOOK_S1_TOKEN,
    name: "FeedsBot S1",
    avatar: null,
    guildId: S1_ID,
    channelId: channelId(1, CHANNEL_INDEX.text),
    applicationId: BOT2_ID
  },
  {
    id: WEBHOOK_S3_ID,
    token: WEBHOOK_S3_TOKEN,
    name: "FeedsBot S3",
    avatar: null,
    guildId: S3_ID,
    channelId: channelId(3, CHANNEL_INDEX.text),
    applicationId: BOT2_ID
  }
]

/** Everything the sandbox starts with. Read-only: the sandbox copies what it mutates (webhooks). */
export const SEED = {
  users,
  bots,
  guilds,
  webhooks,
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

// ---- lookups and permissions --------------------------------------------------------------------

export const findGuild = (guildId: string): SeedGuild | undefined => guilds.find((g) => g.id === guildId)
export const findUser = (userId: string): SeedUser | undefined => users.find((u) => u.id === userId)
export const findBotByToken = (token: string): SeedBot | undefined => bots.find((b) => b.token === token)
export const findChannel = (
  channelId: string
): { readonly guild: SeedGuild; readonly channel: SeedChannel } | undefined => {
  for (const guild of guilds) {
    const channel = guild.channels.find((c) => c.id === channelId)
    if (channel) return { guild, channel }
  }
  return undefined
}

/**
 * A member's computed guild-level permissions, Discord's way: the owner gets everything; otherwise
 * @everyone OR the member's roles, and ADMINISTRATOR implies everything. `undefined` when not a member.
 */
export const computePermissions = (guild: SeedGuild, userId: string): bigint | undefined => {
  if (guild.ownerId === userId) return ALL_PERMISSIONS
  const member = guild.members.find((m) => m.userId === userId)
  if (!member) return undefined
  let bits = 0n
  for (const role of guild.roles) {
    if (role.id === guild.id || member.roles.includes(role.id)) bits |= BigInt(role.permissions)
  }
  return (bits & PermissionBits.ADMINISTRATOR) !== 0n ? ALL_PERMISSIONS : bits
}

/** The guilds a user or bot is a member of, in seed order. */
export const guildsOf = (userId: string): ReadonlyArray<SeedGuild> =>
  guilds.filter((g) => g.ownerId === userId || g.members.some((m) => m.userId === userId))
