/**
 * The sandbox's FIXED ids and secrets (users, bots, servers, channels, roles, webhooks, OAuth client),
 * so tests and demos can name them. Snowflake-shaped: 18 digits, a leading digit per kind.
 */

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

/** A server's id by its digit. */
export const GUILDS_BY_DIGIT = { 1: S1_ID, 2: S2_ID, 3: S3_ID, 4: S4_ID } as const
