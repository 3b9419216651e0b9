/**
 * Which items of a poll each feed posts (delivery.md §1 "Detect", "Baseline", §2–§3), as a pure
 * function: the worker records its answer, the preview (#15) shows it. Per feed, oldest first (by
 * `eventAt`), every rule that decided is named:
 * - an item seen at the source before: "already posted" (or what its delivery record says);
 * - older than FEED_MAX_ITEM_AGE_HOURS: "older than 24 h";
 * - from before the feed was created (a feed on an already-polled source starts at its creation):
 *   "from before the feed was created";
 * - the filters: `decide()`'s reasons;
 * - past FEED_MAX_ITEMS_PER_POLL among the items that pass: "over the per-poll cap of 5".
 * An item that passes is rendered (`render()`): the message the webhook gets.
 * A source's first poll (never baselined) stores every id it serves and posts nothing.
 */
import { decide } from "./Filters.ts"
import type { Item } from "./Item.ts"
import type { DeliveryOptions } from "./Options.ts"
import type { OutgoingMessage, RenderDefaults } from "./Render.ts"
import { outgoing } from "./Render.ts"

/** The limits of delivery.md §1 and the time "now" is. */
export interface SelectLimits {
  readonly now: Date
  /** FEED_MAX_ITEM_AGE_HOURS. */
  readonly maxItemAgeHours: number
  /** FEED_MAX_ITEMS_PER_POLL. */
  readonly maxItemsPerPoll: number
}

/** A feed as the selection reads it. */
export interface SelectFeed {
  readonly id: string
  readonly createdAt: Date
  readonly options: DeliveryOptions
  /** Name and avatar when the item lacks its module's own (e.g. the feed's display_info). */
  readonly defaults?: RenderDefaults | undefined
}

/** What the delivery log says of an item already handled for a feed (the preview passes it). */
export interface PastDelivery {
  readonly state: "pending" | "sending" | "sent" | "failed" | "skipped"
  readonly reason: string | null
}

export interface ItemDecision {
  readonly item: Item
  readonly verdict: "post" | "skip"
  /** For a skip every rule that stood in the way; for a post every rule that let it through. */
  readonly reasons: ReadonlyArray<string>
  /** Not seen at the source before: the worker records only these. */
  readonly isNew: boolean
  /** What the webhook gets: always for a post; for a skip only with `renderSkipped`. */
  readonly message: OutgoingMessage | null
}

export interface SelectOptions {
  /** Render the message of skipped items too (the preview shows what would be sent). */
  readonly renderSkipped?: boolean
  /** The feed's delivery records by item id, to say what happened to an item seen before. */
  readonly history?: ReadonlyMap<string, PastDelivery>
}

export const ageReason = (hours: number) => `older than ${hours} h`
export const BEFORE_CREATION = "from before the feed was created"
export const capReason = (cap: number) => `over the per-poll cap of ${cap}`
export const ALREADY_POSTED = "already posted"

/**
 * The items once each (the first of an id wins), oldest first by `eventAt`. Items of the same instant
 * (feed dates have whole seconds: two posts of one second tie) go by the source's order, which lists
 * the newest first (RSS, Atom and every API polled): the one listed later is the older.
 */
export const oldestFirst = (items: ReadonlyArray<Item>): ReadonlyArray<Item> => {
  const ids = new Set<string>()
  const unique = items.filter((item) => (ids.has(item.id) ? false : (ids.add(item.id), true)))
  return unique
    .map((item, index) => ({ item, index }))
    .sort((a, b) => a.item.eventAt.getTime() - b.item.eventAt.getTime() || b.index - a.index)
    .map(({ item }) => item)
}

const pastReason = (past: PastDelivery | undefined): string => {
  if (past === undefined) return ALREADY_POSTED
  switch (past.state) {
    case "sent":
      return ALREADY_POSTED
    case "pending":
    case "sending":
      return "already queued for posting"
    case "skipped":
      return past.reason === null ? "already skipped" : `already skipped: ${past.reason}`
    case "failed":
      return past.reason === null ? "already tried, and it failed" : `already tried: ${past.reason}`
  }
}

/**
 * Every item of the poll as `feed` handles it, oldest first. `seen`: the ids the source served
 * before (not new; never recorded again).
 */
export const selectForFeed = (
  items: ReadonlyArray<Item>,
  seen: ReadonlySet<string>,
  feed: SelectFeed,
  limits: SelectLimits,
  options: SelectOptions = {}
): ReadonlyArray<ItemDecision> => {
  const oldest = limits.now.getTime() - limits.maxItemAgeHours * 3_600_000
  let posted = 0
  return oldestFirst(items).map((item): ItemDecision => {
    const message = () => outgoing(item, feed.options, feed.defaults)
    const skip = (reasons: ReadonlyArray<string>, isNew: boolean): ItemDecision => ({
      item,
      verdict: "skip",
      reasons,
      isNew,
      message: options.renderSkipped === true ? message() : null
    })
    if (seen.has(item.id)) return skip([pastReason(options.history?.get(item.id))], false)
    const reasons: Array<string> = []
    if (item.eventAt.getTime() < oldest) reasons.push(ageReason(limits.maxItemAgeHours))
    // Feed dates have whole seconds: an item of the creation's own second is not "before" it.
    else if (item.eventAt.getTime() < Math.floor(feed.createdAt.getTime() / 1000) * 1000) reasons.push(BEFORE_CREATION)
    const decision = decide(item, feed.options)
    if (decision.verdict === "skip") reasons.push(...decision.reasons)
    if (reasons.length > 0) return skip(reasons, true)
    if (posted >= limits.maxItemsPerPoll) return skip([capReason(limits.maxItemsPerPoll)], true)
    posted++
    return { item, verdict: "post", reasons: decision.reasons, isNew: true, message: message() }
  })
}

/** What the worker does with one poll's items. */
export type PollPlan =
  | {
    /** The source's first poll: store every id, post nothing. */
    readonly _tag: "Baseline"
    readonly seenIds: ReadonlyArray<string>
  }
  | {
    readonly _tag: "Deliver"
    /** The ids to store as seen: every item the source serves that was not seen before. */
    readonly seenIds: ReadonlyArray<string>
    /** Per feed, its decision on each new item, oldest first. */
    readonly feeds: ReadonlyArray<{ readonly feedId: string; readonly decisions: ReadonlyArray<ItemDecision> }>
  }

export interface PollInput {
  readonly items: ReadonlyArray<Item>
  /** The ids of `items` the source served before. */
  readonly seen: ReadonlySet<string>
  /** Whether the source had its first poll already. */
  readonly baselined: boolean
  /** The feeds the source serves that deliver (not disabled). */
  readonly feeds: ReadonlyArray<SelectFeed>
  readonly limits: SelectLimits
}

export const planPoll = (input: PollInput): PollPlan => {
  const fresh = oldestFirst(input.items).filter((item) => !input.seen.has(item.id))
  const seenIds = fresh.map((item) => item.id)
  if (!input.baselined) return { _tag: "Baseline", seenIds }
  return {
    _tag: "Deliver",
    seenIds,
    feeds: input.feeds.map((feed) => ({ feedId: feed.id, decisions: selectForFeed(fresh, new Set(), feed, input.limits) }))
  }
}
