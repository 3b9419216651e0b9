/**
 * Feed delivery (delivery.md §1–§4), what the worker's jobs do (layers/delivery/DeliveryJobs.ts):
 * - `pollSource`: polls one source for all its feeds, outside any transaction, unless the job's
 *   slot is covered already (a job pg-boss runs again after its worker died: `Covered`). An
 *   unchanged answer (304, same body; most polls) is one statement to read, one to record (state,
 *   slot, next poll) and the successor's send. Items: in ONE transaction with the source's row
 *   locked, the seen ids, each feed's deliveries (`pending` with the rendered message) and skips
 *   (with their reasons) chosen by `planPoll` (delivery/Select.ts), the counters, the poll state
 *   and slot, one `feed-post` job per webhook with something to post (sent again after the commit:
 *   `kickAfterCommit`), and the poll of the source's next slot: all of it, or (on failure) none and the
 *   job is retried. A poll
 *   that fails counts a failure, shows its feeds `failing`, and polls again after a backoff; after
 *   FEED_FAILED_AFTER_HOURS of failures the feeds are disabled (audited) and polling stops.
 * - `postWebhook`: DeliveryPost.ts.
 * - `repair`: the scheduler's pass (every minute): polls never sent or lost, webhooks whose
 *   messages wait with no job, and retention (seen ids 90 days, the delivery log 30 days).
 */
import { Clock, Context, Effect, Layer, Option, Random, Result } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { AuditLog } from "../audit/AuditLog.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import { itemTitle } from "./render/Item.ts"
import { planPoll } from "./render/Select.ts"
import type { SelectFeed } from "./render/Select.ts"
import { disableFeeds } from "./DeliveryDisable.ts"
import type { PostOutcome, PostRetry } from "./DeliveryPost.ts"
import { makePoster } from "./DeliveryPost.ts"
import { PostQueue } from "./DeliveryQueues.ts"
import { DeliveryScheduling, OVERDUE_MS } from "./DeliveryScheduling.ts"
import { DeliverySettings, pollIntervalOf } from "./DeliverySettings.ts"
import type { DeliveryFeed, DeliverySource, NewDelivery } from "./DeliveryStore.ts"
import { DeliveryStore } from "./DeliveryStore.ts"
import type { JobEngineError } from "../jobs/JobEngine.ts"
import { JobEngine } from "../jobs/JobEngine.ts"
import type { PollFailed, PollResult, PollState } from "../sources/SourcePoller.ts"
import { SourcePoller } from "../sources/SourcePoller.ts"

export type { PostOutcome } from "./DeliveryPost.ts"
export { PostRetry } from "./DeliveryPost.ts"
export { UNKNOWN } from "./DeliveryReconcile.ts"

export type DeliveryError = ServiceUnavailable | JobEngineError

export type PollOutcome =
  /** No such source (its last feed was deleted). */
  | { readonly _tag: "Gone" }
  /** No feed delivers from it (none left, or all disabled): not polled, nothing planned. */
  | { readonly _tag: "Idle" }
  /**
   * The job's slot was polled already (the job runs again after its worker died once the poll was
   * recorded, or a concurrent run recorded it first): not polled again, nothing recorded.
   */
  | { readonly _tag: "Covered" }
  | { readonly _tag: "NotModified"; readonly nextPollAt: Date }
  /** The source's first poll: `items` ids stored, nothing posted. */
  | { readonly _tag: "Baseline"; readonly items: number; readonly nextPollAt: Date }
  | { readonly _tag: "Delivered"; readonly queued: number; readonly skipped: number; readonly nextPollAt: Date }
  /** `disabled` feeds after FEED_FAILED_AFTER_HOURS of failures (then nothing is planned). */
  | { readonly _tag: "Failed"; readonly message: string; readonly disabled: number; readonly nextPollAt: Date | null }

export interface RepairOutcome {
  readonly polls: number
  readonly posts: number
  readonly expiredSeen: number
  readonly expiredDeliveries: number
}

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const SEEN_DAYS = 90
const LOG_DAYS = 30
const MAX_BACKOFF_MS = HOUR_MS
const REPAIR_BATCH = 500
const none: ReadonlyArray<string> = []

/** A feed as the rules read it (the worker and the insight routes, #15, call this one). */
export const toSelect = (feed: DeliveryFeed): SelectFeed => ({
  id: feed.id,
  createdAt: feed.createdAt,
  options: feed.options,
  // A forum webhook's tags make each item a post of its own (delivery.md §10).
  defaults: { name: feed.displayInfo?.display_name ?? null, forumTags: feed.forumTags }
})

export class DeliveryEngine extends Context.Service<DeliveryEngine, {
  /**
   * Polls the source. `slot`: the planned time of the job's slot, when it has one; a slot the
   * source's last recorded poll covers is not polled again (`Covered`). Without it (a poll asked
   * for now: a refresh, a first poll), always polls.
   */
  readonly pollSource: (sourceId: string, slot?: Date) => Effect.Effect<PollOutcome, DeliveryError>
  readonly postWebhook: (webhookId: string) => Effect.Effect<PostOutcome, PostRetry | DeliveryError>
  readonly repair: Effect.Effect<RepairOutcome, DeliveryError>
}>()("gateway/Delivery") {
  /** Needs DeliveryStore, DeliveryScheduling, DeliverySettings, SourcePoller, ChatPlatform, AuditLog and JobEngine. */
  static readonly layer = Layer.effect(DeliveryEngine, Effect.gen(function*() {
    const store = yield* DeliveryStore
    const scheduling = yield* DeliveryScheduling
    const settings = yield* DeliverySettings
    const poller = yield* SourcePoller
    const platform = yield* ChatPlatform
    const audit = yield* AuditLog
    const engine = yield* JobEngine
    const disable = disableFeeds(store, audit)
    const { postWebhook } = makePoster({ store, platform, audit, engine, settings })

    /** interval × 2^failures, at most an hour, never before the source's Retry-After; ±20 % jitter. */
    const backoff = (source: DeliverySource, error: PollFailed) =>
      Effect.map(Random.nextBetween(0.8, 1.2), (jitter) => {
        const base = pollIntervalOf(settings, source.module) * 1000 * 2 ** Math.min(source.failures, 20)
        return Math.max(Math.min(base, MAX_BACKOFF_MS) * jitter, (error.retryAfterSeconds ?? 0) * 1000)
      })

    /** Feeds that deliver from the source now (read inside the poll's transaction). */
    const deliveringFeeds = (source: DeliverySource) =>
      Effect.map(store.feedsOfSource(source), (feeds) => feeds.filter((f) => f.state !== "disabled"))

    /** The job's slot is polled already: a poll recorded it (and sent its successor, unless it died first). */
    const covered = (source: DeliverySource, slot: Date | undefined) =>
      slot !== undefined && source.polledSlot !== null && slot.getTime() <= source.polledSlot.getTime()

    /**
     * A job of a covered slot runs again (pg-boss delivers a job again when its worker died before
     * marking it done): no poll; the successor an unchanged poll planned is sent again, in case its
     * worker died between recording the poll and sending it (same job id: a no-op when it exists).
     */
    const resume = (source: DeliverySource, slot: Date) =>
      Effect.gen(function*() {
        const successor = source.successorSlot
        if (successor !== null && successor.getTime() > slot.getTime()) yield* scheduling.sendPlanned(source.id, successor)
        return { _tag: "Covered" } as const
      })

    const failed = (source: DeliverySource, error: PollFailed, at: Date, slot: Date | undefined) =>
      store.transaction(Effect.gen(function*() {
        const locked = yield* store.lockSource(source.id)
        if (Option.isNone(locked)) return { _tag: "Gone" } as const
        if (covered(locked.value, slot)) return { _tag: "Covered" } as const
        const now = yield* store.pollFailed(source.id, { message: error.message, at, slot: slot ?? null })
        const ids = (yield* deliveringFeeds(source)).map((f) => f.id)
        const failingMs = at.getTime() - (now.failingSince ?? at).getTime()
        if (failingMs >= settings.failedAfterHours * HOUR_MS) {
          const hours = Math.floor(failingMs / HOUR_MS)
          const reason = `The source has failed for ${hours} ${hours === 1 ? "hour" : "hours"}: ${error.message} ` +
            "Check the feed's source, then edit the feed to re-enable it."
          const changes = yield* disable(ids, ["active", "failing"], reason)
          yield* store.setNextPoll(source.id, null)
          return { _tag: "Failed", message: error.message, disabled: changes.length, nextPollAt: null } as const
        }
        yield* store.setFeedState(ids, ["active", "failing"], "failing", `The source could not be read: ${error.message}`)
        const next = yield* scheduling.planNext(source, new Date(at.getTime() + (yield* backoff(now, error))))
        return { _tag: "Failed", message: error.message, disabled: 0, nextPollAt: next } as const
      }))

    /**
     * The common case, an unchanged answer with no feed to recover: one write (the state, the slot,
     * the next poll) and the successor's send, no transaction. Written first: a worker that dies
     * between the two leaves a covered slot whose job, run again, sends the successor (`resume`).
     */
    const unchanged = (source: DeliverySource, state: PollState, at: Date, slot: Date | undefined) =>
      Effect.gen(function*() {
        const next = yield* scheduling.nextPlanned(source)
        const recorded = yield* store.pollUnchanged(source.id, { state, at, slot: slot ?? null, next })
        if (!recorded) return { _tag: "Covered" } as const
        yield* scheduling.sendPlanned(source.id, next)
        return { _tag: "NotModified", nextPollAt: next } as const
      })

    /** A `feed-post` job for the webhook, unless one is waiting to start (stately: it will read what is pending). */
    const sendPost = (webhookId: string) => engine.send(PostQueue, { webhookId }, { singletonKey: webhookId })

    /**
     * The post jobs again, once the poll's transaction has committed. The send inside the
     * transaction (the outbox) is skipped when the webhook's job is waiting to start; that job can
     * start, find nothing committed yet and finish before this transaction commits, and the new
     * messages would wait for the repair pass (minutes). Sent after the commit, the job either is
     * still waiting (it will read them) or is sent anew. A failure here leaves the outbox's job and
     * the repair pass: logged, not the poll's failure (its transaction is done).
     */
    const kickAfterCommit = (webhooks: ReadonlyArray<string>) =>
      Effect.forEach(webhooks, sendPost, { discard: true }).pipe(
        Effect.catch((error) => Effect.logWarning("post jobs after a poll could not be sent; the repair pass will", error))
      )

    const answered = (source: DeliverySource, answer: PollResult, at: Date, slot: Date | undefined) =>
      Effect.flatMap(answeredInTransaction(source, answer, at, slot), ({ outcome, webhooks }) =>
        webhooks.length === 0 ? Effect.succeed(outcome) : Effect.as(kickAfterCommit(webhooks), outcome))

    const answeredInTransaction = (source: DeliverySource, answer: PollResult, at: Date, slot: Date | undefined) =>
      store.transaction(Effect.gen(function*() {
        const locked = yield* store.lockSource(source.id)
        if (Option.isNone(locked)) return { outcome: { _tag: "Gone" } as const, webhooks: none }
        const current = locked.value
        // Another run of this job (or a later slot's poll) recorded its answer while this one asked.
        if (covered(current, slot)) return { outcome: { _tag: "Covered" } as const, webhooks: none }
        const feeds = yield* deliveringFeeds(current)
        const recovered = feeds.filter((f) => f.state === "failing").map((f) => f.id)
        if (recovered.length > 0) yield* store.setFeedState(recovered, ["failing"], "active", null)
        if (answer._tag === "NotModified") {
          yield* store.pollSucceeded(source.id, { state: answer.state, at, baseline: false, slot: slot ?? null })
          return { outcome: { _tag: "NotModified", nextPollAt: yield* scheduling.planNext(current) } as const, webhooks: none }
        }
        const seen = yield* store.seenAmong(source.id, answer.items.map((i) => i.id))
        const plan = planPoll({
          items: answer.items,
          seen,
          baselined: current.baselinedAt !== null,
          feeds: feeds.map(toSelect),
          limits: { now: at, maxItemAgeHours: settings.maxItemAgeHours, maxItemsPerPoll: settings.maxItemsPerPoll }
        })
        yield* store.markSeen(source.id, plan.seenIds, at)
        yield* store.pollSucceeded(source.id, { state: answer.state, at, baseline: true, slot: slot ?? null })
        if (plan._tag === "Baseline") {
          return {
            outcome: { _tag: "Baseline", items: plan.seenIds.length, nextPollAt: yield* scheduling.planNext(current) } as const,
            webhooks: none
          }
        }
        const webhookOf = new Map(feeds.map((f) => [f.id, f.webhookId]))
        const rows = plan.feeds.flatMap(({ decisions, feedId }) =>
          decisions.map((d): NewDelivery => ({
            feedId,
            webhookId: webhookOf.get(feedId)!,
            itemId: d.item.id,
            title: itemTitle(d.item),
            url: d.item.url,
            eventAt: d.item.eventAt,
            state: d.verdict === "post" ? "pending" : "skipped",
            reason: d.verdict === "post" ? null : d.reasons.join("; "),
            body: d.verdict === "post" ? d.message : null
          }))
        )
        const inserted = yield* store.insertDeliveries(rows)
        const pending = inserted.filter((r) => r.state === "pending")
        // The outbox: these jobs exist if and only if this transaction commits (and again after it: `kickAfterCommit`).
        const webhooks = [...new Set(pending.map((r) => r.webhookId))]
        for (const webhookId of webhooks) yield* sendPost(webhookId)
        return {
          outcome: {
            _tag: "Delivered",
            queued: pending.length,
            skipped: inserted.length - pending.length,
            nextPollAt: yield* scheduling.planNext(current)
          } as const,
          webhooks
        }
      }))

    const pollSource = (sourceId: string, slot?: Date): Effect.Effect<PollOutcome, DeliveryError> =>
      Effect.gen(function*() {
        // One statement: the source (poll state, slot covered) and how many feeds deliver from it.
        const target = yield* store.pollTarget(sourceId)
        if (Option.isNone(target)) return { _tag: "Gone" } as const
        const { active, failing, source } = target.value
        if (slot !== undefined && covered(source, slot)) return yield* resume(source, slot)
        if (active === 0) {
          yield* store.setNextPoll(source.id, null)
          return { _tag: "Idle" } as const
        }
        // The request runs outside any transaction: a slow source holds no connection.
        const result = yield* Effect.result(poller.poll(source.module, source.identifier, source.pollState))
        const at = new Date(yield* Clock.currentTimeMillis)
        if (Result.isFailure(result)) return yield* failed(source, result.failure, at, slot)
        const answer = result.success
        return answer._tag === "NotModified" && failing === 0
          ? yield* unchanged(source, answer.state, at, slot)
          : yield* answered(source, answer, at, slot)
      }).pipe(Effect.withSpan("Delivery.pollSource", { attributes: { source: sourceId } }))

    const repair = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const lost = yield* store.sourcesWithoutPoll(new Date(now - OVERDUE_MS), REPAIR_BATCH)
      for (const source of lost) {
        // Never planned (new, or idle until now): at once, unless another pass planned it meanwhile
        // (each worker runs one at start); a lost chain: at its next slot.
        yield* source.nextPollAt === null ? scheduling.start(source.id) : scheduling.planNext(source)
      }
      const webhooks = yield* store.webhooksWithPending(new Date(now - OVERDUE_MS), REPAIR_BATCH)
      for (const webhookId of webhooks) yield* sendPost(webhookId)
      const expired = yield* store.retention({
        seenBefore: new Date(now - SEEN_DAYS * DAY_MS),
        deliveriesBefore: new Date(now - LOG_DAYS * DAY_MS)
      })
      if (lost.length > 0 || webhooks.length > 0) {
        yield* Effect.logInfo("delivery repair pass").pipe(Effect.annotateLogs({ polls: lost.length, posts: webhooks.length }))
      }
      return { polls: lost.length, posts: webhooks.length, expiredSeen: expired.seen, expiredDeliveries: expired.deliveries }
    }).pipe(Effect.withSpan("Delivery.repair"))

    return DeliveryEngine.of({ pollSource, postWebhook, repair })
  }))
}
