/**
 * What feed delivery needs to know of the deployment (delivery.md §1, §3, §4), provided by
 * src/layers/config/ from FEED_* variables; `DeliverySettings.defaults` are the spec's defaults and
 * `DeliverySettings.layer(partial)` fills the rest from them (tests, sandbox mode).
 */
import { Context, Layer } from "effect"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"

export interface DeliverySettingsShape {
  /** FEED_POLL_INTERVAL_SECONDS: how often each source is polled (300; 15 in sandbox mode; ≥ 1). */
  readonly pollIntervalSeconds: number
  /** FEED_POLL_INTERVAL_SECONDS_<MODULE>: per-module overrides of `pollIntervalSeconds`. */
  readonly pollIntervalSecondsByModule: Readonly<Partial<Record<FeedModuleName, number>>>
  /** FEED_MAX_ITEM_AGE_HOURS: older items are never posted (24). */
  readonly maxItemAgeHours: number
  /** FEED_MAX_ITEMS_PER_POLL: at most this many posts per feed per poll, oldest first (5). */
  readonly maxItemsPerPoll: number
  /** FEED_OFFLINE_GRACE_SECONDS: streaming `offline` only after this long offline (300). */
  readonly offlineGraceSeconds: number
  /** FEED_FAILED_AFTER_HOURS: a source failing this long disables its feeds (24). */
  readonly failedAfterHours: number
  /** Attempts of one message (5xx, no answer) before its delivery is `failed` (8: some 15 minutes of backoff). */
  readonly postAttempts: number
}

export class DeliverySettings extends Context.Service<DeliverySettings, DeliverySettingsShape>()("gateway/DeliverySettings") {
  static readonly defaults: DeliverySettingsShape = {
    pollIntervalSeconds: 300,
    pollIntervalSecondsByModule: {},
    maxItemAgeHours: 24,
    maxItemsPerPoll: 5,
    offlineGraceSeconds: 300,
    failedAfterHours: 24,
    postAttempts: 8
  }
  /** The defaults with `overrides` on top. */
  static readonly layer = (overrides: Partial<DeliverySettingsShape> = {}) =>
    Layer.succeed(DeliverySettings, DeliverySettings.of({ ...DeliverySettings.defaults, ...overrides }))
}

/** The poll interval of a module's sources, in whole seconds (at least 1). */
export const pollIntervalOf = (settings: DeliverySettingsShape, module: FeedModuleName): number =>
  Math.max(1, Math.floor(settings.pollIntervalSecondsByModule[module] ?? settings.pollIntervalSeconds))
