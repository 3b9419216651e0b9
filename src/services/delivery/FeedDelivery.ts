/**
 * What the feeds service tells delivery, and asks it (delivery.md §4–§5): a created feed's source
 * exists and gets its first poll at once; a PATCH re-enables a disabled feed; the status route. (A
 * deleted feed needs no call: a source whose feeds are all gone or disabled is not polled, its
 * planned poll finds nothing to do and plans no successor.) The live layer (FeedDeliveryLive.ts)
 * sits on DeliveryScheduling and DeliveryStore. The default, for a gateway built without a database
 * (the in-memory test capabilities), is "nothing delivers here": every feed active, never polled.
 */
import { Context, Effect, Option } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { FeedStatus } from "../../domain/feeds/FeedStatus.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import type { FeedState } from "./DeliveryStore.ts"

/** The source a feed follows: (module, stored feed_identifier). */
export interface FeedSourceKey {
  readonly module: FeedModuleName
  readonly identifier: string
}

export interface FeedDeliveryShape {
  /** Inside the create's transaction: the feed's source exists from now on; its id (None without delivery). */
  readonly attach: (source: FeedSourceKey) => Effect.Effect<Option.Option<string>, ServiceUnavailable>
  /**
   * After the create committed: the source's first poll at once, unless one is planned. Never fails
   * the create: a poll that could not be sent is sent by the scheduler's next pass.
   */
  readonly start: (sourceId: string) => Effect.Effect<void>
  /** After a re-enabling PATCH committed: the source is polled now. Never fails the PATCH. */
  readonly pollNow: (sourceId: string) => Effect.Effect<void>
  readonly state: (feedId: string) => Effect.Effect<{ readonly state: FeedState; readonly reason: string | null }, ServiceUnavailable>
  /**
   * Inside the PATCH's transaction: a disabled feed is active again and its source's failures are
   * forgotten (a new run of FEED_FAILED_AFTER_HOURS starts); its source's id, to poll it now.
   */
  readonly reenable: (feedId: string) => Effect.Effect<Option.Option<string>, ServiceUnavailable>
  /** The status route's answer (delivery.md §5) for a feed of `source`. */
  readonly status: (feedId: string, source: FeedSourceKey) => Effect.Effect<FeedStatus, ServiceUnavailable>
}

/** A feed no poll has reached yet: active, nothing known, nothing counted. */
export const neverPolled: FeedStatus = {
  state: "active",
  reason: null,
  last_poll_at: null,
  next_poll_at: null,
  last_delivery_at: null,
  delivered: 0,
  skipped: 0,
  not_crossposted: 0
}

export const FeedDelivery = Context.Reference<FeedDeliveryShape>("gateway/FeedDelivery", {
  defaultValue: () => ({
    attach: () => Effect.succeed(Option.none()),
    start: () => Effect.void,
    pollNow: () => Effect.void,
    state: () => Effect.succeed({ state: "active", reason: null }),
    reenable: () => Effect.succeed(Option.none()),
    status: () => Effect.succeed(neverPolled)
  })
})
