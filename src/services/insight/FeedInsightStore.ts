/**
 * What the insight routes read and keep (delivery.md §8; SQL layer src/layers/insight/FeedInsightStoreSql.ts,
 * tables of migrations 0005 and 0007): a feed's delivery log, page by page; what the log says of
 * given items (the preview's "already posted"); and the cool-downs of the test message and the
 * refresh, shared by every instance.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { PastDelivery } from "../delivery/render/Select.ts"

export interface LoggedDelivery {
  readonly id: string
  readonly itemId: string
  readonly title: string | null
  readonly url: string | null
  readonly state: "sent" | "failed" | "skipped"
  readonly reason: string | null
  readonly messageId: string | null
  readonly at: Date
}

export interface LogPage {
  /** Finished deliveries of the feed (sent, failed, skipped) in the log. */
  readonly total: number
  /** The page asked for, newest first; empty past the last page. */
  readonly rows: ReadonlyArray<LoggedDelivery>
}

/** Taken: the caller may act now. Busy: not before `retryAfterSeconds`. */
export type Cooldown =
  | { readonly _tag: "Taken" }
  | { readonly _tag: "Busy"; readonly retryAfterSeconds: number }

export class FeedInsightStore extends Context.Service<FeedInsightStore, {
  /** Page `page` (1-based) of `pageSize` of the feed's log, newest first (by time, then id). */
  readonly logPage: (feedId: string, page: number, pageSize: number) => Effect.Effect<LogPage, ServiceUnavailable>
  /** The feed's delivery records of those of `itemIds` it has one for. */
  readonly history: (
    feedId: string,
    itemIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, PastDelivery>, ServiceUnavailable>
  /** Takes the cool-down `key` for `seconds` unless it is running (atomically, across instances). */
  readonly cooldown: (key: string, seconds: number) => Effect.Effect<Cooldown, ServiceUnavailable>
}>()("gateway/FeedInsightStore") {}
