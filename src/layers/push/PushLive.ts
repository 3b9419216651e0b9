/**
 * The push connectors' wiring (delivery.md §9), for src/layers/App.ts: whether push is on, the
 * backstop DeliveryScheduling consults, the Push service over the SQL store and the platforms'
 * endpoints, and the workers' sweep.
 * - On when PUSH=on, or PUSH=auto (the default) and PUBLIC_URL is https: the platforms call back
 *   only over https. The sandbox's hub and EventSub call back over anything, so tests and a local
 *   sandbox set PUSH=on.
 * - WebSub when the video source is configured (its polls read what a notification announces),
 *   EventSub when the streaming source's client id and secret are (the subscriptions need an app
 *   token). In sandbox mode both point at the sandbox's twins (src/sandbox/PushHub.ts).
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import type { HttpClient, HttpRouter } from "effect/http"
import type { SqlClient } from "effect/sql"
import { HookRoutes } from "../../http/push/Hooks.ts"
import type { Cipher } from "../../services/infra/Cipher.ts"
import type { DeliveryScheduling } from "../../services/delivery/DeliveryScheduling.ts"
import type { DeliverySettings } from "../../services/delivery/DeliverySettings.ts"
import type { DeliveryStore } from "../../services/delivery/DeliveryStore.ts"
import type { JobEngine } from "../../services/jobs/JobEngine.ts"
import { Push } from "../../services/push/Push.ts"
import { PushBackstop } from "../../services/push/PushBackstop.ts"
import { PushSettings } from "../../services/push/PushSettings.ts"
import type { AppConfigShape, PushConfig } from "../config/AppConfig.ts"
import type { SourcePollerHttpOptions } from "../sources/poll/SourcePollerHttp.ts"
import { PushHubsHttp } from "./PushHubsHttp.ts"
import { PushStoreSql } from "./PushStoreSql.ts"

export const pushDefaults: PushConfig = { mode: "auto", leaseSeconds: 432_000, sweepSeconds: 60, websubHubUrl: undefined }

const pushOf = (config: Pick<AppConfigShape, "push">) => config.push ?? pushDefaults

/** Push is on for this configuration. */
export const pushEnabled = (config: Pick<AppConfigShape, "publicUrl" | "push">) => {
  const mode = pushOf(config).mode
  return mode === "on" || (mode === "auto" && config.publicUrl.startsWith("https://"))
}

/** The sandbox's hub, when the gateway serves its sandbox at `publicUrl`. */
export const SANDBOX_WEBSUB_HUB = "/sandbox/push/websub/hub"

const settingsOf = (config: Pick<AppConfigShape, "publicUrl" | "push">) => {
  const p = pushOf(config)
  return Layer.succeed(PushSettings, PushSettings.of({
    publicUrl: config.publicUrl.replace(/\/+$/, ""),
    leaseSeconds: p.leaseSeconds,
    // Unverified subscriptions are asked again after ten sweeps, from 5 s to 5 minutes.
    retrySeconds: Math.min(300, Math.max(5, 10 * p.sweepSeconds)),
    backstopSeconds: PushSettings.defaults.backstopSeconds
  }))
}

/**
 * The push layers of a configuration, both empty when push is off. Typed as providing nothing:
 * DeliveryScheduling finds PushBackstop with `Effect.serviceOption`, and Push is used only by
 * HookRoutes and PushWorker, which are mounted only when push is on (`pushEnabled`).
 * `backstop` needs SqlClient and Cipher (it goes under DeliveryEngineLive); `service` also HttpClient,
 * DeliveryScheduling, DeliveryStore, JobEngine and DeliverySettings.
 */
export const pushLayers = (config: AppConfigShape, sources: SourcePollerHttpOptions) => {
  type Sql = SqlClient.SqlClient | Cipher
  if (!pushEnabled(config)) {
    return { backstop: Layer.empty as Layer.Layer<never, never, Sql>, service: Layer.empty as Layer.Layer<never, never, Sql | ServiceNeeds> }
  }
  const settings = settingsOf(config)
  const hubs = PushHubsHttp({
    websubHub: sources.video === undefined
      ? undefined
      : pushOf(config).websubHubUrl ?? (config.sandbox ? `${config.publicUrl.replace(/\/+$/, "")}${SANDBOX_WEBSUB_HUB}` : "https://pubsubhubbub.appspot.com/subscribe"),
    twitch: sources.streaming,
    timeout: Duration.millis(config.upstreamTimeoutMs)
  })
  return {
    backstop: PushBackstop.layer.pipe(Layer.provide([PushStoreSql, settings])) as Layer.Layer<never, never, Sql>,
    service: Push.layer.pipe(Layer.provide([PushStoreSql, settings, hubs])) as Layer.Layer<never, never, Sql | ServiceNeeds>
  }
}

type ServiceNeeds = HttpClient.HttpClient | DeliveryScheduling | DeliveryStore | JobEngine | DeliverySettings

/** A worker's share: a sweep every PUSH_SWEEP_SECONDS for the layer's lifetime; an outage is logged and waited out. Needs Push. */
const sweeper = (config: Pick<AppConfigShape, "push">) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const push = yield* Push
    yield* push.sweep.pipe(
      Effect.tap((o) => (o.subscribed + o.renewed + o.expired + o.removed > 0 ? Effect.logInfo("push subscriptions swept", o) : Effect.void)),
      Effect.catchCause((cause) => Effect.logWarning("the push sweep failed; retrying later", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(pushOf(config).sweepSeconds))),
      Effect.interruptible,
      Effect.forkScoped
    )
  }))

/** The sweep when push is on (Push is then among the capabilities, `pushLayers`), else nothing. */
export const PushWorker = (config: AppConfigShape) => (pushEnabled(config) ? sweeper(config) : Layer.empty) as Layer.Layer<never>

/** The callbacks when push is on, else nothing. */
export const PushRoutes = (config: AppConfigShape) =>
  (pushEnabled(config) ? HookRoutes : Layer.empty) as Layer.Layer<never, never, HttpRouter.HttpRouter>
