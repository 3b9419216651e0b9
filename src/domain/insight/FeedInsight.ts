/**
 * The insight routes of a feed (delivery.md §8): the preview with reasons, the test message, the
 * manual refresh and the delivery log, as the wire shows them.
 */
import { Schema } from "effect"

const Instant = Schema.String.annotate({ description: "UTC ISO 8601", format: "date-time" })

/** An embed as Discord takes it (RichEmbed: the fields the gateway fills). */
export const PreviewEmbed = Schema.Struct({
  title: Schema.optionalKey(Schema.String),
  url: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  color: Schema.optionalKey(Schema.Int),
  timestamp: Schema.String,
  image: Schema.optionalKey(Schema.Struct({ url: Schema.String })),
  thumbnail: Schema.optionalKey(Schema.Struct({ url: Schema.String })),
  author: Schema.optionalKey(Schema.Struct({ name: Schema.String })),
  footer: Schema.optionalKey(Schema.Struct({ text: Schema.String }))
}).annotate({ identifier: "PreviewEmbed" })

export const PreviewMessage = Schema.Struct({
  content: Schema.String.annotate({ description: "The message text, exactly as the webhook would get it" }),
  username: Schema.NullOr(Schema.String).annotate({ description: "The name the message is posted under; null: the webhook's own" }),
  avatar_url: Schema.NullOr(Schema.String).annotate({ description: "The avatar the message is posted with; null: the webhook's own" }),
  allowed_mentions: Schema.Struct({
    parse: Schema.Array(Schema.String),
    roles: Schema.optionalKey(Schema.Array(Schema.String))
  }).annotate({ description: "Who the message may ping, as the webhook gets it: `{\"parse\": []}`, or exactly the feed's mention_roles; text from a source pings no one" }),
  // delivery.md §10, present only when the feed's options use them (so earlier answers are unchanged).
  embeds: Schema.optionalKey(Schema.Array(PreviewEmbed)),
  thread_name: Schema.optionalKey(Schema.String.annotate({ description: "A forum webhook's new post: its name" })),
  applied_tags: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "A forum webhook's new post: its tag ids" })),
  continued: Schema.optionalKey(Schema.Array(Schema.String).annotate({
    description: "With split: the contents of the messages that follow this one (at most 2)"
  }))
}).annotate({
  identifier: "PreviewMessage",
  description: "The body the webhook gets, key for key (a name or avatar it does not get is null here)"
})

export const PreviewItem = Schema.Struct({
  id: Schema.String.annotate({ description: "The item's id at its source (the dedup key)" }),
  title: Schema.NullOr(Schema.String),
  url: Schema.String,
  published_at: Instant,
  verdict: Schema.Literals(["post", "skip"]).annotate({ description: "What the feed's next poll does with it" }),
  reasons: Schema.Array(Schema.String).annotate({
    description: "Every rule that decided: for a skip each that stood in the way, for a post each that let it through"
  }),
  message: PreviewMessage
}).annotate({ identifier: "PreviewItem" })
export type PreviewItem = typeof PreviewItem.Type

export const FeedPreview = Schema.Struct({
  items: Schema.Array(PreviewItem).annotate({ description: "The source's newest items, newest first (at most 10)" })
}).annotate({ identifier: "FeedPreview" })
export type FeedPreview = typeof FeedPreview.Type

export const TestMessageResult = Schema.Struct({
  success: Schema.Literal(true),
  message_id: Schema.NullOr(Schema.String).annotate({ description: "The chat platform's id of the message posted" })
}).annotate({ identifier: "TestMessageResult" })
export type TestMessageResult = typeof TestMessageResult.Type

export const DeliveryState = Schema.Literals(["sent", "failed", "skipped"])

export const DeliveryLogEntry = Schema.Struct({
  id: Schema.String,
  item_id: Schema.String,
  title: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  state: DeliveryState,
  reason: Schema.NullOr(Schema.String).annotate({
    description: "Why it was skipped or failed; on a sent one, why it was not crossposted (\"not crossposted: …\")"
  }),
  message_id: Schema.NullOr(Schema.String).annotate({ description: "The chat platform's id of the message, once sent" }),
  at: Instant.annotate({ description: "When it was sent, skipped or failed (UTC ISO 8601)" })
}).annotate({ identifier: "DeliveryLogEntry" })
export type DeliveryLogEntry = typeof DeliveryLogEntry.Type

export const DeliveryLogPage = Schema.Struct({
  deliveries: Schema.Array(DeliveryLogEntry),
  page: Schema.Int,
  page_size: Schema.Int,
  page_max: Schema.Int
}).annotate({ identifier: "DeliveryLogPage" })
export type DeliveryLogPage = typeof DeliveryLogPage.Type

/** Values stay strings here; the service checks them like the audit log's (400 naming the parameter). */
export const DeliveryLogQuery = Schema.Struct({
  page_size: Schema.optionalKey(Schema.String),
  page: Schema.optionalKey(Schema.String)
})
export type DeliveryLogQuery = typeof DeliveryLogQuery.Type
