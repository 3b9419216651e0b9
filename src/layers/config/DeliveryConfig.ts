/**
 * The shapes and defaults of the feed delivery (FEED_*) and push connector (PUSH_*) settings; read
 * from the environment with the rest in AppConfig.ts.
 */
import type { FeedModuleName } from "../../domain/platform/Platform.ts"

/** Feed delivery (delivery.md §1–§4), from the FEED_* variables. */
export interface DeliveryConfig {
  /** FEED_POLL_INTERVAL_SECONDS: 300, or 15 in sandbox mode. */
  readonly pollIntervalSeconds: number
  /** FEED_POLL_INTERVAL_SECONDS_<MODULE>, where set. */
  readonly pollIntervalSecondsByModule: Partial<Record<FeedModuleName, number>>
  readonly maxItemAgeHours: number
  readonly maxItemsPerPoll: number
  readonly offlineGraceSeconds: number
  readonly failedAfterHours: number
  readonly fetchTimeoutMs: number
  readonly maxBodyBytes: number
  readonly hostConcurrency: number
  /** FEED_CONTACT: the operator's URL or e-mail, in the User-Agent of every poll. */
  readonly contact: string | undefined
  /** FEED_USER_AGENT: the whole User-Agent instead of the default with the contact. */
  readonly userAgent: string | undefined
}

export const FEED_MODULES: ReadonlyArray<FeedModuleName> = ["photo", "forum", "rss", "streaming", "microblog", "video"]

/** The defaults of every FEED_* variable (tests build their configuration from these). */
export const deliveryDefaults = (sandbox: boolean): DeliveryConfig => ({
  pollIntervalSeconds: sandbox ? 15 : 300,
  pollIntervalSecondsByModule: {},
  maxItemAgeHours: 24,
  maxItemsPerPoll: 5,
  offlineGraceSeconds: 300,
  failedAfterHours: 24,
  fetchTimeoutMs: 15_000,
  maxBodyBytes: 5 * 1024 * 1024,
  hostConcurrency: 2,
  contact: undefined,
  userAgent: undefined
})

/** Push connectors (delivery.md §9), from the PUSH_* variables (README "Push connectors"). */
export interface PushConfig {
  /** PUSH: `auto` (default) pushes when PUBLIC_URL is https; `on` whatever the URL (the sandbox, tests); `off` never. */
  readonly mode: "auto" | "on" | "off"
  /** PUSH_LEASE_SECONDS: the WebSub lease asked for (default 432000, 5 days); renewed before it ends. */
  readonly leaseSeconds: number
  /** PUSH_SWEEP_SECONDS: how often workers subscribe, renew and check leases (default 60). */
  readonly sweepSeconds: number
  /** PUSH_WEBSUB_HUB_URL: the WebSub hub (default YouTube's, https://pubsubhubbub.appspot.com/subscribe; the sandbox's own in sandbox mode). */
  readonly websubHubUrl: string | undefined
}
