/**
 * The platforms' push endpoints (delivery.md §9), as the push service asks them: the WebSub hub
 * (YouTube: https://pubsubhubbub.appspot.com/subscribe) and Twitch EventSub's subscriptions API
 * (an app token from the streaming credentials). Either is None when the deployment cannot use it
 * (no streaming credentials for EventSub). Layer: layers/push/PushHubsHttp.ts.
 */
import { Context, Schema } from "effect"
import type { Effect, Option, Redacted } from "effect"

/** The hub refused or could not be reached; `status` when it answered. */
export class PushHubError extends Schema.TaggedError<PushHubError>()("PushHubError", {
  message: Schema.String,
  status: Schema.optionalKey(Schema.Number)
}) {}

export interface WebSubRequest {
  readonly mode: "subscribe" | "unsubscribe"
  readonly topic: string
  readonly callback: string
  readonly secret: Redacted.Redacted<string>
  readonly leaseSeconds: number
}

export interface EventSubRequest {
  readonly type: "stream.online" | "stream.offline"
  readonly broadcasterUserId: string
  readonly callback: string
  readonly secret: Redacted.Redacted<string>
}

export class PushHubs extends Context.Service<PushHubs, {
  /** Asks the hub to (un)subscribe; the hub then verifies the intent at the callback. */
  readonly websub: Option.Option<{ readonly request: (r: WebSubRequest) => Effect.Effect<void, PushHubError> }>
  readonly eventsub: Option.Option<{
    /** Creates the subscription (Twitch then sends `webhook_callback_verification`): its id. */
    readonly create: (r: EventSubRequest) => Effect.Effect<string, PushHubError>
    /** Deletes it; an unknown id is not an error. */
    readonly remove: (id: string) => Effect.Effect<void, PushHubError>
  }>
}>()("gateway/PushHubs") {}

/** The WebSub topic of a YouTube channel. */
export const youtubeTopic = (channelId: string) => `https://www.youtube.com/xml/feeds/videos.xml?channel_id=${encodeURIComponent(channelId)}`
