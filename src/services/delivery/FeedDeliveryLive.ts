/**
 * FeedDelivery on the delivery engine: sources through DeliveryScheduling (the same slots and job
 * ids as the worker), status from DeliveryStore. Sends that fail after a commit are logged, not
 * reported: the scheduler's pass (every minute) sends any poll that was planned and never sent.
 */
import { Clock, Effect, Layer, Option } from "effect"
import type { FeedStatus } from "../../domain/feeds/FeedStatus.ts"
import { OVERDUE_MS } from "./DeliveryScheduling.ts"
import { DeliveryScheduling } from "./DeliveryScheduling.ts"
import { DeliveryStore } from "./DeliveryStore.ts"
import { FeedDelivery, neverPolled } from "./FeedDelivery.ts"

const iso = (d: Date | null) => d === null ? null : d.toISOString()

/** Needs DeliveryScheduling and DeliveryStore. */
export const FeedDeliveryLive = Layer.effect(
  FeedDelivery,
  Effect.gen(function*() {
    const scheduling = yield* DeliveryScheduling
    const store = yield* DeliveryStore

    const logged = (what: string, sourceId: string) => <E>(self: Effect.Effect<void, E>) =>
      self.pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning(`${what} of source ${sourceId} not sent; the scheduler's next pass sends it`, cause)
        )
      )

    return FeedDelivery.of({
      attach: (source) => Effect.map(scheduling.attach(source.module, source.identifier), Option.some),
      start: (sourceId) => scheduling.start(sourceId).pipe(logged("the first poll", sourceId)),
      pollNow: (sourceId) => scheduling.pollNow(sourceId).pipe(logged("the poll", sourceId)),
      state: (feedId) =>
        Effect.map(store.status(feedId), (s) =>
          Option.match(s, {
            onNone: () => ({ state: "active" as const, reason: null }),
            onSome: (s) => ({ state: s.state, reason: s.reason })
          })),
      reenable: scheduling.reenable,
      status: (feedId, source) =>
        Effect.gen(function*() {
          const found = yield* store.status(feedId)
          const now = yield* Clock.currentTimeMillis
          if (Option.isNone(found)) return { ...neverPolled, next_poll_at: scheduling.nextSlotOf(source, now).toISOString() }
          const s = found.value
          // A disabled feed has no poll planned for it; a source whose planned poll is lost gets its next slot.
          const next = s.state === "disabled"
            ? null
            : s.nextPollAt !== null && s.nextPollAt.getTime() >= now - OVERDUE_MS
            ? s.nextPollAt
            : scheduling.nextSlotOf(source, now)
          return {
            state: s.state,
            reason: s.reason,
            last_poll_at: iso(s.lastPollAt),
            next_poll_at: iso(next),
            last_delivery_at: iso(s.lastDeliveryAt),
            delivered: s.delivered,
            skipped: s.skipped,
            not_crossposted: s.notCrossposted
          } satisfies FeedStatus
        })
    })
  })
)
