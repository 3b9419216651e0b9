/**
 * The crosspost budget of an announcement channel and what a crosspost's answer means (delivery.md
 * §10 `crosspost`; issue #34). The platform publishes at most 10 messages per channel per hour,
 * whoever asks; the gateway keeps under it by reserving slots per channel before it asks, shared by
 * every worker (the reservations are stored: DeliveryStore.reserveCrosspost). The hour is rolling:
 * a slot taken at t is free again from t + 1 h on, so no hour ever holds more than 10, whichever
 * way the platform draws its windows. A delivery takes one slot per message it posted (a `split`
 * item up to 3), all of them or none: an item is published whole, or not at all.
 * Pure: the store's layers decide with it under their lock; the poster reads the answers with it.
 */
import type { PlatformError } from "../platform/ChatPlatform.ts"

/** The platform's limit: publications per announcement channel per window. */
export const CROSSPOSTS_PER_WINDOW = 10
/** The window: one hour, rolling. */
export const CROSSPOST_WINDOW_MS = 3_600_000

/** A reservation of the channel: when, and how many messages it publishes. */
export interface CrosspostSlots {
  readonly at: Date
  readonly slots: number
}

export type BudgetDecision =
  /** `left`: the slots still free in the window after this reservation. */
  | { readonly _tag: "Granted"; readonly left: number }
  /** `freeAt`: when enough slots are free again (null: never, more than the whole budget wanted). */
  | { readonly _tag: "OverBudget"; readonly freeAt: Date | null }

/** Whether `wanted` more slots fit the channel at `now`, given its reservations (any order, old ones included). */
export const decideCrosspost = (taken: ReadonlyArray<CrosspostSlots>, wanted: number, now: Date): BudgetDecision => {
  const since = now.getTime() - CROSSPOST_WINDOW_MS
  const live = taken.filter((t) => t.at.getTime() > since).sort((a, b) => a.at.getTime() - b.at.getTime())
  const left = CROSSPOSTS_PER_WINDOW - live.reduce((n, t) => n + t.slots, 0)
  if (wanted <= left) return { _tag: "Granted", left: left - wanted }
  if (wanted > CROSSPOSTS_PER_WINDOW) return { _tag: "OverBudget", freeAt: null }
  // The oldest leave the window first: enough is free once the one that makes up `wanted` has left.
  let free = left
  const last = live.find((t) => (free += t.slots) >= wanted)!
  return { _tag: "OverBudget", freeAt: new Date(last.at.getTime() + CROSSPOST_WINDOW_MS) }
}

/** Why a delivery over the budget is not crossposted, in words a feed's owner can act on. */
export const overBudgetReason = (channelId: string, freeAt: Date | null): string =>
  freeAt === null
    ? `its messages are more than the ${CROSSPOSTS_PER_WINDOW} the platform publishes per channel per hour`
    : `channel ${channelId} had published its ${CROSSPOSTS_PER_WINDOW} messages of the hour (the platform's limit); the next could be published from ${freeAt.toISOString()}`

/**
 * What a crosspost's failure means: `published` when the platform says the message was published
 * already (400 40033: a crosspost whose answer was lost, asked again), else why it was not, for the
 * delivery's reason and the log. Never a secret: statuses, Discord's codes and messages.
 */
export const crosspostFailure = (e: PlatformError): { readonly _tag: "Published" } | { readonly _tag: "NotPublished"; readonly reason: string } => {
  if (e._tag !== "PlatformRejected") return { _tag: "NotPublished", reason: `the chat platform did not publish it: ${e.problems[0]?.message ?? e._tag}` }
  if (e.status === 400 && e.code === 40033) return { _tag: "Published" }
  const what = `${e.status}${e.code === undefined ? "" : ` ${e.message}, code ${e.code}`}`
  switch (e.status) {
    case 403:
      return { _tag: "NotPublished", reason: `the bot may not publish in the webhook's channel (${what}): give it MANAGE_MESSAGES there, or set crosspost to false` }
    case 404:
      return { _tag: "NotPublished", reason: `the message or its channel is gone (${what})` }
    default:
      return { _tag: "NotPublished", reason: `the chat platform refused to publish it (${what})` }
  }
}
