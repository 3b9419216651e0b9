/**
 * Feed delivery on the job engine (delivery.md §6). `DeliveryEngineLive` is the delivery core (the
 * Delivery and DeliveryScheduling services over the SQL store); `DeliverySchedulingLive` the part
 * an API-only process needs (send polls when feeds are created); `DeliveryWorkerLive` what a worker
 * runs: the handlers of `feed-poll`, `feed-post` and `feed-tick` (services/delivery/DeliveryQueues.ts), the
 * minute cron of `feed-tick`, and one repair pass at start (sources created while no worker ran
 * get their first poll at once). Closing the layer's scope drains the jobs in hand (SIGTERM).
 */
import type { Duration } from "effect"
import { Effect, Layer } from "effect"
import { DeliveryEngine } from "../../services/delivery/DeliveryEngine.ts"
import { DeliveryQueues, PollQueue, PostQueue, TickQueue } from "../../services/delivery/DeliveryQueues.ts"
import { DeliveryScheduling } from "../../services/delivery/DeliveryScheduling.ts"
import { JobEngine } from "../../services/jobs/JobEngine.ts"
import { DeliveryStoreSql } from "./DeliveryStoreSql.ts"

export { DeliveryQueues } from "../../services/delivery/DeliveryQueues.ts"

/** The store and scheduling: needs SqlClient, Cipher, JobEngine and DeliverySettings. */
export const DeliverySchedulingLive = DeliveryScheduling.layer.pipe(Layer.provideMerge(DeliveryStoreSql))

/**
 * Delivery, DeliveryScheduling and DeliveryStore. Needs SqlClient, Cipher, JobEngine,
 * DeliverySettings, SourcePoller, ChatPlatform and AuditLog.
 */
export const DeliveryEngineLive = DeliveryEngine.layer.pipe(Layer.provideMerge(DeliverySchedulingLive))

export interface DeliveryWorkerOptions {
  /** Polls claimed per fetch and pollers in this process (default 10 × 2). */
  readonly pollBatch?: number
  readonly pollConcurrency?: number
  /**
   * Webhooks claimed per fetch and posters in this process (default 5 × 4: 20 webhooks served at
   * once; each sends one message at a time).
   */
  readonly postBatch?: number
  readonly postConcurrency?: number
  /** How often an idle poller asks for jobs (default: the engine's). */
  readonly pollingInterval?: Duration.Input
  /** The repair pass's cron expression (default every minute). */
  readonly tickCron?: string
}

const logFailure = (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.tapError(self, (error) => Effect.logWarning(`${what} failed; the job will be retried`, error))

/** A worker's share of delivery. Needs DeliveryEngine and JobEngine; fails only if the engine does. */
export const DeliveryWorker = (options: DeliveryWorkerOptions = {}) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const engine = yield* JobEngine
    const delivery = yield* DeliveryEngine
    yield* Effect.forEach(DeliveryQueues, engine.declare, { discard: true })
    const polling = options.pollingInterval === undefined ? {} : { pollingInterval: options.pollingInterval }
    yield* engine.work(
      PollQueue,
      ({ slot, sourceId }) =>
        delivery.pollSource(sourceId, slot === undefined ? undefined : new Date(slot)).pipe(logFailure(`poll of source ${sourceId}`)),
      // A full claim is followed by the next at once: a worker behind its slots catches up at the
      // speed of its polls (bench S8), not 2 × 10 polls per polling interval. Idle, a poll is picked
      // up within 1 s of its slot.
      { batchSize: options.pollBatch ?? 10, localConcurrency: options.pollConcurrency ?? 2, burst: true, pollingInterval: "1 second", ...polling }
    )
    yield* engine.work(
      PostQueue,
      ({ webhookId }) => delivery.postWebhook(webhookId).pipe(logFailure(`posting to webhook ${webhookId}`)),
      // Bench S9: with one webhook a claim, 4 posters and the engine's 2 s, a worker served 4
      // webhooks at a time and the others' messages waited for them (~10 messages/s in all).
      {
        batchSize: options.postBatch ?? 5,
        localConcurrency: options.postConcurrency ?? 4,
        burst: true,
        pollingInterval: "0.5 seconds",
        ...polling
      }
    )
    yield* engine.work(TickQueue, () => delivery.repair.pipe(logFailure("the delivery repair pass")), polling)
    yield* engine.schedule(TickQueue, options.tickCron ?? "* * * * *", {}, { key: "delivery" })
    // Sources that got feeds while no worker ran are polled now, not at the next minute.
    yield* engine.send(TickQueue, {})
  }))

/**
 * What ROLE=worker and ROLE=all run. Needs DeliveryEngine and JobEngine (see DeliveryEngineLive). Its heap sizing
 * (V8 flags) is set where the process starts: package.json's start script and the image's CMD.
 */
export const DeliveryWorkerLive = DeliveryWorker()
