/**
 * Disabling feeds (delivery.md §4): the state and its reason, the feed's messages still waiting
 * failed with that reason, and one audit entry per feed actually disabled (`PATCH`, the bot as the
 * actor, the reason in `event_string`). Runs inside the caller's transaction: a disable whose
 * transaction rolls back leaves no entry, and two workers disabling one feed audit it once.
 */
import { Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { AuditLog } from "../audit/AuditLog.ts"
import type { DeliveryStore, FeedState, StateChange } from "./DeliveryStore.ts"

export const disableFeeds = (store: DeliveryStore["Service"], audit: AuditLog["Service"]) =>
(
  feedIds: ReadonlyArray<string>,
  from: ReadonlyArray<FeedState>,
  reason: string
): Effect.Effect<ReadonlyArray<StateChange>, ServiceUnavailable> =>
  Effect.gen(function*() {
    const changes = yield* store.setFeedState(feedIds, from, "disabled", reason)
    for (const { feed } of changes) {
      yield* store.failPending(feed.id, `not posted: the feed was disabled (${reason})`)
      yield* audit.append({
        botId: feed.botId,
        serverId: feed.serverId,
        actor: feed.bot,
        module: feed.module,
        itemIdentifier: Number(feed.id),
        eventType: "PATCH",
        eventString: `Disabled ${feed.module} feed ${feed.id} ("${feed.feedIdentifier}"): ${reason}`
      })
      yield* Effect.logWarning("feed disabled").pipe(Effect.annotateLogs({ feed: feed.id, module: feed.module, reason }))
    }
    return changes
  })
