/**
 * Discord's permission bits as the sandbox seeds and computes them: decimal strings of the bit flags
 * on the wire, exactly as Discord sends them, and a member's guild-level permissions computed Discord's way.
 */
import type { SeedGuild } from "./Shapes.ts"

/** Discord permission bits the gateway checks, and the defaults the seed uses. */
export const PermissionBits = {
  CREATE_INSTANT_INVITE: 1n << 0n,
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  MANAGE_GUILD: 1n << 5n,
  MANAGE_MESSAGES: 1n << 13n,
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

/**
 * What every seeded bot's role allows (MANAGE_WEBHOOKS is added per server). MANAGE_MESSAGES: so it
 * may publish (crosspost) in the announcement channels of its servers (delivery.md §10); the sandbox
 * has no channel overwrites, so it holds it server-wide.
 */
export const BOT_BASE = PermissionBits.VIEW_CHANNEL | PermissionBits.SEND_MESSAGES | PermissionBits.MANAGE_MESSAGES |
  PermissionBits.EMBED_LINKS | PermissionBits.READ_MESSAGE_HISTORY

/** Bits as Discord's decimal string. */
export const perms = (...bits: ReadonlyArray<bigint>): string => bits.reduce((a, b) => a | b, 0n).toString()

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
