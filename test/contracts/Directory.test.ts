/**
 * The Directory contract: DirectoryLive over each chat platform layer, the live Discord client
 * against the sandbox served on a loopback port and ChatPlatformMemory over the same seed.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { ChatPlatformDiscord } from "../../src/layers/platform/discord/ChatPlatformDiscord.ts"
import { SandboxServer } from "../../src/sandbox/Sandbox.ts"
import { SandboxMode } from "../../src/sandbox/SandboxMode.ts"
import { ChatPlatformMemory, ChatPlatformMemoryState } from "../layers/ChatPlatformMemory.ts"
import { directoryContract } from "./Directory.contract.ts"
import { approveOnSandbox } from "./SandboxSignInFixtures.ts"

/** The live client pointed at a sandbox of its own, on a free loopback port. */
const Discord = Layer.unwrap(Effect.map(SandboxServer, (sandbox) => ChatPlatformDiscord.layer(SandboxMode.platform(sandbox.url))))
  .pipe(Layer.provide(Layer.mergeAll(SandboxServer.layer(), FetchHttpClient.layer)))

directoryContract("DirectoryLive over ChatPlatformDiscord against the sandbox", Discord, approveOnSandbox)

directoryContract("DirectoryLive over ChatPlatformMemory", ChatPlatformMemory, (url, userId) => ChatPlatformMemoryState.use((s) => s.approve(url, userId)))
