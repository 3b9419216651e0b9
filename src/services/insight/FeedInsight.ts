/**
 * The insight routes of a feed (delivery.md §8): why its items are or are not posted (preview),
 * a test message, a poll now (refresh) and its delivery log. None changes the feed. The live layer
 * (FeedInsightLive.ts) sits on the delivery engine's own store, poller, rules and scheduling. The
 * default, for a gateway built without a database (the in-memory test capabilities), answers 503:
 * nothing delivers there.
 */
import { Context, Effect } from "effect"
import { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { BadRequest, NotFound, RequestTimeout, TooManyRequests } from "../../domain/infra/Errors.ts"
import type { DeliveryLogPage, DeliveryLogQuery, FeedPreview, TestMessageResult } from "../../domain/insight/FeedInsight.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import type { ServerAccess } from "../platform/Directory.ts"

export type InsightError = NotFound | BadRequest | TooManyRequests | RequestTimeout | ServiceUnavailable

/** delivery.md §8: at most one test message per feed per 10 s, one refresh per source per 60 s. */
export const TEST_COOLDOWN_SECONDS = 10
export const REFRESH_COOLDOWN_SECONDS = 60

export interface FeedInsightShape {
  /** The source's newest items fetched now, each with its verdict, reasons and message. */
  readonly preview: (access: ServerAccess, module: FeedModuleName, feedId: string) => Effect.Effect<FeedPreview, InsightError>
  /** Posts the source's newest item now, ignoring filters and dedup; audited. */
  readonly test: (access: ServerAccess, module: FeedModuleName, feedId: string) => Effect.Effect<TestMessageResult, InsightError>
  /** Polls the feed's source now instead of at its slot. */
  readonly refresh: (access: ServerAccess, module: FeedModuleName, feedId: string) => Effect.Effect<void, InsightError>
  readonly deliveries: (
    access: ServerAccess,
    module: FeedModuleName,
    feedId: string,
    query: DeliveryLogQuery
  ) => Effect.Effect<DeliveryLogPage, InsightError>
}

const unavailable = Effect.fail(
  ServiceUnavailable.of("Feed delivery does not run in this gateway (it has no database), so it has no insight to give.", 60)
)

export const FeedInsight = Context.Reference<FeedInsightShape>("gateway/FeedInsight", {
  defaultValue: () => ({
    preview: () => unavailable,
    test: () => unavailable,
    refresh: () => unavailable,
    deliveries: () => unavailable
  })
})
