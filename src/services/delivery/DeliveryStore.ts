/**
 * Storage of feed delivery (migrations 0005, 0009, 0020; SQL layer src/layers/delivery/DeliveryStoreSql.ts): the
 * distinct sources and their poll state, the item ids seen per source, each feed's status and
 * counters, and the delivery log. The writes of one poll (its deliveries, skips, seen ids, counters
 * and the jobs it sends) run as one `transaction`; every call joins the caller's. An unchanged
 * poll (the common case) reads in one statement (`pollTarget`) and writes in one (`pollUnchanged`).
 *
 * A delivery goes `pending` (recorded, with its rendered body) → `sending` (claimed, in a statement
 * of its own, before the request leaves) → `sent` (with the platform's message id) or `failed`
 * (with the reason); an item a feed does not post is recorded `skipped` with its reasons. The
 * unique (feed, item) makes "once per feed" hold whoever runs the poll.
 */
import { Context } from "effect"
import type { Effect, Option, Redacted } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { DisplayInfo } from "../../domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import type { Actor } from "../audit/AuditLog.ts"
import type { PlatformWebhookBody } from "../platform/ChatPlatform.ts"
import type { ForumTag } from "./render/ForumPost.ts"
import type { DeliveryOptions } from "./render/Options.ts"
import type { PollState } from "../sources/SourcePoller.ts"

export interface DeliverySource {
  readonly id: string
  readonly module: FeedModuleName
  readonly identifier: string
  /** `emptyPollState` before the first poll. */
  readonly pollState: PollState
  /** When the first poll stored what the source served (null: the next poll is the baseline). */
  readonly baselinedAt: Date | null
  readonly lastPollAt: Date | null
  readonly nextPollAt: Date | null
  readonly lastSuccessAt: Date | null
  /** Start of the current run of failures (null when the last poll succeeded). */
  readonly failingSince: Date | null
  /** Failed polls in a row. */
  readonly failures: number
  readonly lastError: string | null
  /**
   * The planned time of the last poll job whose result (or failure) was recorded: a job of that
   * slot or an earlier one that runs again (its worker died after recording, before the engine
   * heard it was done) does not poll again. null: no planned poll recorded yet.
   */
  readonly polledSlot: Date | null
  /** The slot of the poll an unchanged poll planned after it (`pollUnchanged`); null when none. */
  readonly successorSlot: Date | null
}

/** What a poll reads before it asks the source: the source, and how many of its feeds deliver. */
export interface PollTarget {
  readonly source: DeliverySource
  /** Feeds of the source that are not disabled. */
  readonly active: number
  /** Of those, the ones `failing` (a poll that answers makes them active again). */
  readonly failing: number
}

export type FeedState = "active" | "failing" | "disabled"

/** A feed as delivery sees it: who owns it (for audit entries, the bot is the actor), its state. */
export interface FeedRef {
  readonly id: string
  readonly module: FeedModuleName
  readonly botId: string
  readonly serverId: string
  readonly feedIdentifier: string
  /** The bot, as the audit log names it when delivery changes the feed. */
  readonly bot: Actor
  readonly state: FeedState
  readonly reason: string | null
}

/** A feed of a source, with what the rules read. */
export interface DeliveryFeed extends FeedRef {
  readonly createdAt: Date
  /** The module's options as stored (decoded by the module's schema; unreadable values dropped). */
  readonly options: DeliveryOptions
  readonly displayInfo: DisplayInfo | null
  readonly webhookId: string
  /** The tags of the forum its webhook posts in (one post per item, delivery.md §10); null: not a forum. */
  readonly forumTags: ReadonlyArray<ForumTag> | null
}

/**
 * What a delivery stores and the poster sends: the item's first message, the thread it goes into
 * (`thread_id`, Execute Webhook's query, never sent in the body) and, with `split`, the messages
 * that follow it (delivery.md §10).
 */
export interface DeliveryBody extends PlatformWebhookBody {
  readonly thread_id?: string
  readonly continued?: ReadonlyArray<PlatformWebhookBody>
}

/** A delivery to record. `body` for `pending`; `reason` for `skipped` (the reasons, joined). */
export interface NewDelivery {
  readonly feedId: string
  readonly webhookId: string
  readonly itemId: string
  readonly title: string | null
  readonly url: string | null
  readonly eventAt: Date
  readonly state: "pending" | "skipped"
  readonly reason: string | null
  readonly body: DeliveryBody | null
}

/** The next message of a webhook to send, with the feed it is for and that feed's webhook token. */
export interface OpenDelivery {
  readonly id: string
  readonly itemId: string
  readonly webhookId: string
  /** null when the stored body is not a message (a damaged row). */
  readonly body: DeliveryBody | null
  /** Sends tried so far. */
  readonly attempts: number
  readonly feed: FeedRef
  /** The feed's webhook token; null when the configured keys cannot decrypt it. */
  readonly webhookToken: Redacted.Redacted<string> | null
  /** The feed asks its posted messages to be published (`webhook_options.crosspost`, as the feed is now). */
  readonly crosspost: boolean
}

/**
 * A delivery left `sending`: its send started and no answer was recorded (the send was cut, timed
 * out, or its worker stopped), so it may or may not be in its channel. DeliveryReconcile.ts finds out.
 */
export interface UncertainDelivery extends OpenDelivery {
  /** When its last send started (the claim). */
  readonly sentAt: Date
  /** Why its last send is uncertain, when known (null: the worker stopped mid-send). */
  readonly reason: string | null
  /** The channel its webhook posts to. */
  readonly channelId: string
  /** The feed's bot token, to read that channel; null when the configured keys cannot decrypt it. */
  readonly botToken: Redacted.Redacted<string> | null
}

/** What the status route shows (delivery.md §5), from the feed's status and its source. */
export interface FeedStatus {
  readonly state: FeedState
  readonly reason: string | null
  readonly lastPollAt: Date | null
  readonly nextPollAt: Date | null
  readonly lastDeliveryAt: Date | null
  readonly delivered: number
  readonly skipped: number
  /** Posted deliveries not crossposted (over the channel's budget, or refused by the platform). */
  readonly notCrossposted: number
}

/**
 * A crosspost asked for (CrosspostBudget.ts): granted (its slots taken in the webhook's channel,
 * with the feed's bot token to publish with; null when the keys cannot decrypt it), over the
 * channel's budget, `Taken` when the delivery has a reservation already (never crossposted twice),
 * `Gone` when the delivery no longer exists.
 */
export type CrosspostReservation =
  | { readonly _tag: "Granted"; readonly channelId: string; readonly botToken: Redacted.Redacted<string> | null }
  | { readonly _tag: "OverBudget"; readonly channelId: string; readonly freeAt: Date | null }
  | { readonly _tag: "Taken" }
  | { readonly _tag: "Gone" }

/** A feed whose state a call changed, as it was before. */
export interface StateChange {
  readonly feed: FeedRef
  readonly previous: FeedState
}

export class DeliveryStore extends Context.Service<DeliveryStore, {
  /** Runs `self` as one unit; the calls inside (and a JobEngine send) join it. */
  readonly transaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>

  // Sources
  /** The source of (module, stored feed_identifier), created if new. */
  readonly upsertSource: (module: FeedModuleName, identifier: string) => Effect.Effect<DeliverySource, ServiceUnavailable>
  readonly source: (sourceId: string) => Effect.Effect<Option.Option<DeliverySource>, ServiceUnavailable>
  /** The source, its row locked until the transaction ends (polls of one source write one at a time). */
  readonly lockSource: (sourceId: string) => Effect.Effect<Option.Option<DeliverySource>, ServiceUnavailable>
  /** The source with its feeds counted, in one statement (the first read of every poll). */
  readonly pollTarget: (sourceId: string) => Effect.Effect<Option.Option<PollTarget>, ServiceUnavailable>
  readonly sourceOfFeed: (feedId: string) => Effect.Effect<Option.Option<DeliverySource>, ServiceUnavailable>
  /** The feeds that follow the source, oldest first, disabled ones included. */
  readonly feedsOfSource: (source: Pick<DeliverySource, "module" | "identifier">) => Effect.Effect<ReadonlyArray<DeliveryFeed>, ServiceUnavailable>
  /**
   * Sources with a feed that is not disabled whose next poll is unknown or overdue (before
   * `overdueBefore`): their chain of polls was never started or got lost.
   */
  readonly sourcesWithoutPoll: (overdueBefore: Date, limit: number) => Effect.Effect<ReadonlyArray<DeliverySource>, ServiceUnavailable>
  /** The planned time of the source's next poll; null: none (no feed delivers from it). */
  readonly setNextPoll: (sourceId: string, at: Date | null) => Effect.Effect<void, ServiceUnavailable>
  /**
   * A poll that answered: its state kept, failures cleared; `baseline` marks the first poll done;
   * `slot` (the job's planned time, when it had one) recorded as `polledSlot`.
   */
  readonly pollSucceeded: (
    sourceId: string,
    result: { readonly state: PollState; readonly at: Date; readonly baseline: boolean; readonly slot?: Date | null }
  ) => Effect.Effect<void, ServiceUnavailable>
  /**
   * An unchanged answer (304, or the same body) recorded in ONE statement, outside any transaction:
   * the state, failures cleared, `slot` (when given) as `polledSlot`, and the next poll planned at
   * `next` (`nextPollAt` and `successorSlot`). Nothing is written, and false returned, when the
   * slot is covered already (`polledSlot` at or after it) or the source is gone.
   */
  readonly pollUnchanged: (
    sourceId: string,
    result: { readonly state: PollState; readonly at: Date; readonly slot: Date | null; readonly next: Date }
  ) => Effect.Effect<boolean, ServiceUnavailable>
  /** A poll that failed: one more failure, since when it fails, `slot` as in pollSucceeded; the source as it is now. */
  readonly pollFailed: (
    sourceId: string,
    result: { readonly message: string; readonly at: Date; readonly slot?: Date | null }
  ) => Effect.Effect<DeliverySource, ServiceUnavailable>
  /** Forgets a source's failures (a re-enabled feed starts its 24 hours again). */
  readonly resetFailures: (sourceId: string) => Effect.Effect<void, ServiceUnavailable>

  // Seen ids
  /** Which of `ids` the source served before. */
  readonly seenAmong: (sourceId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, ServiceUnavailable>
  readonly markSeen: (sourceId: string, ids: ReadonlyArray<string>, at: Date) => Effect.Effect<void, ServiceUnavailable>

  // Deliveries
  /** Records deliveries, each unless its (feed, item) exists; counts the skips; returns what was inserted. */
  readonly insertDeliveries: (rows: ReadonlyArray<NewDelivery>) => Effect.Effect<ReadonlyArray<NewDelivery>, ServiceUnavailable>
  /** The webhook's `sending` deliveries (a send with no answer, or a stopped worker's), oldest first. */
  readonly uncertainSends: (webhookId: string) => Effect.Effect<ReadonlyArray<UncertainDelivery>, ServiceUnavailable>
  /** A send that had no answer: stays `sending` (it may have been posted), with why. */
  readonly markUncertain: (deliveryId: string, reason: string) => Effect.Effect<void, ServiceUnavailable>
  /** An uncertain delivery found absent, about to be sent again: one more attempt; false when it is not `sending` any more. */
  readonly reclaim: (deliveryId: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** Which of `messageIds` a sent delivery of the webhook recorded already (a found message is never claimed twice). */
  readonly recordedMessageIds: (
    webhookId: string,
    messageIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlySet<string>, ServiceUnavailable>
  /** The webhook's oldest `pending` delivery of a feed that is not disabled. */
  readonly nextPending: (webhookId: string) => Effect.Effect<Option.Option<OpenDelivery>, ServiceUnavailable>
  /** `pending` → `sending`, one more attempt; false when it was not pending any more (someone else has it). */
  readonly claim: (deliveryId: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** → `sent` with the message id, and the feed's delivered count and last delivery time. */
  readonly markSent: (deliveryId: string, messageId: string | null, at: Date) => Effect.Effect<void, ServiceUnavailable>
  /** → `pending` again (it was not posted), with why, for a later attempt. */
  readonly markRetry: (deliveryId: string, reason: string) => Effect.Effect<void, ServiceUnavailable>
  readonly markFailed: (deliveryId: string, reason: string) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Takes `slots` of the crosspost budget of the delivery's webhook channel at `at`, if they fit
   * (CrosspostBudget.ts), atomically across every worker: one reservation per channel at a time.
   */
  readonly reserveCrosspost: (deliveryId: string, slots: number, at: Date) => Effect.Effect<CrosspostReservation, ServiceUnavailable>
  /** A sent delivery not crossposted: `reason` recorded on it and its feed's count + 1, once per delivery. */
  readonly notCrossposted: (deliveryId: string, reason: string) => Effect.Effect<void, ServiceUnavailable>
  /** The feed's `pending` deliveries → `failed` with `reason` (the feed was disabled); how many. */
  readonly failPending: (feedId: string, reason: string) => Effect.Effect<number, ServiceUnavailable>
  /**
   * Webhooks with `pending` deliveries recorded before `before`, or `sending` ones claimed before it
   * (a send with no answer whose job gave up retrying): their post job may be lost.
   */
  readonly webhooksWithPending: (before: Date, limit: number) => Effect.Effect<ReadonlyArray<string>, ServiceUnavailable>

  // Feed status
  /**
   * Sets the state of those of `feedIds` that are in one of `from`, with `reason`; returns the
   * feeds that changed (so a disable is audited once, by whoever changed it).
   */
  readonly setFeedState: (
    feedIds: ReadonlyArray<string>,
    from: ReadonlyArray<FeedState>,
    to: FeedState,
    reason: string | null
  ) => Effect.Effect<ReadonlyArray<StateChange>, ServiceUnavailable>
  readonly status: (feedId: string) => Effect.Effect<Option.Option<FeedStatus>, ServiceUnavailable>

  /**
   * Deletes seen ids older than `seenBefore`, and finished deliveries and crosspost reservations
   * older than `deliveriesBefore`.
   */
  readonly retention: (
    cutoffs: { readonly seenBefore: Date; readonly deliveriesBefore: Date }
  ) => Effect.Effect<{ readonly seen: number; readonly deliveries: number }, ServiceUnavailable>
}>()("gateway/DeliveryStore") {}
