/**
 * The settings tags of the services and the HTTP layer, cut from the parsed configuration: each
 * consumer sees only what it uses, and only this folder knows how the environment is read.
 */
import { Duration, Layer } from "effect"
import { HttpSettings } from "../../http/edge/HttpSettings.ts"
import { AuthSettings } from "../../services/auth/AuthSettings.ts"
import { DeliverySettings } from "../../services/delivery/DeliverySettings.ts"
import { DirectorySettings } from "../../services/platform/Directory.ts"
import { AppConfig } from "./AppConfig.ts"
import type { AppConfigShape } from "./AppConfig.ts"
import type { SourcePollerHttpOptions } from "../sources/poll/SourcePollerHttp.ts"
import { FeedsConfigEnv } from "./FeedsConfigEnv.ts"
import { FormsConfigEnv } from "./FormsConfigEnv.ts"

/** DeliverySettings from FEED_* (AppConfig's `delivery`). */
export const deliverySettings = (c: AppConfigShape) =>
  Layer.succeed(DeliverySettings, DeliverySettings.of({
    ...DeliverySettings.defaults,
    pollIntervalSeconds: c.delivery.pollIntervalSeconds,
    pollIntervalSecondsByModule: c.delivery.pollIntervalSecondsByModule,
    maxItemAgeHours: c.delivery.maxItemAgeHours,
    maxItemsPerPoll: c.delivery.maxItemsPerPoll,
    offlineGraceSeconds: c.delivery.offlineGraceSeconds,
    failedAfterHours: c.delivery.failedAfterHours
  }))

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
    deliverySettings(c),
    Layer.succeed(HttpSettings, HttpSettings.of({
      publicUrl: c.publicUrl,
      trustProxy: c.trustProxy,
      rateLimitApiPerMinute: c.rateLimitApiPerMinute,
      rateLimitAuthPerHour: c.rateLimitAuthPerHour
    }))
  )

/**
 * Every settings tag, from a parsed configuration (FeedsConfig and FormsSettings also read their
 * own variables: FeedsConfigEnv, FormsConfigEnv). A new layer per configuration: a build shares a
 * layer by reference, and two gateways in one process (tests) must each get their own settings.
 */
export const SettingsLive = (config: AppConfigShape) =>
  Layer.mergeAll(fromConfig(config), Layer.fresh(FeedsConfigEnv), Layer.fresh(FormsConfigEnv)).pipe(Layer.provide(Layer.succeed(AppConfig, config)))

/**
 * The source poller's options: the sources' clients as the mode gives them (sandbox twins, or the
 * credentials from the environment: SandboxMode's `pollerSources`), with the FEED_* fetch settings.
 */
export const pollerOptions = (c: AppConfigShape, sources: SourcePollerHttpOptions): SourcePollerHttpOptions => ({
  ...sources,
  userAgent: c.delivery.userAgent,
  contact: c.delivery.contact,
  timeout: Duration.millis(c.delivery.fetchTimeoutMs),
  maxBodyBytes: c.delivery.maxBodyBytes,
  hostConcurrency: c.delivery.hostConcurrency,
  offlineGraceSeconds: c.delivery.offlineGraceSeconds
})
