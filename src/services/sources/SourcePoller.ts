/**
 * Reading a feed's source for delivery (delivery.md §1): one call per distinct source
 * `(module, feed_identifier)` per interval, however many feeds follow it. The live layer
 * (layers/sources/poll/) is a real HTTP client per platform; the sandbox serves the same shapes.
 *
 * A poll is conditional: the caller hands back the `PollState` of the previous answer (HTTP
 * validators, a hash of the last body, the connector's own cursor) and gets `NotModified` when
 * nothing changed, so a 304 or an identical body costs no further work.
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import type { Item } from "../delivery/render/Item.ts"

/** What a connector keeps between two polls of one source; stored as JSON with the source. */
export const PollState = Schema.Struct({
  etag: Schema.NullOr(Schema.String),
  lastModified: Schema.NullOr(Schema.String),
  /** SHA-256 of the last body read, for servers that send no validators. */
  bodyHash: Schema.NullOr(Schema.String),
  /**
   * The connector's own memory, e.g. streaming: whether the channel is live, the stream id, the game
   * it started with and since when it is offline (the flap grace); video: the last known title and
   * description of recent videos, to report `updated`.
   */
  cursor: Schema.NullOr(Schema.Unknown)
}).annotate({ identifier: "PollState" })
export type PollState = typeof PollState.Type

export const emptyPollState: PollState = { etag: null, lastModified: null, bodyHash: null, cursor: null }

/**
 * `NotModified`: nothing new to detect, but store its `state` all the same (a 304 may refresh the
 * validators; video refreshes its channel record in the cursor). `Items` may be empty when only the
 * cursor moved (streaming: a channel first seen offline, to time the grace). A first poll (no
 * validators, no body hash, no cursor) is never NotModified, so its answer is always the baseline.
 */
export type PollResult =
  | { readonly _tag: "NotModified"; readonly state: PollState }
  | {
    readonly _tag: "Items"
    /** Every item the source serves now (newest or oldest first: the caller sorts), events included. */
    readonly items: ReadonlyArray<Item>
    readonly state: PollState
  }

/**
 * Why a poll failed, in words a feed's owner can act on (the feed status shows `message`).
 * `retryAfterSeconds` when the source said how long to wait (429/503 with Retry-After).
 */
export class PollFailed extends Schema.TaggedError<PollFailed>()("PollFailed", {
  message: Schema.String,
  /** `timeout`, `unreachable`, `http` (4xx/5xx), `too-large`, `unreadable` (not the expected format), `not-configured`, `gone` (the source no longer exists). */
  kind: Schema.Literals(["timeout", "unreachable", "http", "too-large", "unreadable", "not-configured", "gone"]),
  status: Schema.optionalKey(Schema.Int),
  retryAfterSeconds: Schema.optionalKey(Schema.Number)
}) {}

export class SourcePoller extends Context.Service<SourcePoller, {
  /** Polls one source now. `identifier` is the feed's stored `feed_identifier` (URL, subreddit, user or channel id). */
  readonly poll: (
    module: FeedModuleName,
    identifier: string,
    previous: PollState
  ) => Effect.Effect<PollResult, PollFailed>
  /**
   * Polls many sources of one module at once where the platform allows it (Twitch Helix: 100
   * channels a call); sources it cannot batch are polled one by one. One answer per identifier.
   */
  readonly pollMany: (
    module: FeedModuleName,
    sources: ReadonlyArray<{ readonly identifier: string; readonly previous: PollState }>
  ) => Effect.Effect<ReadonlyMap<string, PollResult | PollFailed>>
}>()("gateway/SourcePoller") {}
