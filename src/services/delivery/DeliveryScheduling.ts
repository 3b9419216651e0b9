/**
 * When sources are polled (delivery.md §1, §6), for the feeds service (a feed created, deleted or
 * re-enabled, a refresh) and for the worker (a poll's successor, the repair pass). A planned poll is
 * a job of `feed-poll` with an id derived from (source, slot), sent at the source's slot (a poll
 * asked for now has an id of its own); the time is kept as the source's `next_poll_at`, which the status route shows and the repair pass checks.
 * Any role may send polls (the API too); only workers run them (layers/delivery/DeliveryJobs.ts).
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { DeliveryQueues, nextSlot, pollJobId, PollQueue, slotOffset } from "./DeliveryQueues.ts"
import { DeliverySettings, pollIntervalOf } from "./DeliverySettings.ts"
import type { DeliverySource } from "./DeliveryStore.ts"
import { DeliveryStore } from "./DeliveryStore.ts"
import type { JobEngineError } from "../jobs/JobEngine.ts"
import { JobEngine } from "../jobs/JobEngine.ts"
import { PushBackstop } from "../push/PushBackstop.ts"

export type SchedulingError = ServiceUnavailable | JobEngineError

/** A poll not run this long after its planned time is lost (its job failed for good, or was never sent). */
export const OVERDUE_MS = 120_000

export class DeliveryScheduling extends Context.Service<DeliveryScheduling, {
  /**
   * The source of a feed (module, stored feed_identifier) exists from now on: its id. Joins the
   * caller's transaction (the feed's create).
   */
  readonly attach: (module: FeedModuleName, identifier: string) => Effect.Effect<string, ServiceUnavailable>
  /**
   * After the create committed: the source's first poll at once, unless a poll is planned (the
   * source is polled for other feeds), or its overdue planned poll's job still waits or runs (a
   * worker outage). The first poll of a new source is its baseline.
   */
  readonly start: (sourceId: string) => Effect.Effect<void, SchedulingError>
  /** Polls the source now, whatever is planned (a refresh, a re-enabled feed). */
  readonly pollNow: (sourceId: string) => Effect.Effect<void, SchedulingError>
  /**
   * A disabled feed is active again (its webhook checked by the caller) and its source's failures
   * are forgotten; joins the caller's transaction. The source's id, to `pollNow` after the commit;
   * None when the feed was not disabled.
   */
  readonly reenable: (feedId: string) => Effect.Effect<Option.Option<string>, ServiceUnavailable>
  /**
   * Sends the source's poll at `at` (default: its next slot) and records it as planned; joins the
   * caller's transaction (the poll that sends its successor). The planned time.
   */
  readonly planNext: (source: Pick<DeliverySource, "id" | "module" | "identifier">, at?: Date) => Effect.Effect<Date, SchedulingError>
  /** The source's next slot after now (on the backstop's interval while it is pushed); nothing sent. */
  readonly nextPlanned: (source: Pick<DeliverySource, "id" | "module" | "identifier">) => Effect.Effect<Date, ServiceUnavailable>
  /**
   * Sends the source's poll at `at` as `planNext` does, without recording it (the caller writes
   * `nextPollAt` itself, e.g. with the poll's result in one statement); joins the caller's transaction.
   */
  readonly sendPlanned: (sourceId: string, at: Date) => Effect.Effect<void, JobEngineError>
  /** The source's next slot after `after` (epoch ms). */
  readonly nextSlotOf: (source: Pick<DeliverySource, "module" | "identifier">, after: number) => Date
}>()("gateway/DeliveryScheduling") {
  /** Needs DeliveryStore, JobEngine and DeliverySettings; declares the delivery queues when built. */
  static readonly layer = Layer.effect(DeliveryScheduling, Effect.gen(function*() {
    const store = yield* DeliveryStore
    const engine = yield* JobEngine
    const settings = yield* DeliverySettings
    // Push connectors (delivery.md §9): a pushed source is polled as a backstop only; absent, push is off.
    const backstop = yield* Effect.serviceOption(PushBackstop)
    // Declared now, outside any transaction, so sends inside one (the outbox) never have to.
    yield* Effect.forEach(DeliveryQueues, engine.declare, { discard: true })

    const nextSlotOf = (source: Pick<DeliverySource, "module" | "identifier">, after: number) => {
      const interval = pollIntervalOf(settings, source.module)
      return new Date(nextSlot(slotOffset(source.module, source.identifier, interval), interval, after))
    }

    /** The poll of `at` as a job, the same for every sender (its id and slot derive from it). */
    const sendPlanned = (sourceId: string, at: Date) =>
      engine.send(PollQueue, { sourceId, slot: at.getTime() }, { id: pollJobId(sourceId, at.getTime()), startAfter: at }).pipe(
        Effect.asVoid
      )

    const send = (sourceId: string, at: Date) =>
      sendPlanned(sourceId, at).pipe(
        Effect.andThen(store.setNextPoll(sourceId, at)),
        Effect.as(at)
      )

    /** The next slot, on the backstop's interval while the source is pushed. */
    const plannedSlot = (source: Pick<DeliverySource, "id" | "module" | "identifier">, now: number) =>
      Option.isNone(backstop) ? Effect.succeed(nextSlotOf(source, now)) : Effect.map(
        backstop.value.intervalOf(source, pollIntervalOf(settings, source.module)),
        (interval) => new Date(nextSlot(slotOffset(source.module, source.identifier, interval), interval, now))
      )

    const planNext = (source: Pick<DeliverySource, "id" | "module" | "identifier">, at?: Date) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(at === undefined ? plannedSlot(source, now) : Effect.succeed(at), (slot) => send(source.id, slot))).pipe(
        Effect.withSpan("DeliveryScheduling.planNext", { attributes: { source: source.id } })
      )

    /**
     * A poll now is keyed by (source, its last poll): requests while that poll waits or runs are
     * one job (two repair passes at once, two feeds created together, a refresh during a poll), a
     * request after it ran is a new one. Never a slot's id: that job may be done already, and the
     * request would be dropped, leaving next_poll_at in the past with no job behind it.
     */
    const waitsOrRuns = (job: { readonly state: string }) => job.state === "created" || job.state === "retry" || job.state === "active"

    const pollNowWhen = (
      sourceId: string,
      due: (source: DeliverySource, now: number) => Effect.Effect<boolean, JobEngineError>
    ) =>
      Effect.gen(function*() {
        const source = yield* store.source(sourceId)
        const now = yield* Clock.currentTimeMillis
        if (Option.isNone(source) || !(yield* due(source.value, now))) return
        const key = pollJobId(`${sourceId}:now:${source.value.lastPollAt?.getTime() ?? "never"}`, 0)
        const queued = yield* engine.job(PollQueue, key)
        const pending = Option.match(queued, { onNone: () => true, onSome: waitsOrRuns })
        if (!pending) {
          // That poll ran since the source was read (another worker's repair pass sent it, say):
          // read the source again; it may be due no more (else a second poll in the same slot).
          const fresh = yield* store.source(sourceId)
          if (Option.isNone(fresh) || !(yield* due(fresh.value, now))) return
        }
        yield* engine.send(PollQueue, { sourceId }, pending ? { id: key } : {})
        yield* store.setNextPoll(sourceId, new Date(now))
      }).pipe(Effect.withSpan("DeliveryScheduling.pollNow", { attributes: { source: sourceId } }))

    const pollNow = (sourceId: string) => pollNowWhen(sourceId, () => Effect.succeed(true))

    /**
     * Never planned, or its planned poll lost: overdue, and its slot's job (keyed as `sendPlanned`
     * keys it) not waiting or running. After a worker outage that job is still queued: it polls
     * once workers are back, and a poll now as well would fetch the source twice within seconds.
     */
    const unplanned = (source: DeliverySource, now: number) =>
      source.nextPollAt === null
        ? Effect.succeed(true)
        : source.nextPollAt.getTime() >= now - OVERDUE_MS
        ? Effect.succeed(false)
        : Effect.map(engine.job(PollQueue, pollJobId(source.id, source.nextPollAt.getTime())), (job) =>
          Option.match(job, { onNone: () => true, onSome: (j) => !waitsOrRuns(j) }))

    const nextPlanned = (source: Pick<DeliverySource, "id" | "module" | "identifier">) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => plannedSlot(source, now))

    return DeliveryScheduling.of({
      attach: (module, identifier) => Effect.map(store.upsertSource(module, identifier), (s) => s.id),
      start: (sourceId) => pollNowWhen(sourceId, unplanned),
      pollNow,
      reenable: (feedId) =>
        Effect.gen(function*() {
          const changed = yield* store.setFeedState([feedId], ["disabled"], "active", null)
          if (changed.length === 0) return Option.none()
          const source = yield* store.sourceOfFeed(feedId)
          if (Option.isNone(source)) return Option.none()
          yield* store.resetFailures(source.value.id)
          return Option.some(source.value.id)
        }),
      planNext,
      nextPlanned,
      sendPlanned,
      nextSlotOf
    })
  }))
}
