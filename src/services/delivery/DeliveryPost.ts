/**
 * Posting the messages of one webhook (delivery.md §4), the `feed-post` job's work. Oldest first,
 * one at a time (the queue runs one job per webhook across every worker). Each message is recorded
 * before it leaves and marked after: `pending` → `sending` (its own statement) → the request →
 * `sent` with the message id. The claim, the request and the mark run uninterruptibly, so a drain
 * or an expiry stops the job between two messages, never between a send and its record.
 * - No answer (cut, timed out) or a 5xx: the platform may have posted it. The row stays `sending`
 *   (uncertain, with why) and the job fails, to be retried with backoff (the queue's). A process
 *   that dies mid-send leaves the same. The next job first reconciles every `sending` row
 *   (DeliveryReconcile.ts): found in the channel → `sent`; absent → sent once more; after
 *   `postAttempts` attempts → `failed`.
 * - 429 or 408 answered (nothing was posted): back to `pending`, the job retried; after
 *   `postAttempts` attempts the delivery is `failed`.
 * - 401, 403, 404: never retried; the feed is disabled with the reason and audited; its waiting
 *   messages fail with it.
 * - Another refusal (400: a message the platform will not take): that delivery `failed`, the rest go on.
 * - Sent, for a `crosspost: true` feed: its messages are then published (DeliveryCrosspost.ts),
 *   within the channel's budget; whatever happens there, the delivery stays sent.
 */
import { Clock, Effect, Option, Schema } from "effect"
import type { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { AuditLog } from "../audit/AuditLog.ts"
import type { ChatPlatform, PlatformError, PlatformRejected } from "../platform/ChatPlatform.ts"
import { makeCrossposter } from "./DeliveryCrosspost.ts"
import { disableFeeds } from "./DeliveryDisable.ts"
import { executeFirst } from "./DeliveryForumPost.ts"
import { PostQueue } from "./DeliveryQueues.ts"
import type { DeliverySettingsShape } from "./DeliverySettings.ts"
import { makeReconciler } from "./DeliveryReconcile.ts"
import type { DeliveryStore, OpenDelivery } from "./DeliveryStore.ts"
import type { JobEngine, JobEngineError } from "../jobs/JobEngine.ts"

/** Messages one job sends at most; the rest go to the webhook's next job. */
export const MAX_PER_JOB = 50

/** A message could not be posted now: the job is retried later (the message waits, `pending`). */
export class PostRetry extends Schema.TaggedError<PostRetry>()("PostRetry", {
  webhookId: Schema.String,
  message: Schema.String
}) {}

export interface PostOutcome {
  readonly sent: number
  readonly failed: number
  /** `sending` rows found at the start (a send with no answer, or a worker stopped mid-send), reconciled first. */
  readonly interrupted: number
  /** More were waiting than one job sends: the next job was queued. */
  readonly more: boolean
}

/** Why the platform refused the webhook for good, in words a feed's owner can act on. */
export const rejectionReason = (e: PlatformRejected): string => {
  const what = `${e.status}${e.code === undefined ? "" : ` ${e.message}, code ${e.code}`}`
  switch (e.status) {
    case 404:
      // Unknown Channel: the feed's thread (webhook_options.thread_id) was deleted, not the webhook.
      if (e.code === 10003) {
        return `The thread the feed posts into no longer exists (${what}). Edit the feed's thread_id (or clear it) to re-enable it.`
      }
      return `The chat webhook no longer exists (${what}): it was deleted from its channel. Delete this feed and create it again with a working webhook.`
    case 403:
      return `The chat webhook may not post in its channel (${what}). Give it back its access, then edit the feed to re-enable it.`
    default:
      return `The chat platform refused the webhook's token (${what}). Delete this feed and create it again with a working webhook.`
  }
}

const transientReason = (e: RequestTimeout | ServiceUnavailable | PlatformRejected): string =>
  e._tag === "PlatformRejected" ? `the chat platform answered ${e.status}` : e.problems[0]?.message ?? e._tag

type Step = "sent" | "failed" | "skipped" | { readonly retry: string }

export const makePoster = (deps: {
  readonly store: DeliveryStore["Service"]
  readonly platform: ChatPlatform["Service"]
  readonly audit: AuditLog["Service"]
  readonly engine: JobEngine["Service"]
  readonly settings: DeliverySettingsShape
}) => {
  const { audit, engine, platform, settings, store } = deps
  const disable = disableFeeds(store, audit)
  const { crosspost } = makeCrossposter({ store, platform })

  const onError = (d: OpenDelivery, e: PlatformError): Effect.Effect<Step, ServiceUnavailable> => {
    // Stryker disable next-line ConditionalExpression: only a PlatformRejected has a `status`; for the others includes(undefined) is false
    if (e._tag === "PlatformRejected" && [401, 403, 404].includes(e.status)) {
      const reason = rejectionReason(e)
      return store.transaction(Effect.gen(function*() {
        yield* store.markFailed(d.id, reason)
        yield* disable([d.feed.id], ["active", "failing"], reason)
      })).pipe(Effect.as("failed" as const))
    }
    if (e._tag === "PlatformRejected" && e.status !== 429 && e.status !== 408) {
      const reason = `the chat platform refused the message (${e.status}: ${e.message})`
      return Effect.as(store.markFailed(d.id, reason), "failed" as const)
    }
    const why = transientReason(e)
    // No answer, or a 5xx: it may be in the channel. Left `sending` for the next job to look (DeliveryReconcile.ts).
    if (e._tag !== "PlatformRejected") return Effect.as(store.markUncertain(d.id, why), { retry: why })
    const attempts = d.attempts + 1
    if (attempts >= settings.postAttempts) {
      return Effect.as(store.markFailed(d.id, `not posted after ${attempts} attempts: ${why}`), "failed" as const)
    }
    return Effect.as(store.markRetry(d.id, why), { retry: why })
  }

  /** A claimed delivery (attempts counted before this send) sent, and what the platform answered recorded. */
  const sendClaimed = (d: OpenDelivery & { readonly webhookToken: NonNullable<OpenDelivery["webhookToken"]> }, body: NonNullable<OpenDelivery["body"]>) =>
    Effect.gen(function*() {
      const { continued, thread_id, ...first } = body
      const threadId = thread_id ?? undefined
      // Stryker disable next-line ObjectLiteral: `wait` defaults to true (ChatPlatform.executeWebhook's contract): {} asks the same
      const result = yield* Effect.result(executeFirst(platform.executeWebhook)(d.webhookId, d.webhookToken, first, { wait: true, threadId }))
      if (result._tag === "Failure") return yield* onError(d, result.failure)
      yield* store.markSent(d.id, result.success, new Date(yield* Clock.currentTimeMillis))
      // A split's other messages follow into the same place: the thread, or the forum post the first
      // opened (its id is the post's). The item counts as posted once its first is; a follow-up the
      // platform refuses is logged, never sent twice.
      const into = threadId ?? (first.thread_name !== undefined && result.success !== null ? result.success : undefined)
      const posted = [result.success]
      for (const next of continued ?? []) {
        const r = yield* Effect.result(platform.executeWebhook(d.webhookId, d.webhookToken, next, { wait: true, threadId: into }))
        if (r._tag === "Failure") {
          yield* Effect.logWarning("a split message's follow-up was not posted").pipe(
            Effect.annotateLogs({ delivery: d.id, reason: r.failure._tag })
          )
          break
        }
        posted.push(r.success)
      }
      yield* crosspost(d, { messageIds: posted, inThread: into !== undefined })
      return "sent" as const
    })

  /** One message, from its claim to its record, uninterruptibly (bounded by the client's time-outs). */
  const postOne = (d: OpenDelivery): Effect.Effect<Step, ServiceUnavailable> =>
    Effect.gen(function*() {
      if (d.body === null) return yield* Effect.as(store.markFailed(d.id, "the stored message is unreadable"), "failed" as const)
      if (d.webhookToken === null) {
        return yield* Effect.as(
          store.markFailed(d.id, "the webhook's token cannot be decrypted with the configured keys"),
          "failed" as const
        )
      }
      if (!(yield* store.claim(d.id))) return "skipped" as const
      return yield* sendClaimed({ ...d, webhookToken: d.webhookToken }, d.body)
    }).pipe(
      Effect.uninterruptible,
      // Stryker disable next-line StringLiteral,ObjectLiteral: the tracing span's name and attributes only; no record or message changes
      Effect.withSpan("Delivery.postOne", { attributes: { delivery: d.id } })
    )

  const { reconcile } = makeReconciler({
    store,
    platform,
    settings,
    crosspost,
    send: (d) =>
      d.webhookToken === null || d.body === null
        ? Effect.as(store.markFailed(d.id, "the webhook's token cannot be decrypted with the configured keys"), "failed" as const)
        : sendClaimed({ ...d, webhookToken: d.webhookToken }, d.body)
  })

  const postWebhook = (webhookId: string): Effect.Effect<PostOutcome, PostRetry | ServiceUnavailable | JobEngineError> =>
    Effect.gen(function*() {
      let sent = 0
      let failed = 0
      // First the sends that had no answer: found in the channel, or sent once more, before anything newer.
      const uncertain = yield* store.uncertainSends(webhookId)
      const interrupted = uncertain.length
      if (interrupted > 0) {
        yield* Effect.logWarning("deliveries whose send had no answer: looking for them in their channel").pipe(
          Effect.annotateLogs({ webhook: webhookId, count: interrupted })
        )
      }
      for (const d of uncertain) {
        const step = yield* reconcile(d)
        if (step === "sent") sent++
        else if (step === "failed") failed++
        else if (step !== "skipped") return yield* new PostRetry({ webhookId, message: step.retry })
      }
      for (let n = 0; n < MAX_PER_JOB; n++) {
        const next = yield* store.nextPending(webhookId)
        if (Option.isNone(next)) return { sent, failed, interrupted, more: false }
        const step = yield* postOne(next.value)
        if (step === "sent") sent++
        else if (step === "failed") failed++
        else if (step !== "skipped") return yield* new PostRetry({ webhookId, message: step.retry })
      }
      yield* engine.send(PostQueue, { webhookId }, { singletonKey: webhookId })
      return { sent, failed, interrupted, more: true }
    }).pipe(
      // Stryker disable next-line StringLiteral,ObjectLiteral: the tracing span's name and attributes only; no record or message changes
      Effect.withSpan("Delivery.postWebhook", { attributes: { webhook: webhookId } })
    )

  return { postWebhook }
}
