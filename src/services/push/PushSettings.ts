/** What the push connectors need to know of the deployment (delivery.md §9), from PUSH_* (layers/config). */
import { Context } from "effect"

export interface PushSettingsShape {
  /** Callbacks are `${publicUrl}/hooks/websub?hook=…` and `${publicUrl}/hooks/eventsub?hook=…`. */
  readonly publicUrl: string
  /** PUSH_LEASE_SECONDS: the WebSub lease asked for (the hub may grant less; renewed before it ends). */
  readonly leaseSeconds: number
  /** A subscription not verified this long after it was asked for (or refused by the hub) is asked again. */
  readonly retrySeconds: number
  /** How often a pushed source is still polled, unless its module's interval is longer (30 minutes). */
  readonly backstopSeconds: number
}

export class PushSettings extends Context.Service<PushSettings, PushSettingsShape>()("gateway/PushSettings") {
  static readonly defaults = { leaseSeconds: 5 * 86_400, retrySeconds: 300, backstopSeconds: 1800 } as const
}

/** Renew this long before the lease ends: a quarter of the lease, at most an hour. */
export const renewMarginMs = (leaseSeconds: number) => Math.min(3600, leaseSeconds / 4) * 1000
