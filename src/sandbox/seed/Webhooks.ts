/** The webhooks the sandbox starts with: one FeedsBot webhook in the first text channel of S1 and of S3. */
import { BOT2_ID, CHANNEL_INDEX, channelId, S1_ID, S3_ID, WEBHOOK_S1_ID, WEBHOOK_S1_TOKEN, WEBHOOK_S3_ID, WEBHOOK_S3_TOKEN } from "./Ids.ts"
import type { SeedWebhook } from "./Shapes.ts"

export const WEBHOOKS: ReadonlyArray<SeedWebhook> = [
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
