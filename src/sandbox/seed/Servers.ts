/**
 * The sandbox's four servers (guilds) with their roles, members and channels. Each shows a case the
 * gateway must handle: S1 owned by Alice with both bots; S2 where FormsBot lacks MANAGE_WEBHOOKS;
 * S3 where an ADMINISTRATOR role stands in for ownership; S4 with FeedsBot alone.
 */
import { BOT1, BOT2 } from "./Bots.ts"
import {
  ALICE_ID,
  BOB_ID,
  BOT1_ID,
  BOT2_ID,
  CAROL_ID,
  CHANNEL_INDEX,
  channelId,
  roleId,
  S1_ID,
  S1_TASKBOARD_TEAM,
  S2_ID,
  S3_ID,
  S4_ID
} from "./Ids.ts"
import { BOT_BASE, EVERYONE_PERMISSIONS, PermissionBits, perms } from "./Permissions.ts"
import type { SeedBot, SeedChannel, SeedGuild, SeedRole } from "./Shapes.ts"
import { EXTRA_USERS } from "./Users.ts"

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

export const GUILDS: ReadonlyArray<SeedGuild> = [
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
      botRole(1, 3, BOT1, true),
      botRole(1, 4, BOT2, true)
    ],
    members: [
      { userId: ALICE_ID, roles: [] },
      { userId: BOB_ID, roles: [roleId(1, 2)] },
      { userId: BOT1_ID, roles: [roleId(1, 3)] },
      { userId: BOT2_ID, roles: [roleId(1, 4)] },
      ...EXTRA_USERS.map((u) => ({ userId: u.id, roles: [roleId(1, 1)] }))
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
      botRole(2, 3, BOT1, false)
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
      botRole(3, 3, BOT1, true),
      botRole(3, 4, BOT2, true)
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
      botRole(4, 3, BOT2, true)
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
