/**
 * What a feed's delivery looks like now (delivery.md §5): its state, why, when its source was and
 * will be polled, when it last posted, and how many items it posted and skipped since creation, and
 * of the posted ones, how many were not crossposted (delivery.md §10 `crosspost`).
 */
import { Schema } from "effect"

export const FeedState = Schema.Literals(["active", "failing", "disabled"])
export type FeedState = typeof FeedState.Type

/** UTC ISO 8601, e.g. `2024-05-01T12:00:00.000Z`. */
const Instant = Schema.NullOr(Schema.String.annotate({ description: "UTC ISO 8601", format: "date-time" }))

export const FeedStatus = Schema.Struct({
  state: FeedState.annotate({ description: "active, failing (its source fails, retried with backoff) or disabled" }),
  reason: Schema.NullOr(Schema.String).annotate({ description: "Why it is failing or disabled, in words a user can act on" }),
  last_poll_at: Instant.annotate({ description: "The last poll of its source (UTC ISO 8601)" }),
  next_poll_at: Instant.annotate({ description: "The next planned poll of its source (UTC ISO 8601)" }),
  last_delivery_at: Instant.annotate({ description: "The last message posted (UTC ISO 8601)" }),
  delivered: Schema.Int.annotate({ description: "Messages posted since the feed was created" }),
  skipped: Schema.Int.annotate({ description: "Items not posted (filters, age, the per-poll cap) since the feed was created" }),
  not_crossposted: Schema.Int.annotate({
    description: "With crosspost: items posted but not published to the following servers (over the platform's 10 a channel an hour, or refused) since the feed was created"
  })
}).annotate({ identifier: "FeedStatus" })
export type FeedStatus = typeof FeedStatus.Type
