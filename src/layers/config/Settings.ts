/**
 * The settings tags of the services and the HTTP layer, cut from the parsed configuration: each
 * consumer sees only what it uses, and only this folder knows how the environment is read.
 */
import { Layer } from "effect"
import { HttpSettings } from "../../http/HttpSettings.ts"
import { AuthSettings } from "../../services/AuthSettings.ts"
import { DirectorySettings } from "../../services/Directory.ts"
import { AppConfig } from "./AppConfig.ts"
import type { AppConfigShape } from "./AppConfig.ts"
import { FeedsConfigEnv } from "./FeedsConfigEnv.ts"

const fromConfig = (c: AppConfigShape) =>
  Layer.mergeAll(
    Layer.succeed(AuthSettings, AuthSettings.of({
      publicUrl: c.publicUrl,
      allowedRedirectUris: c.allowedRedirectUris,
      accessTokenTtlSeconds: c.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: c.refreshTokenTtlSeconds,
      temporaryTokenTtlSeconds: c.temporaryTokenTtlSeconds,
      signInStateTtlSeconds: c.signInStateTtlSeconds
    })),
    Layer.succeed(DirectorySettings, DirectorySettings.of({ publicUrl: c.publicUrl })),
    Layer.succeed(HttpSettings, HttpSettings.of({
      publicUrl: c.publicUrl,
      trustProxy: c.trustProxy,
      rateLimitApiPerMinute: c.rateLimitApiPerMinute,
      rateLimitAuthPerHour: c.rateLimitAuthPerHour
    }))
  )

/**
 * Every settings tag, from a parsed configuration (FeedsConfig also reads its own variables:
 * FeedsConfigEnv). A new layer per configuration: a build shares a layer by reference, and two
 * gateways in one process (tests) must each get their own settings.
 */
export const SettingsLive = (config: AppConfigShape) =>
  Layer.mergeAll(fromConfig(config), Layer.fresh(FeedsConfigEnv)).pipe(Layer.provide(Layer.succeed(AppConfig, config)))
