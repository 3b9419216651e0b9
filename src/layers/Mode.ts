/**
 * What sandbox mode and platform mode differ in, and platform mode itself: the configured Discord
 * application, sources from the environment, paired task boards. The composition root (App.ts)
 * takes a Mode as a parameter; the one sandbox-or-platform choice is made by its caller
 * (src/sandbox/SandboxMode.ts `SandboxMode.of`, used by src/main.ts and src/cli.ts), so layers/
 * never imports the sandbox.
 */
import { Config, Layer } from "effect"
import type { HttpRouter } from "effect/http"
import type { AppConfigShape } from "./config/AppConfig.ts"
import type { DiscordChatPlatformOptions } from "./platform/discord/ChatPlatformDiscord.ts"
import { ExternalSourcesHttp } from "./sources/ExternalSourcesHttp.ts"
import { SourcePollerHttp } from "./sources/poll/SourcePollerHttp.ts"
import type { SourcePollerHttpOptions } from "./sources/poll/SourcePollerHttp.ts"
import { TaskBoardTrello } from "./taskboard/TaskBoardTrello.ts"
import type { ServiceUnavailable } from "../domain/infra/Errors.ts"
import type { Bots } from "../services/platform/Bots.ts"

/** Where the chat platform is and the gateway's OAuth client there (timeouts and caches are the caller's). */
export type PlatformClient = Pick<DiscordChatPlatformOptions, "baseUrl" | "authorizeUrl" | "clientId" | "clientSecret">

/** What sandbox mode and platform mode differ in. */
export interface Mode {
  readonly platform: PlatformClient
  /** Needs an HttpClient; platform mode reads the sources' credentials from the environment. */
  readonly sources: ReturnType<typeof ExternalSourcesHttp.layerConfig>
  /** Needs an HttpClient; platform mode reads pairings from the registry. */
  readonly taskBoard: ReturnType<typeof TaskBoardTrello.layerPairings>
  /** The source poller's connectors (the lookup clients' base URLs and credentials); the FEED_* settings are added by layers/config/Settings.ts. */
  readonly pollerSources: Config.Config<SourcePollerHttpOptions>
  /** Mounted next to the API. */
  readonly routes: Layer.Layer<never, never, HttpRouter.HttpRouter>
  /** Run once at start. */
  readonly startup: Layer.Layer<never, ServiceUnavailable, Bots>
}

/** Platform mode: the configured Discord application, sources from the environment, paired task boards. */
export const platformMode = (config: AppConfigShape): Mode => ({
  platform: { baseUrl: config.discordApiUrl, clientId: config.discordClientId!, clientSecret: config.discordClientSecret! },
  sources: ExternalSourcesHttp.layerConfig(config.upstreamTimeoutMs),
  taskBoard: TaskBoardTrello.layerPairings({ timeout: config.upstreamTimeoutMs }),
  pollerSources: Config.map(ExternalSourcesHttp.config(config.upstreamTimeoutMs), SourcePollerHttp.fromExternalSources),
  routes: Layer.empty,
  startup: Layer.empty
})
