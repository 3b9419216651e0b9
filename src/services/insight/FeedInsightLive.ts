/**
 * FeedInsight on the delivery engine. The feed is found in the caller's scope (bot, server,
 * module: another server's feed is 404), then read as the worker reads it (DeliveryStore's
 * `feedsOfSource`, `toSelect`). The source is read now with the worker's poller, unconditionally
 * (no validators, no cursor: a poll that always answers with what the source serves), and judged
 * with the worker's rules (FeedPreview.ts). Cool-downs are taken before any request leaves. The test
 * message reads the webhook's forum again first (FeedsForum.ts) and keeps what it read: not a change
 * of the feed (its options, state and webhook stay), the platform's facts brought up to date.
 */
import { Clock, Effect, Layer, Option, Result } from "effect"
import { BadRequest, NotFound, RequestTimeout, ServiceUnavailable, TooManyRequests } from "../../domain/infra/Errors.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { AuditLog } from "../audit/AuditLog.ts"
import { parseAuditQuery, pageMax } from "../audit/AuditQuery.ts"
import type { PlatformError } from "../platform/ChatPlatform.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import { Cipher } from "../infra/Cipher.ts"
import { oldestFirst } from "../delivery/render/Select.ts"
import type { ForumTag } from "../delivery/render/ForumPost.ts"
import { render } from "../delivery/render/Render.ts"
import { toSelect } from "../delivery/DeliveryEngine.ts"
import { rejectionReason } from "../delivery/DeliveryPost.ts"
import { DeliveryScheduling } from "../delivery/DeliveryScheduling.ts"
import { DeliverySettings } from "../delivery/DeliverySettings.ts"
import { DeliveryStore } from "../delivery/DeliveryStore.ts"
import type { ServerAccess } from "../platform/Directory.ts"
import { FeedInsight, REFRESH_COOLDOWN_SECONDS, TEST_COOLDOWN_SECONDS } from "./FeedInsight.ts"
import { FeedInsightStore } from "./FeedInsightStore.ts"
import { buildPreview } from "../feeds/FeedPreview.ts"
import { FeedsForum } from "../feeds/FeedsForum.ts"
import { FeedsRepo } from "../feeds/FeedsRepo.ts"
import type { PollFailed } from "../sources/SourcePoller.ts"
import { emptyPollState, SourcePoller } from "../sources/SourcePoller.ts"

/** What a source that fails to answer becomes for the caller (decisions.md "Upstream faults"). */
const sourceError = (e: PollFailed) =>
  e.kind === "timeout"
    ? RequestTimeout.of(`The feed's source did not answer in time: ${e.message}`)
    : ServiceUnavailable.of(`The feed's source could not be read now: ${e.message}`, Math.ceil(e.retryAfterSeconds ?? 30))

/** What the chat platform's refusal of the test message becomes. */
const platformError = (e: PlatformError) => {
  if (e._tag !== "PlatformRejected") return e
  if ([401, 403, 404].includes(e.status)) return BadRequest.of(rejectionReason(e))
  if (e.status === 400) return BadRequest.of(`The chat platform refused the message (${e.status}: ${e.message}).`)
  return ServiceUnavailable.of(`The chat platform answered ${e.status}; try again later.`, 30)
}

const sameTags = (a: ReadonlyArray<ForumTag> | null, b: ReadonlyArray<ForumTag> | null) =>
  a === null || b === null ? a === b : a.length === b.length && a.every((t, i) => t.id === b[i]!.id && t.name === b[i]!.name)

const busy = (what: string, seconds: number) =>
  TooManyRequests.of(`${what}; try again in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`, seconds)

/** Needs FeedsRepo, DeliveryStore, DeliveryScheduling, DeliverySettings, SourcePoller, ChatPlatform, Cipher, AuditLog, FeedInsightStore. */
export const FeedInsightLive = Layer.effect(FeedInsight, Effect.gen(function*() {
  const repo = yield* FeedsRepo
  const store = yield* DeliveryStore
  const scheduling = yield* DeliveryScheduling
  const settings = yield* DeliverySettings
  const poller = yield* SourcePoller
  const platform = yield* ChatPlatform
  const cipher = yield* Cipher
  const audit = yield* AuditLog
  const insight = yield* FeedInsightStore

  const forum = yield* FeedsForum.make
  const scopeOf = (access: ServerAccess, module: FeedModuleName) => ({ botId: access.botId, serverId: access.serverId, module })

  const findFeed = (access: ServerAccess, module: FeedModuleName, feedId: string) =>
    Effect.flatMap(repo.find(scopeOf(access, module), feedId), (found) =>
      Option.match(found, {
        onNone: () => Effect.fail(NotFound.of(`No ${module} feed ${feedId} on this server.`)),
        onSome: Effect.succeed
      }))

  /** The feed as the worker reads it (options decoded by its module's schema, its state). */
  const deliveryFeed = (module: FeedModuleName, feedId: string, identifier: string) =>
    Effect.flatMap(store.feedsOfSource({ module, identifier }), (feeds) => {
      const feed = feeds.find((f) => f.id === feedId)
      return feed === undefined ? Effect.fail(NotFound.of(`No ${module} feed ${feedId} on this server.`)) : Effect.succeed(feed)
    })

  const readSource = (module: FeedModuleName, identifier: string) =>
    poller.poll(module, identifier, emptyPollState).pipe(
      Effect.mapError(sourceError),
      Effect.map((r) => (r._tag === "Items" ? r.items : []))
    )

  const preview = (access: ServerAccess, module: FeedModuleName, feedId: string) =>
    Effect.gen(function*() {
      const record = yield* findFeed(access, module, feedId)
      const feed = yield* deliveryFeed(module, feedId, record.feedIdentifier)
      const source = yield* store.sourceOfFeed(feedId)
      const items = yield* readSource(module, record.feedIdentifier)
      const ids = items.map((i) => i.id)
      const seen = Option.isSome(source) ? yield* store.seenAmong(source.value.id, ids) : new Set<string>()
      const history = yield* insight.history(feedId, ids)
      const now = new Date(yield* Clock.currentTimeMillis)
      return buildPreview({
        items,
        seen,
        history,
        baselined: Option.isSome(source) && source.value.baselinedAt !== null,
        feed: { ...toSelect(feed), state: feed.state, reason: feed.reason },
        limits: { now, maxItemAgeHours: settings.maxItemAgeHours, maxItemsPerPoll: settings.maxItemsPerPoll }
      })
    }).pipe(Effect.withSpan("FeedInsight.preview", { attributes: { module } }))

  const test = (access: ServerAccess, module: FeedModuleName, feedId: string) =>
    Effect.gen(function*() {
      const record = yield* findFeed(access, module, feedId)
      const feed = yield* deliveryFeed(module, feedId, record.feedIdentifier)
      const slot = yield* insight.cooldown(`test:${feedId}`, TEST_COOLDOWN_SECONDS)
      if (slot._tag === "Busy") return yield* busy("One test message per feed every 10 seconds", slot.retryAfterSeconds)
      const newest = oldestFirst(yield* readSource(module, record.feedIdentifier)).at(-1)
      if (newest === undefined) return yield* BadRequest.of("The feed's source has no item yet, so there is nothing to send.")
      // The webhook's forum read again and kept (FeedsForum.ts): the test shows, and the worker then
      // sends, the forum as it is now; a platform that cannot say now leaves the stored tags.
      const forumTags = yield* forum.read(access, record.webhook.channelId).pipe(
        Effect.tap((tags) => sameTags(tags, feed.forumTags) ? Effect.void : repo.setForumTags(scopeOf(access, module), feedId, tags)),
        Effect.catchTags({
          RequestTimeout: () => Effect.succeed(feed.forumTags),
          ServiceUnavailable: () => Effect.succeed(feed.forumTags)
        })
      )
      const message = render(newest, feed.options, { ...toSelect(feed).defaults, forumTags })
      const token = yield* cipher.decrypt(record.webhook.tokenEnc, `feed-webhook:${record.webhook.id}`).pipe(
        Effect.mapError(() => ServiceUnavailable.of("The feed's webhook token cannot be decrypted with the configured keys.", 60))
      )
      // Into the feed's thread, as the worker posts (delivery.md §10); a split's first message only.
      const threadId = feed.options.thread_id ?? undefined
      const sent = yield* Effect.result(platform.executeWebhook(record.webhook.id, token, message, { wait: true, threadId }))
      if (Result.isFailure(sent)) return yield* platformError(sent.failure)
      yield* audit.append({
        botId: access.botId,
        serverId: access.serverId,
        actor: access.actor,
        module,
        itemIdentifier: Number(feedId),
        eventType: "PUSH",
        eventString: `Sent a test message of ${module} feed ${feedId} ("${record.feedIdentifier}") to webhook "${record.webhook.name}": item ${newest.id}`
      })
      return { success: true as const, message_id: sent.success }
    }).pipe(Effect.withSpan("FeedInsight.test", { attributes: { module } }))

  const refresh = (access: ServerAccess, module: FeedModuleName, feedId: string) =>
    Effect.gen(function*() {
      const record = yield* findFeed(access, module, feedId)
      // The source exists with the feed; `attach` only finds it (or makes it again if it was lost).
      const sourceId = yield* scheduling.attach(module, record.feedIdentifier)
      const slot = yield* insight.cooldown(`refresh:${sourceId}`, REFRESH_COOLDOWN_SECONDS)
      if (slot._tag === "Busy") return yield* busy("This feed's source was refreshed less than 60 seconds ago", slot.retryAfterSeconds)
      yield* scheduling.pollNow(sourceId).pipe(
        Effect.catchTag("JobEngineError", (e) =>
          Effect.andThen(
            Effect.logWarning("refresh: the poll could not be sent", e),
            Effect.fail(ServiceUnavailable.of("The job engine cannot take the poll now; try again later.", 30))
          ))
      )
    }).pipe(Effect.withSpan("FeedInsight.refresh", { attributes: { module } }))

  const deliveries = (access: ServerAccess, module: FeedModuleName, feedId: string, query: { readonly page?: string; readonly page_size?: string }) =>
    Effect.gen(function*() {
      const parsed = parseAuditQuery({
        ...(query.page === undefined ? {} : { page: query.page }),
        ...(query.page_size === undefined ? {} : { page_size: query.page_size })
      })
      if (Result.isFailure(parsed)) return yield* parsed.failure
      const { page, pageSize } = parsed.success
      yield* findFeed(access, module, feedId)
      const found = yield* insight.logPage(feedId, page, pageSize)
      return {
        deliveries: found.rows.map((r) => ({
          id: r.id,
          item_id: r.itemId,
          title: r.title,
          url: r.url,
          state: r.state,
          reason: r.reason,
          message_id: r.messageId,
          at: r.at.toISOString()
        })),
        page,
        page_size: pageSize,
        page_max: pageMax(found.total, pageSize)
      }
    }).pipe(Effect.withSpan("FeedInsight.deliveries", { attributes: { module } }))

  return { preview, test, refresh, deliveries }
}))
