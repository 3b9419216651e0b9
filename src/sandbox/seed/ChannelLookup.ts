/**
 * `GET /channels/{id}` of the sandbox: a seeded channel, thread or forum as Discord's channel object
 * (GuildChannelResponse / ThreadResponse / a forum's `available_tags`), with the server it is in.
 */
import * as Shapes from "../DiscordShapes.ts"
import { findChannel, findForum, findGuild, findThread, FORUM, PUBLIC_THREAD } from "../Seed.ts"

export const lookupChannel = (channelId: string): { readonly guildId: string; readonly body: Record<string, unknown> } | undefined => {
  const seeded = findChannel(channelId)
  if (seeded) return { guildId: seeded.guild.id, body: Shapes.channel(seeded.guild, seeded.channel) }
  const thread = findThread(channelId)
  if (thread) {
    return {
      guildId: thread.guildId,
      body: {
        id: thread.id, type: PUBLIC_THREAD, guild_id: thread.guildId, name: thread.name, parent_id: thread.parent_id, flags: 0,
        thread_metadata: { archived: false, auto_archive_duration: 10080, locked: false, archive_timestamp: "2026-01-01T00:00:00.000000+00:00" }
      }
    }
  }
  const forum = findForum(channelId)
  if (forum && findGuild(forum.guildId)) {
    return {
      guildId: forum.guildId,
      body: {
        id: forum.id, type: FORUM, guild_id: forum.guildId, name: forum.name, parent_id: null, flags: 0, position: 6,
        permission_overwrites: [],
        available_tags: forum.tags.map((t) => ({ id: t.id, name: t.name, moderated: false, emoji_id: null, emoji_name: null }))
      }
    }
  }
  return undefined
}
