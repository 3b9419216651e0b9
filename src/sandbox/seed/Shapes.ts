/** The shapes of the sandbox chat platform's seed data (DiscordShapes.ts turns them into Discord's wire objects). */

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
