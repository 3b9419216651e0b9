/**
 * Crossposting (delivery.md §10 `crosspost`; issue #34): after the poster recorded a delivery of a
 * `crosspost: true` feed as sent, its messages are published to the following servers by the
 * feed's bot (POST /channels/{id}/messages/{id}/crosspost), within the budget of the webhook's
 * channel (CrosspostBudget.ts: 10 an hour, shared by every feed and worker, reserved in the store).
 * - Every message the delivery posted is published (a `split` item's follow-ups too, in order): one
 *   slot each, all reserved at once or none (an item is published whole or not at all).
 * - Over the budget, or a publication that fails (403 the bot lost MANAGE_MESSAGES, 404, a 429
 *   longer than the client waits, no answer): the delivery stays sent, nothing is posted again, the
 *   feed is not disabled; the delivery gets the reason ("not crossposted: …"), its feed's
 *   `not_crossposted` counts it once, and the reason is logged (no secret in it). Never retried: a
 *   publication with no answer may have happened.
 * - Never twice: a delivery has one reservation (the store's key), taken after its send was
 *   recorded; the platform's "already crossposted" (40033) counts as published.
 * - A message posted into a thread (`thread_id`) is not in the announcement channel: not published,
 *   counted. A store outage here is logged: the message stays posted, its count may miss it.
 */
import { Clock, Effect } from "effect"
import type { ChatPlatform } from "../platform/ChatPlatform.ts"
import { crosspostFailure, overBudgetReason } from "./CrosspostBudget.ts"
import type { DeliveryStore, OpenDelivery } from "./DeliveryStore.ts"

/** What a send posted: its messages' ids in order (null: the platform gave none), and whether into a thread. */
export interface Posted {
  readonly messageIds: ReadonlyArray<string | null>
  readonly inThread: boolean
}

/** `off`: the feed does not crosspost; `taken`: the delivery had its reservation already (or is gone). */
export type CrosspostOutcome = "off" | "crossposted" | "not crossposted" | "taken"

export const makeCrossposter = (deps: {
  readonly store: DeliveryStore["Service"]
  readonly platform: ChatPlatform["Service"]
}) => {
  const { platform, store } = deps

  const missed = (d: OpenDelivery, reason: string, level: "Info" | "Warning" = "Warning") =>
    store.notCrossposted(d.id, `not crossposted: ${reason}`).pipe(
      Effect.andThen(
        (level === "Info" ? Effect.logInfo : Effect.logWarning)("a posted message was not crossposted").pipe(
          Effect.annotateLogs({ delivery: d.id, feed: d.feed.id, reason })
        )
      ),
      Effect.as("not crossposted" as const)
    )

  /** Publishes what `d` posted, if its feed asks; never fails (see the module's comment). */
  const crosspost = (d: OpenDelivery, posted: Posted): Effect.Effect<CrosspostOutcome> =>
    Effect.gen(function*() {
      if (!d.crosspost) return "off" as const
      if (posted.inThread) {
        return yield* missed(d, "it was posted into a thread; only an announcement channel's own messages can be published")
      }
      const ids = posted.messageIds.filter((id): id is string => id !== null)
      if (ids.length === 0 || ids.length < posted.messageIds.length) {
        return yield* missed(d, "the chat platform did not give the posted message's id")
      }
      const reservation = yield* store.reserveCrosspost(d.id, ids.length, new Date(yield* Clock.currentTimeMillis))
      if (reservation._tag === "Taken" || reservation._tag === "Gone") return "taken" as const
      if (reservation._tag === "OverBudget") return yield* missed(d, overBudgetReason(reservation.channelId, reservation.freeAt), "Info")
      if (reservation.botToken === null) return yield* missed(d, "the bot's token cannot be decrypted with the configured keys")
      for (const id of ids) {
        const result = yield* Effect.result(platform.crosspostMessage(reservation.botToken, reservation.channelId, id))
        if (result._tag === "Success") continue
        const failure = crosspostFailure(result.failure)
        if (failure._tag === "NotPublished") return yield* missed(d, failure.reason)
      }
      return "crossposted" as const
    }).pipe(
      Effect.catch((e) =>
        Effect.logError("a posted message's crosspost could not be recorded: the store is unavailable").pipe(
          Effect.annotateLogs({ delivery: d.id, feed: d.feed.id, reason: e.problems[0]?.message ?? e._tag }),
          Effect.as("not crossposted" as const)
        )
      ),
      // Stryker disable next-line StringLiteral,ObjectLiteral: the tracing span's name and attributes only
      Effect.withSpan("Delivery.crosspost", { attributes: { delivery: d.id } })
    )

  return { crosspost }
}
