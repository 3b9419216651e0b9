/**
 * A worker's share of the disable notices (services/delivery/DisableNotices.ts): a sweep every `every`
 * (the poll interval, at most a minute) for the layer's lifetime. Every worker sweeps; the claim
 * per user keeps one message per user per hour whoever sends it. An outage is logged and waited out.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { DisableNotices } from "../../services/delivery/DisableNotices.ts"

/** Needs DisableNotices. */
export const DisableNoticesWorker = (every: Duration.Input) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const notices = yield* DisableNotices
    yield* notices.sweep.pipe(
      Effect.tap((o) => (o.sent > 0 ? Effect.logInfo("disable notices sent", o) : Effect.void)),
      Effect.catchCause((cause) => Effect.logWarning("the disable notices sweep failed; retrying later", cause)),
      Effect.repeat(Schedule.spaced(every)),
      Effect.interruptible,
      Effect.forkScoped
    )
  }))

/** The sweep's period for a poll interval: the interval, at most a minute. */
export const noticeSweepEvery = (pollIntervalSeconds: number) => Duration.seconds(Math.max(1, Math.min(60, pollIntervalSeconds)))
