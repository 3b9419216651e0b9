/**
 * The ChatPlatform contract on every layer: the live Discord client against the sandbox served on a
 * loopback port, and the memory layer over the same seed.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import {
  ALICE_ID,
  ALL_PERMISSIONS,
  BOT1_TOKEN,
  BOT2_ID,
  BOT2_TOKEN,
  CHANNEL_INDEX,
  channelId,
  EVERYONE_PERMISSIONS,
  PermissionBits,
  roleId,
  S1_ID,
  S2_ID,
  S3_ID,
  S4_ID,
  WEBHOOK_S1_ID,
  WEBHOOK_S1_TOKEN
} from "../../src/sandbox/Seed.ts"
import { ChatPlatformMemory, ChatPlatformMemoryState } from "../layers/ChatPlatformMemory.ts"
import { chatPlatformContract, type ChatPlatformFixture } from "./ChatPlatform.contract.ts"
import { approveOnSandbox } from "./SandboxSignInFixtures.ts"

// Written out rather than computed with the sandbox's own helpers, so a wrong rule in either layer shows.
const fixture: Omit<ChatPlatformFixture<never>, "approve"> = {
  user: {
    profile: { id: ALICE_ID, username: "alice", discriminator: "0", global_name: "Alice", avatar: "a11ce0000000000000000000000000a1", locale: "en-US" },
    guilds: [
      { id: S1_ID, owner: true, permissions: ALL_PERMISSIONS.toString() },
      { id: S2_ID, owner: false, permissions: (EVERYONE_PERMISSIONS | PermissionBits.MANAGE_GUILD).toString() },
      { id: S3_ID, owner: false, permissions: EVERYONE_PERMISSIONS.toString() }
    ]
  },
  bot: { token: BOT2_TOKEN, id: BOT2_ID, username: "FeedsBot", guildIds: [S1_ID, S3_ID, S4_ID] },
  guild: {
    id: S1_ID,
    name: "Sandbox One",
    ownerId: ALICE_ID,
    channels: [
      { id: channelId(1, CHANNEL_INDEX.category), type: 4 },
      { id: channelId(1, CHANNEL_INDEX.text), type: 0 },
      { id: channelId(1, CHANNEL_INDEX.text2), type: 0 },
      { id: channelId(1, CHANNEL_INDEX.news), type: 5 },
      { id: channelId(1, CHANNEL_INDEX.voice), type: 2 }
    ],
    roleIds: [S1_ID, roleId(1, 1), roleId(1, 2), roleId(1, 3), roleId(1, 4)],
    textChannel: channelId(1, CHANNEL_INDEX.text),
    newsChannel: channelId(1, CHANNEL_INDEX.news),
    category: channelId(1, CHANNEL_INDEX.category),
    webhook: { id: WEBHOOK_S1_ID, token: WEBHOOK_S1_TOKEN },
    thread: { id: channelId(1, 10), name: "feed-updates", parent_id: channelId(1, CHANNEL_INDEX.text) }
  },
  otherGuild: S2_ID,
  missingGuild: "399999999999999999",
  missingChannel: "319999999999999999",
  outsideChannel: channelId(2, CHANNEL_INDEX.text),
  // FormsBot lacks MANAGE_WEBHOOKS in S2.
  withoutManageWebhooks: { token: BOT1_TOKEN, channel: channelId(2, CHANNEL_INDEX.text) }
}

/** The live client pointed at a sandbox of its own, on a free loopback port. */
const Discord = Layer.unwrap(Effect.gen(function*() {
  const sandbox = yield* SandboxServer
  return ChatPlatformDiscord.layer(SandboxMode.platform(sandbox.url))
})).pipe(Layer.provide(Layer.mergeAll(SandboxServer.layer(), FetchHttpClient.layer)))


chatPlatformContract("ChatPlatformDiscord against the sandbox", Discord, { ...fixture, approve: approveOnSandbox })

chatPlatformContract("ChatPlatformMemory", ChatPlatformMemory, {
  ...fixture,
  approve: (url, userId) => ChatPlatformMemoryState.use((s) => s.approve(url, userId))
})
