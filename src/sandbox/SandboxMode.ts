/**
 * Sandbox mode, wired in one module, and the one place the gateway chooses between it and the real
 * upstreams (`config.sandbox`: SANDBOX=true, or by default on a loopback address without platform
 * credentials: AppConfig.ts `check`, decisions.md "Sandbox mode"). In sandbox mode the live
 * clients (chat platform, external sources, task board) are pointed at the sandbox served under
 * PUBLIC_URL with its seeded credentials, the sandbox's routes are mounted and its bots registered at
 * start. The live adapters (src/layers) know nothing of the sandbox: only their options differ.
 * The composition root (src/layers/App.ts) takes the chosen Mode as a parameter: src/main.ts,
 * src/cli.ts and test/utils/TestApp.ts choose here.
 */
import { Config, Effect, Layer, Redacted } from "effect"
import type { Duration } from "effect"
import type { HttpRouter } from "effect/http"
import type { AppConfigShape } from "../layers/config/AppConfig.ts"
import { isLoopbackHost } from "../layers/config/AppConfig.ts"
import { platformMode } from "../layers/Mode.ts"
import type { Mode, PlatformClient } from "../layers/Mode.ts"
import type { ExternalSourcesOptions } from "../layers/sources/ExternalSourcesHttp.ts"
import { ExternalSourcesHttp } from "../layers/sources/ExternalSourcesHttp.ts"
import { SourcePollerHttp } from "../layers/sources/poll/SourcePollerHttp.ts"
import { DEFAULT_TIMEOUT } from "../layers/sources/Upstream.ts"
import type { TaskBoardOptions, TaskBoardPairing } from "../layers/taskboard/TaskBoardTrello.ts"
import { TaskBoardTrello } from "../layers/taskboard/TaskBoardTrello.ts"
import { Bots } from "../services/platform/Bots.ts"
import { SandboxCallbackRoute } from "./Callback.ts"
import { SandboxConfig } from "./DiscordConfig.ts"
import { SANDBOX_DISCORD_API, SANDBOX_DISCORD_AUTHORIZE } from "./DiscordSandbox.ts"
import { SandboxRoutes } from "./Sandbox.ts"
import { BOT1_ID, BOT2_ID, S1_ID, S1_TASKBOARD_TEAM, SEED } from "./Seed.ts"

const originOf = (publicUrl: string) => publicUrl.replace(/\/+$/, "")

/** The platform's URLs when the gateway serves its own sandbox at `publicUrl`. */
const platformUrls = (publicUrl: string) => {
  const base = originOf(publicUrl)
  return {
    baseUrl: `${base}${SANDBOX_DISCORD_API}`,
    authorizeUrl: `${base}${SANDBOX_DISCORD_AUTHORIZE}`
  } as const
}

/** The sandbox platform: its URLs and its seeded OAuth client. */
const platform = (publicUrl: string): PlatformClient => ({
  ...platformUrls(publicUrl),
  clientId: SEED.oauth.clientId,
  clientSecret: Redacted.make(SEED.oauth.clientSecret)
})

/** The sandbox's own Instagram account id (any id works with the twin). */
export const SANDBOX_INSTAGRAM_USER_ID = "17841400000000001"

/**
 * Every source client pointed at its sandbox twin under `${publicUrl}/sandbox/<source>`, with the
 * placeholder credential "sandbox"; RSS may fetch loopback and private addresses (the sandbox's feeds).
 */
const sourcesOptions = (publicUrl: string, timeout: Duration.Input = DEFAULT_TIMEOUT): ExternalSourcesOptions => {
  const base = `${originOf(publicUrl)}/sandbox`
  const placeholder = Redacted.make("sandbox")
  return {
    timeout,
    streaming: { clientId: "sandbox", clientSecret: placeholder, apiUrl: `${base}/streaming`, authUrl: `${base}/streaming` },
    video: { apiKey: placeholder, baseUrl: `${base}/video/youtube/v3` },
    microblog: { bearerToken: placeholder, baseUrl: `${base}/microblog` },
    photo: { accessToken: placeholder, userId: SANDBOX_INSTAGRAM_USER_ID, baseUrl: `${base}/photo` },
    forum: { clientId: "sandbox", clientSecret: placeholder, apiUrl: `${base}/forum`, authUrl: `${base}/forum` },
    rss: { allowPrivateAddresses: true }
  }
}

/** The sandbox's one pairing: server S1 with team "sandbox-team-1", placeholder credentials. */
const pairings = (serverId: string): Effect.Effect<TaskBoardPairing | undefined> =>
  Effect.succeed(
    serverId === S1_ID
      ? { teamId: S1_TASKBOARD_TEAM, key: Redacted.make("sandbox"), token: Redacted.make("sandbox") }
      : undefined
  )

/** The task-board client pointed at the sandbox's Trello twin, with the sandbox's pairing. */
const taskBoardOptions = (publicUrl: string, timeout?: Duration.Input): TaskBoardOptions => ({
  baseUrl: `${originOf(publicUrl)}/sandbox/taskboard`,
  pairings,
  timeout
})

/** The sandbox's bots, registered at start so a newcomer can use every route at once. */
const bots = Layer.effectDiscard(Effect.gen(function*() {
  const registry = yield* Bots
  for (const b of SEED.bots) {
    yield* registry.upsert({ id: b.id, name: b.name, icon: b.avatar, token: Redacted.make(b.token) })
  }
  yield* Effect.logInfo("sandbox bots registered", { bots: [BOT1_ID, BOT2_ID] })
}))

/**
 * Every `/sandbox` route, and the landing page of browser sign-ins, for a gateway at `publicUrl`:
 * webhook URLs and feed identifiers under it, and its own callback the one registered redirect URI.
 */
const routes = (publicUrl: string): Layer.Layer<never, never, HttpRouter.HttpRouter> =>
  Layer.merge(SandboxRoutes, SandboxCallbackRoute).pipe(
    Layer.provide(Layer.effect(
      SandboxConfig,
      Effect.gen(function*() {
        const defaults = yield* SandboxConfig
        return { ...defaults, publicOrigin: originOf(publicUrl), redirectUris: [`${originOf(publicUrl)}/auth/idp/callback`] }
      })
    ))
  )

/** Sandbox mode's start: a warning when it is reachable beyond this machine, then the bots. */
const startup = (config: Pick<AppConfigShape, "host" | "publicUrl">) =>
  isLoopbackHost(config.host) && isLoopbackHost(new URL(config.publicUrl).hostname)
    ? bots
    : Layer.merge(
      bots,
      Layer.effectDiscard(Effect.logWarning(
        `sandbox mode on a non-loopback address (HOST=${config.host}, PUBLIC_URL=${config.publicUrl}): anyone who reaches it can sign in as any sandbox user without a password and inject faults; use it on a developer's machine only`
      ))
    )

type UpstreamConfig = Pick<AppConfigShape, "publicUrl" | "upstreamTimeoutMs"> & Partial<Pick<AppConfigShape, "host">>

/** Sandbox mode for a gateway at `config.publicUrl` (the layers need only an HttpClient, and Bots at start). */
const sandbox = (config: UpstreamConfig) => ({
  platform: platform(config.publicUrl),
  sources: ExternalSourcesHttp.layer(sourcesOptions(config.publicUrl, config.upstreamTimeoutMs)),
  taskBoard: TaskBoardTrello.layer(taskBoardOptions(config.publicUrl, config.upstreamTimeoutMs)),
  pollerSources: Config.succeed(SourcePollerHttp.fromExternalSources(sourcesOptions(config.publicUrl, config.upstreamTimeoutMs))),
  routes: routes(config.publicUrl),
  startup: startup({ host: config.host ?? "127.0.0.1", publicUrl: config.publicUrl })
}) satisfies Mode

export const SandboxMode = {
  /** The mode the configuration asks for: the one sandbox-or-platform choice. */
  of: (config: AppConfigShape): Mode => config.sandbox ? sandbox(config) : platformMode(config),
  /** Sandbox mode itself, whatever the configuration says (tests that always mount the sandbox). */
  sandbox,
  platformUrls,
  platform,
  sourcesOptions,
  taskBoardOptions,
  pairings
} as const
