/**
 * Feed delivery (delivery.md §1–§4), what the worker's jobs do (layers/jobs/DeliveryJobs.ts):
 * - `pollSource`: polls one source for all its feeds, outside any transaction; then, in ONE
 *   transaction with the source's row locked: the seen ids, each feed's deliveries (`pending` with
 *   the rendered message) and skips (with their reasons) chosen by `planPoll` (delivery/Select.ts),
 *   the counters, the poll state, one `feed-post` job per webhook with something to post, and the
 *   poll of the source's next slot: all of it, or (on failure) none and the job is retried. A poll
 *   that fails counts a failure, shows its feeds `failing`, and polls again after a backoff; after
 *   FEED_FAILED_AFTER_HOURS of failures the feeds are disabled (audited) and polling stops.
 * - `postWebhook`: DeliveryPost.ts.
 * - `repair`: the scheduler's pass (every minute): polls never sent or lost, webhooks whose
 *   messages wait with no job, and retention (seen ids 90 days, the delivery log 30 days).
 */
import { Clock, Context, Effect, Layer, Option, Random, Result } from "effect"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import { AuditLog } from "./AuditLog.ts"
import { ChatPlatform } from "./ChatPlatform.ts"
import { itemTitle } from "./delivery/Item.ts"
import { planPoll } from "./delivery/Select.ts"
import type { SelectFeed } from "./delivery/Select.ts"
import { disableFeeds } from "./DeliveryDisable.ts"
import type { PostOutcome, PostRetry } from "./DeliveryPost.ts"
import { makePoster } from "./DeliveryPost.ts"
import { PostQueue } from "./DeliveryQueues.ts"
import { DeliveryScheduling, OVERDUE_MS } from "./DeliveryScheduling.ts"
import { DeliverySettings, pollIntervalOf } from "./DeliverySettings.ts"
import type { DeliveryFeed, DeliverySource, NewDelivery } from "./DeliveryStore.ts"
import { DeliveryStore } from "./DeliveryStore.ts"
import type { JobEngineError } from "./JobEngine.ts"
import { JobEngine } from "./JobEngine.ts"
import type { PollFailed, PollResult } from "./SourcePoller.ts"
import { SourcePoller } from "./SourcePoller.ts"

export type { PostOutcome } from "./DeliveryPost.ts"
export { PostRetry, UNKNOWN_OUTCOME } from "./DeliveryPost.ts"

export type DeliveryError = ServiceUnavailable | JobEngineError

export type PollOutcome =
  /** No such source (its last feed was deleted). */
  | { readonly _tag: "Gone" }
  /** No feed delivers from it (none left, or all disabled): not polled, nothing planned. */
  | { readonly _tag: "Idle" }
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

/** A feed as the rules read it (the worker and the insight routes, #15, call this one). */
export const toSelect = (feed: DeliveryFeed): SelectFeed => ({
  id: feed.id,
  createdAt: feed.createdAt,
  options: feed.options,
  defaults: { name: feed.displayInfo?.display_name ?? null }
})

export class Delivery extends Context.Service<Delivery, {
  readonly pollSource: (sourceId: string) => Effect.Effect<PollOutcome, DeliveryError>
  readonly postWebhook: (webhookId: string) => Effect.Effect<PostOutcome, PostRetry | DeliveryError>
  readonly repair: Effect.Effect<RepairOutcome, DeliveryError>
}>()("gateway/Delivery") {
  /** Needs DeliveryStore, DeliveryScheduling, DeliverySettings, SourcePoller, ChatPlatform, AuditLog and JobEngine. */
  static readonly layer = Layer.effect(Delivery, Effect.gen(function*() {
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

    const failed = (source: DeliverySource, feeds: ReadonlyArray<DeliveryFeed>, error: PollFailed, at: Date) =>
      store.transaction(Effect.gen(function*() {
        const now = yield* store.pollFailed(source.id, { message: error.message, at })
        const ids = feeds.map((f) => f.id)
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

    const answered = (source: DeliverySource, feeds: ReadonlyArray<DeliveryFeed>, answer: PollResult, at: Date) =>
      store.transaction(Effect.gen(function*() {
        const locked = yield* store.lockSource(source.id)
        if (Option.isNone(locked)) return { _tag: "Gone" } as const
        const current = locked.value
        const recovered = feeds.filter((f) => f.state === "failing").map((f) => f.id)
        if (recovered.length > 0) yield* store.setFeedState(recovered, ["failing"], "active", null)
        if (answer._tag === "NotModified") {
          yield* store.pollSucceeded(source.id, { state: answer.state, at, baseline: false })
          return { _tag: "NotModified", nextPollAt: yield* scheduling.planNext(current) } as const
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
        yield* store.pollSucceeded(source.id, { state: answer.state, at, baseline: true })
        if (plan._tag === "Baseline") {
          return { _tag: "Baseline", items: plan.seenIds.length, nextPollAt: yield* scheduling.planNext(current) } as const
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
        // The outbox: these jobs exist if and only if this transaction commits.
        for (const webhookId of new Set(pending.map((r) => r.webhookId))) {
          yield* engine.send(PostQueue, { webhookId }, { singletonKey: webhookId })
        }
        return {
          _tag: "Delivered",
          queued: pending.length,
          skipped: inserted.length - pending.length,
          nextPollAt: yield* scheduling.planNext(current)
        } as const
      }))

    const pollSource = (sourceId: string): Effect.Effect<PollOutcome, DeliveryError> =>
      Effect.gen(function*() {
        const found = yield* store.source(sourceId)
        if (Option.isNone(found)) return { _tag: "Gone" } as const
        const source = found.value
        const feeds = (yield* store.feedsOfSource(source)).filter((f) => f.state !== "disabled")
        if (feeds.length === 0) {
          yield* store.setNextPoll(source.id, null)
          return { _tag: "Idle" } as const
        }
        // The request runs outside any transaction: a slow source holds no connection.
        const result = yield* Effect.result(poller.poll(source.module, source.identifier, source.pollState))
        const at = new Date(yield* Clock.currentTimeMillis)
        return yield* Result.isFailure(result) ? failed(source, feeds, result.failure, at) : answered(source, feeds, result.success, at)
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
      for (const webhookId of webhooks) yield* engine.send(PostQueue, { webhookId }, { singletonKey: webhookId })
      const expired = yield* store.retention({
        seenBefore: new Date(now - SEEN_DAYS * DAY_MS),
        deliveriesBefore: new Date(now - LOG_DAYS * DAY_MS)
      })
      if (lost.length > 0 || webhooks.length > 0) {
        yield* Effect.logInfo("delivery repair pass").pipe(Effect.annotateLogs({ polls: lost.length, posts: webhooks.length }))
      }
      return { polls: lost.length, posts: webhooks.length, expiredSeen: expired.seen, expiredDeliveries: expired.deliveries }
    }).pipe(Effect.withSpan("Delivery.repair"))

    return Delivery.of({ pollSource, postWebhook, repair })
  }))
}
