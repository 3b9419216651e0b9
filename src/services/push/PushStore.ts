/**
 * What the push connectors keep (delivery.md §9; tables of migration 0008): a subscription per
 * (source, topic) with its callback id, its secret (encrypted by the layer; in clear only here,
 * in memory), its state and lease, and the EventSub message ids already taken. Layer:
 * layers/push/PushStoreSql.ts.
 */
import { Context } from "effect"
import type { Effect, Option, Redacted } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"

export type PushTopic = "websub" | "stream.online" | "stream.offline"
export type PushState = "pending" | "active" | "revoked" | "expired"

export interface PushSubscription {
  readonly id: string
  readonly sourceId: string
  readonly topic: PushTopic
  readonly hookId: string
  readonly secret: Redacted.Redacted<string>
  readonly state: PushState
  readonly externalId: string | null
  readonly leaseExpiresAt: Date | null
  /** The source's module and identifier; null when the source is gone. */
  readonly source: { readonly module: string; readonly identifier: string } | null
  /** Feeds of the source that still deliver (not disabled). */
  readonly activeFeeds: number
}

/** A source that needs a subscription: it has active feeds, push suits its module, it has none for `topic`. */
export interface Unsubscribed {
  readonly sourceId: string
  readonly module: string
  readonly identifier: string
  readonly topic: PushTopic
}

export class PushStore extends Context.Service<PushStore, {
  /** Sources with active feeds and no subscription for a topic of their module (`topics`), at most `limit`. */
  readonly unsubscribed: (
    topics: ReadonlyArray<{ readonly module: string; readonly topic: PushTopic }>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Unsubscribed>, ServiceUnavailable>
  /**
   * A pending subscription for (source, topic), unless one exists (another worker made it): the
   * new row, or None. `nextActionAt`: when to ask again if no verification came.
   */
  readonly create: (s: Unsubscribed, hookId: string, secret: Redacted.Redacted<string>, nextActionAt: Date) => Effect.Effect<Option.Option<PushSubscription>, ServiceUnavailable>
  /**
   * Claims the subscriptions whose `next_action_at` has come (moving it to `retryAt`, so one worker
   * acts on each), at most `limit`; also those whose source is gone or has no active feed.
   */
  readonly due: (now: Date, retryAt: Date, limit: number) => Effect.Effect<ReadonlyArray<PushSubscription>, ServiceUnavailable>
  readonly byHook: (hookId: string) => Effect.Effect<Option.Option<PushSubscription>, ServiceUnavailable>
  /** The hub confirmed: active until `leaseExpiresAt` (null: no lease), acted on again at `nextActionAt`. */
  readonly activate: (id: string, leaseExpiresAt: Date | null, nextActionAt: Date | null) => Effect.Effect<void, ServiceUnavailable>
  /** Before asking the hub again for a revoked or expired subscription: pending, so its verification is taken. */
  readonly reopen: (id: string) => Effect.Effect<void, ServiceUnavailable>
  /** Records the hub's id of the subscription (EventSub). */
  readonly requested: (id: string, externalId: string) => Effect.Effect<void, ServiceUnavailable>
  /** Revoked or expired; polling takes over. `nextActionAt`: when to subscribe again (null: never). Whether the row changed. */
  readonly end: (id: string, state: "revoked" | "expired", reason: string, nextActionAt: Date | null) => Effect.Effect<boolean, ServiceUnavailable>
  /** Active subscriptions whose lease ended before `now`, marked expired: their source ids. */
  readonly expire: (now: Date) => Effect.Effect<ReadonlyArray<string>, ServiceUnavailable>
  readonly remove: (id: string) => Effect.Effect<void, ServiceUnavailable>
  /** Takes an EventSub message id for the hook: false when it was taken before (a repeat). */
  readonly takeMessage: (hookId: string, messageId: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** Forgets message ids taken before `before`. */
  readonly forgetMessages: (before: Date) => Effect.Effect<number, ServiceUnavailable>
  /** Every topic of the source is subscribed and active (within its lease): polling is the backstop only. */
  readonly pushed: (sourceId: string, now: Date) => Effect.Effect<boolean, ServiceUnavailable>
}>()("gateway/PushStore") {}
