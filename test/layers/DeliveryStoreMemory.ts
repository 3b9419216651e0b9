/**
 * An in-memory DeliveryStore, held to the SQL one's contract (test/contracts/DeliveryStore.contract.ts).
 * It reads feeds from the memory FeedsRepo's table (`FeedsRepoMemoryShared`) and bots from Bots, as
 * the SQL layer joins `feeds` and `bots`; a removed feed takes its deliveries and status with it.
 * Webhook tokens are decrypted with the Cipher, as there. `transaction` runs one at a time (which
 * also makes `lockSource` hold) and restores the state when its effect fails; a nested one joins it,
 * undoing only its own writes when it fails (a savepoint). It does not roll back other stores' writes.
 */
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import type { FeedModuleName } from "../../src/domain/platform/Platform.ts"
import { Bots } from "../../src/services/platform/Bots.ts"
import { Cipher } from "../../src/services/infra/Cipher.ts"
import type { PlatformWebhookBody } from "../../src/services/platform/ChatPlatform.ts"
import type { DeliveryOptions } from "../../src/services/delivery/render/Options.ts"
import { decideCrosspost } from "../../src/services/delivery/CrosspostBudget.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import type { DeliveryFeed, DeliverySource, FeedRef, FeedState, NewDelivery } from "../../src/services/delivery/DeliveryStore.ts"
import { emptyPollState } from "../../src/services/sources/SourcePoller.ts"
import { FeedsMemoryTable } from "./FeedsRepoMemory.ts"

type DeliveryState = "pending" | "sending" | "sent" | "failed" | "skipped"

interface Row extends Omit<NewDelivery, "state"> {
  readonly id: number
  state: DeliveryState
  attempts: number
  messageId: string | null
  at: Date
}

interface Status {
  state: FeedState
  reason: string | null
  delivered: number
  skipped: number
  notCrossposted: number
  lastDeliveryAt: Date | null
}

interface State {
  nextSource: number
  nextDelivery: number
  sources: Map<string, DeliverySource>
  /** source id → item id → seen at */
  seen: Map<string, Map<string, Date>>
  deliveries: Array<Row>
  status: Map<string, Status>
  /** delivery id → its crosspost reservation (feed_crossposts) */
  crossposts: Map<string, { readonly channelId: string; readonly slots: number; readonly at: Date }>
}

/** A seen id still served is written again once its row is this old (as the SQL layer). */
const SEEN_REFRESH_MS = 30 * 86_400_000
const FINISHED: ReadonlyArray<DeliveryState> = ["sent", "failed", "skipped"]

/** Set inside `transaction`, so a nested one joins it instead of waiting for itself. */
const InTransaction = Context.Reference<boolean>("test/DeliveryStoreMemory/InTransaction", { defaultValue: () => false })

/** The later of two times, null counting as none (SQL's GREATEST). */
const latest = (a: Date | null, b: Date | null) => a === null ? b : b === null || a >= b ? a : b

const emptyStatus = (): Status => ({ state: "active", reason: null, delivered: 0, skipped: 0, notCrossposted: 0, lastDeliveryAt: null })

export const DeliveryStoreMemory = Layer.effect(DeliveryStore, Effect.gen(function*() {
  const table = yield* FeedsMemoryTable
  const bots = yield* Bots
  const cipher = yield* Cipher
  const lock = yield* Semaphore.make(1)
  let s: State = { nextSource: 1, nextDelivery: 1, sources: new Map(), seen: new Map(), deliveries: [], status: new Map(), crossposts: new Map() }

  /** The feeds as stored now; what belonged to a removed feed goes (the SQL cascade). */
  const feeds = Effect.map(table.all, (all) => {
    const ids = new Set(all.map((f) => f.id))
    s.deliveries = s.deliveries.filter((d) => ids.has(d.feedId))
    for (const id of s.status.keys()) if (!ids.has(id)) s.status.delete(id)
    return all
  })
  type Feed = Effect.Success<typeof feeds>[number]
  const crosspostOf = (f: Feed) => (f.webhookOptions as { readonly crosspost?: unknown } | null)?.crosspost === true
  const statusOf = (feedId: string) => s.status.get(feedId) ?? emptyStatus()
  const writableStatus = (feedId: string) => {
    const status = s.status.get(feedId) ?? emptyStatus()
    s.status.set(feedId, status)
    return status
  }
  const refOf = (f: Feed) =>
    Effect.map(bots.get(f.botId), (bot): FeedRef => ({
      id: f.id,
      module: f.module,
      botId: f.botId,
      serverId: f.serverId,
      feedIdentifier: f.feedIdentifier,
      bot: { userId: f.botId, userName: bot?.name ?? "Feeds bot", avatar: bot?.icon ?? null },
      state: statusOf(f.id).state,
      reason: statusOf(f.id).reason
    }))
  const feedOf = (f: Feed) =>
    Effect.map(refOf(f), (ref): DeliveryFeed => ({
      ...ref,
      createdAt: f.createdAt,
      options: f.webhookOptions as DeliveryOptions,
      displayInfo: f.displayInfo,
      webhookId: f.webhook.id,
      forumTags: f.webhook.forumTags ?? null
    }))
  const sourceBy = (module: FeedModuleName, identifier: string) =>
    [...s.sources.values()].find((src) => src.module === module && src.identifier === identifier)
  const update = (sourceId: string, change: (src: DeliverySource) => Partial<DeliverySource>) => {
    const src = s.sources.get(sourceId)
    if (src !== undefined) s.sources.set(sourceId, { ...src, ...change(src) })
    return s.sources.get(sourceId)
  }
  const row = (deliveryId: string) => s.deliveries.find((d) => String(d.id) === deliveryId)
  const transition = (deliveryId: string, from: ReadonlyArray<DeliveryState>, to: DeliveryState, reason: string | null) =>
    Effect.map(feeds, () => {
      const d = row(deliveryId)
      if (d === undefined || !from.includes(d.state)) return false
      Object.assign(d, { state: to, reason, at: new Date() })
      return true
    })
  const failAll = (match: (d: Row) => boolean, reason: string) =>
    Effect.map(feeds, () => {
      const rows = s.deliveries.filter(match)
      for (const d of rows) Object.assign(d, { state: "failed", reason, at: new Date() })
      return rows.length
    })
  const byTime = (a: Date | null, b: Date | null) => a === null ? (b === null ? 0 : -1) : b === null ? 1 : a.getTime() - b.getTime()

  const nextPending = (webhookId: string) =>
    Effect.gen(function*() {
      const all = yield* feeds
      const open = s.deliveries
        .filter((d) => d.webhookId === webhookId && d.state === "pending" && statusOf(d.feedId).state !== "disabled")
        .sort((a, b) => a.eventAt.getTime() - b.eventAt.getTime() || a.id - b.id)[0]
      if (open === undefined) return Option.none()
      const feed = all.find((f) => f.id === open.feedId)!
      const token = yield* cipher.decrypt(feed.webhook.tokenEnc, `feed-webhook:${feed.webhook.id}`).pipe(
        Effect.catch((e) => Effect.as(Effect.logError(`feed ${feed.id}: the webhook token does not decrypt: ${e.message}`), null))
      )
      return Option.some({
        id: String(open.id),
        itemId: open.itemId,
        webhookId: open.webhookId,
        body: isMessage(open.body) ? open.body : null,
        attempts: open.attempts,
        feed: yield* refOf(feed),
        webhookToken: token,
        crosspost: crosspostOf(feed)
      })
    })

  return DeliveryStore.of({
    transaction: (self) =>
      Effect.gen(function*() {
        // A nested one is a savepoint: its failure undoes its own writes only.
        const run = Effect.suspend(() => {
          const before = structuredClone(s)
          return self.pipe(Effect.onError(() => Effect.sync(() => void (s = before))), Effect.provideService(InTransaction, true))
        })
        return yield* (yield* InTransaction) ? run : lock.withPermits(1)(run)
      }),
    upsertSource: (module, identifier) =>
      Effect.sync(() => {
        const found = sourceBy(module, identifier)
        if (found !== undefined) return found
        const created: DeliverySource = {
          id: String(s.nextSource++),
          module,
          identifier,
          pollState: emptyPollState,
          baselinedAt: null,
          lastPollAt: null,
          nextPollAt: null,
          lastSuccessAt: null,
          failingSince: null,
          failures: 0,
          lastError: null,
          polledSlot: null,
          successorSlot: null
        }
        s.sources.set(created.id, created)
        return created
      }),
    source: (sourceId) => Effect.sync(() => Option.fromUndefinedOr(s.sources.get(sourceId))),
    lockSource: (sourceId) => Effect.sync(() => Option.fromUndefinedOr(s.sources.get(sourceId))),
    pollTarget: (sourceId) =>
      Effect.map(feeds, (all) => {
        const src = s.sources.get(sourceId)
        if (src === undefined) return Option.none()
        const states = all
          .filter((f) => f.module === src.module && f.feedIdentifier === src.identifier)
          .map((f) => statusOf(f.id).state)
        return Option.some({
          source: src,
          active: states.filter((st) => st !== "disabled").length,
          failing: states.filter((st) => st === "failing").length
        })
      }),
    sourceOfFeed: (feedId) =>
      Effect.map(feeds, (all) => {
        const feed = all.find((f) => f.id === feedId)
        return Option.fromUndefinedOr(feed && sourceBy(feed.module, feed.feedIdentifier))
      }),
    feedsOfSource: (source) =>
      Effect.flatMap(feeds, (all) =>
        Effect.forEach(
          all.filter((f) => f.module === source.module && f.feedIdentifier === source.identifier).sort((a, b) => Number(a.id) - Number(b.id)),
          feedOf
        )),
    sourcesWithoutPoll: (overdueBefore, limit) =>
      Effect.map(feeds, (all) =>
        [...s.sources.values()]
          .filter((src) => src.nextPollAt === null || src.nextPollAt < overdueBefore)
          .filter((src) =>
            all.some((f) => f.module === src.module && f.feedIdentifier === src.identifier && statusOf(f.id).state !== "disabled")
          )
          .sort((a, b) => byTime(a.nextPollAt, b.nextPollAt) || Number(a.id) - Number(b.id))
          .slice(0, limit)),
    setNextPoll: (sourceId, at) => Effect.sync(() => void update(sourceId, () => ({ nextPollAt: at }))),
    pollSucceeded: (sourceId, r) =>
      Effect.sync(() =>
        void update(sourceId, (src) => ({
          pollState: r.state,
          lastPollAt: r.at,
          lastSuccessAt: r.at,
          failures: 0,
          failingSince: null,
          lastError: null,
          baselinedAt: r.baseline ? (src.baselinedAt ?? r.at) : src.baselinedAt,
          polledSlot: latest(src.polledSlot, r.slot ?? null)
        }))
      ),
    pollUnchanged: (sourceId, r) =>
      Effect.sync(() => {
        const src = s.sources.get(sourceId)
        if (src === undefined || (r.slot !== null && src.polledSlot !== null && src.polledSlot >= r.slot)) return false
        update(sourceId, () => ({
          pollState: r.state,
          lastPollAt: r.at,
          lastSuccessAt: r.at,
          failures: 0,
          failingSince: null,
          lastError: null,
          polledSlot: latest(src.polledSlot, r.slot),
          nextPollAt: r.next,
          successorSlot: r.next
        }))
        return true
      }),
    pollFailed: (sourceId, r) =>
      Effect.sync(() =>
        update(sourceId, (src) => ({
          failures: src.failures + 1,
          failingSince: src.failingSince ?? r.at,
          lastError: r.message,
          lastPollAt: r.at,
          polledSlot: latest(src.polledSlot, r.slot ?? null)
        }))!
      ),
    resetFailures: (sourceId) => Effect.sync(() => void update(sourceId, () => ({ failures: 0, failingSince: null, lastError: null }))),
    seenAmong: (sourceId, ids) => Effect.sync(() => new Set(ids.filter((id) => s.seen.get(sourceId)?.has(id)))),
    markSeen: (sourceId, ids, at) =>
      Effect.sync(() => {
        const seen = s.seen.get(sourceId) ?? new Map<string, Date>()
        s.seen.set(sourceId, seen)
        for (const id of ids) {
          const before = seen.get(id)
          if (before === undefined || before.getTime() < at.getTime() - SEEN_REFRESH_MS) seen.set(id, at)
        }
      }),
    insertDeliveries: (rows) =>
      Effect.map(feeds, () =>
        rows.filter((r) => {
          if (s.deliveries.some((d) => d.feedId === r.feedId && d.itemId === r.itemId)) return false
          s.deliveries.push({ ...r, id: s.nextDelivery++, attempts: 0, messageId: null, at: new Date() })
          if (r.state === "skipped") writableStatus(r.feedId).skipped += 1
          return true
        })),
    uncertainSends: (webhookId) =>
      Effect.gen(function*() {
        const all = yield* feeds
        const open = s.deliveries
          .filter((d) => d.webhookId === webhookId && d.state === "sending")
          .sort((a, b) => a.eventAt.getTime() - b.eventAt.getTime() || a.id - b.id)
        return yield* Effect.forEach(open, (d) =>
          Effect.gen(function*() {
            const feed = all.find((f) => f.id === d.feedId)!
            const webhookToken = yield* cipher.decrypt(feed.webhook.tokenEnc, `feed-webhook:${feed.webhook.id}`).pipe(
              Effect.catch(() => Effect.succeed(null))
            )
            const bot = yield* bots.get(feed.botId)
            return {
              id: String(d.id),
              itemId: d.itemId,
              webhookId: d.webhookId,
              body: isMessage(d.body) ? d.body : null,
              attempts: d.attempts,
              feed: yield* refOf(feed),
              webhookToken,
              crosspost: crosspostOf(feed),
              sentAt: d.at,
              reason: d.reason,
              channelId: feed.webhook.channelId,
              botToken: bot?.token ?? null
            }
          }))
      }),
    markUncertain: (deliveryId, reason) =>
      Effect.map(feeds, () => {
        const d = row(deliveryId)
        if (d !== undefined && d.state === "sending") Object.assign(d, { reason })
      }),
    reclaim: (deliveryId) =>
      Effect.map(feeds, () => {
        const d = row(deliveryId)
        if (d === undefined || d.state !== "sending") return false
        d.attempts += 1
        d.at = new Date()
        return true
      }),
    recordedMessageIds: (webhookId, messageIds) =>
      Effect.map(feeds, () =>
        new Set(
          s.deliveries
            .filter((d) => d.webhookId === webhookId && d.state === "sent" && d.messageId !== null && messageIds.includes(d.messageId))
            .map((d) => d.messageId!)
        )),
    nextPending,
    claim: (deliveryId) =>
      Effect.map(transition(deliveryId, ["pending"], "sending", row(deliveryId)?.reason ?? null), (claimed) => {
        if (claimed) row(deliveryId)!.attempts += 1
        return claimed
      }),
    markSent: (deliveryId, messageId, at) =>
      Effect.map(feeds, () => {
        const d = row(deliveryId)
        if (d === undefined || d.state === "sent") return
        Object.assign(d, { state: "sent", messageId, reason: null, at })
        const status = writableStatus(d.feedId)
        status.delivered += 1
        status.lastDeliveryAt = at
      }),
    markRetry: (deliveryId, reason) => Effect.asVoid(transition(deliveryId, ["sending"], "pending", reason)),
    markFailed: (deliveryId, reason) => Effect.asVoid(transition(deliveryId, ["pending", "sending"], "failed", reason)),
    // Synchronous between its reads and its write: no other call runs in between (the SQL layer's lock).
    reserveCrosspost: (deliveryId, slots, at) =>
      Effect.gen(function*() {
        const all = yield* feeds
        const d = row(deliveryId)
        const feed = d === undefined ? undefined : all.find((f) => f.id === d.feedId)
        if (d === undefined || feed === undefined) return { _tag: "Gone" } as const
        if (s.crossposts.has(deliveryId)) return { _tag: "Taken" } as const
        const channelId = feed.webhook.channelId
        const taken = [...s.crossposts.values()].filter((c) => c.channelId === channelId)
        const decision = decideCrosspost(taken, slots, at)
        if (decision._tag === "OverBudget") return { _tag: "OverBudget", channelId, freeAt: decision.freeAt } as const
        s.crossposts.set(deliveryId, { channelId, slots, at })
        const bot = yield* bots.get(feed.botId)
        return { _tag: "Granted", channelId, botToken: bot?.token ?? null } as const
      }),
    notCrossposted: (deliveryId, reason) =>
      Effect.map(feeds, () => {
        const d = row(deliveryId)
        if (d === undefined || d.state !== "sent" || d.reason !== null) return
        Object.assign(d, { reason })
        writableStatus(d.feedId).notCrossposted += 1
      }),
    failPending: (feedId, reason) => failAll((d) => d.feedId === feedId && d.state === "pending", reason),
    webhooksWithPending: (before, limit) =>
      Effect.map(feeds, () =>
        [...new Set(s.deliveries.filter((d) => (d.state === "pending" || d.state === "sending") && d.at < before).map((d) => d.webhookId))].slice(0, limit)),
    setFeedState: (feedIds, from, to, reason) =>
      Effect.flatMap(feeds, (all) =>
        Effect.forEach(
          all.filter((f) => feedIds.includes(f.id) && from.includes(statusOf(f.id).state)).sort((a, b) => Number(a.id) - Number(b.id)),
          (f) => {
            const previous = statusOf(f.id).state
            Object.assign(writableStatus(f.id), { state: to, reason })
            return Effect.map(refOf(f), (feed) => ({ feed, previous }))
          }
        )),
    status: (feedId) =>
      Effect.map(feeds, (all) => {
        const feed = all.find((f) => f.id === feedId)
        if (feed === undefined) return Option.none()
        const { delivered, lastDeliveryAt, notCrossposted, reason, skipped, state } = statusOf(feedId)
        const src = sourceBy(feed.module, feed.feedIdentifier)
        return Option.some({
          state,
          reason,
          delivered,
          skipped,
          notCrossposted,
          lastDeliveryAt,
          lastPollAt: src?.lastPollAt ?? null,
          nextPollAt: src?.nextPollAt ?? null
        })
      }),
    retention: ({ deliveriesBefore, seenBefore }) =>
      Effect.map(feeds, () => {
        let seen = 0
        for (const ids of s.seen.values()) {
          for (const [id, at] of ids) if (at < seenBefore) seen += Number(ids.delete(id))
        }
        const kept = s.deliveries.filter((d) => !(d.at < deliveriesBefore && FINISHED.includes(d.state)))
        const deliveries = s.deliveries.length - kept.length
        s.deliveries = kept
        for (const [id, c] of s.crossposts) if (c.at < deliveriesBefore) s.crossposts.delete(id)
        return { seen, deliveries }
      })
  })
}))

/** A stored body the platform can post (the SQL layer reads it with its Body schema). */
const isMessage = (body: PlatformWebhookBody | null): body is PlatformWebhookBody =>
  body !== null && typeof body === "object" && !Array.isArray(body)
