/**
 * An in-memory PushStore, held to the SQL one's contract (test/contracts/PushStore.contract.ts).
 * The SQL layer joins `feed_sources`, `feeds` and `feed_status`; this one reads the same through
 * DeliveryStore (a source by id, its feeds and their state) and the memory FeedsRepo's table
 * (`FeedsMemoryTable`, to find the sources that have feeds), so it goes over DeliveryStoreMemory and
 * FeedsRepoMemoryShared. Secrets are kept as given (the SQL layer encrypts them at rest). One row
 * per (source, topic); a hook id used twice is a defect (the SQL unique violation); message ids
 * are timed with the Effect Clock.
 */
import { Clock, Effect, Layer, Option } from "effect"
import type { Redacted } from "effect"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import type { DeliverySource } from "../../src/services/delivery/DeliveryStore.ts"
import { PushStore } from "../../src/services/push/PushStore.ts"
import type { PushState, PushSubscription, PushTopic, Unsubscribed } from "../../src/services/push/PushStore.ts"
import { FeedsMemoryTable } from "./FeedsRepoMemory.ts"

interface Row {
  readonly id: number
  readonly sourceId: string
  readonly topic: PushTopic
  readonly hookId: string
  readonly secret: Redacted.Redacted<string>
  state: PushState
  externalId: string | null
  leaseExpiresAt: Date | null
  nextActionAt: Date | null
  reason: string | null
}

const EXPIRED_REASON = "The lease ended before it was renewed."

export const PushStoreMemory = Layer.effect(PushStore, Effect.gen(function*() {
  const deliveries = yield* DeliveryStore
  const table = yield* FeedsMemoryTable
  let nextId = 1
  let rows: Array<Row> = []
  /** `hook \0 message` → when taken (epoch ms) */
  const messages = new Map<string, number>()

  /** Feeds of the source that still deliver (not disabled). */
  const activeFeeds = (src: DeliverySource) =>
    Effect.map(deliveries.feedsOfSource(src), (feeds) => feeds.filter((f) => f.state !== "disabled").length)
  const view = (r: Row) =>
    Effect.gen(function*() {
      const src = yield* deliveries.source(r.sourceId)
      const active = Option.isSome(src) ? yield* activeFeeds(src.value) : 0
      return {
        id: String(r.id),
        sourceId: r.sourceId,
        topic: r.topic,
        hookId: r.hookId,
        secret: r.secret,
        state: r.state,
        externalId: r.externalId,
        leaseExpiresAt: r.leaseExpiresAt,
        source: Option.isSome(src) ? { module: src.value.module, identifier: src.value.identifier } : null,
        activeFeeds: active
      } satisfies PushSubscription
    })
  const byId = (id: string) => rows.find((r) => String(r.id) === id)
  /** Every stored source that some feed follows (a source no feed follows delivers nothing). */
  const followedSources = Effect.gen(function*() {
    const found = new Map<string, DeliverySource>()
    for (const feed of yield* table.all) {
      const src = yield* deliveries.sourceOfFeed(feed.id)
      if (Option.isSome(src)) found.set(src.value.id, src.value)
    }
    return [...found.values()].sort((a, b) => Number(a.id) - Number(b.id))
  })

  return PushStore.of({
    unsubscribed: (topics, limit) =>
      Effect.gen(function*() {
        const sources = yield* followedSources
        const lists: Array<ReadonlyArray<Unsubscribed>> = []
        for (const t of topics) {
          const list: Array<Unsubscribed> = []
          for (const src of sources) {
            if (list.length >= limit) break
            if (src.module !== t.module || rows.some((r) => r.sourceId === src.id && r.topic === t.topic)) continue
            if ((yield* activeFeeds(src)) === 0) continue
            list.push({ sourceId: src.id, module: src.module, identifier: src.identifier, topic: t.topic })
          }
          lists.push(list)
        }
        return lists.flat().slice(0, Math.max(0, limit))
      }),
    create: (u, hookId, secret, nextActionAt) =>
      Effect.suspend(() => {
        if (rows.some((r) => r.sourceId === u.sourceId && r.topic === u.topic)) return Effect.succeed(Option.none())
        if (rows.some((r) => r.hookId === hookId)) return Effect.die(new Error("push_subscriptions.hook_id is unique"))
        const row: Row = {
          id: nextId++,
          sourceId: u.sourceId,
          topic: u.topic,
          hookId,
          secret,
          state: "pending",
          externalId: null,
          leaseExpiresAt: null,
          nextActionAt,
          reason: null
        }
        rows.push(row)
        // As the SQL layer: the source as the caller named it, its feeds that still deliver counted.
        const counted = Effect.flatMap(deliveries.source(u.sourceId), (src) => Option.isSome(src) ? activeFeeds(src.value) : Effect.succeed(0))
        return Effect.map(counted, (active) => Option.some<PushSubscription>({
          id: String(row.id),
          sourceId: u.sourceId,
          topic: u.topic,
          hookId,
          secret,
          state: "pending",
          externalId: null,
          leaseExpiresAt: null,
          source: { module: u.module, identifier: u.identifier },
          activeFeeds: active
        }))
      }),
    due: (now, retryAt, limit) =>
      Effect.gen(function*() {
        const claimed = rows
          .filter((r) => r.nextActionAt !== null && r.nextActionAt.getTime() <= now.getTime())
          .sort((a, b) => a.nextActionAt!.getTime() - b.nextActionAt!.getTime() || a.id - b.id)
          .slice(0, Math.max(0, limit))
        for (const r of claimed) r.nextActionAt = retryAt
        // Rows whose source is gone or lost its feeds are due too: they are unsubscribed.
        const idle: Array<Row> = []
        for (const r of rows) {
          if (idle.length >= limit) break
          const src = yield* deliveries.source(r.sourceId)
          if (Option.isNone(src) || (yield* activeFeeds(src.value)) === 0) idle.push(r)
        }
        const ids = new Set([...claimed, ...idle].map((r) => r.id))
        return yield* Effect.forEach(rows.filter((r) => ids.has(r.id)), view)
      }),
    byHook: (hookId) =>
      Effect.suspend(() => {
        const row = rows.find((r) => r.hookId === hookId)
        return row === undefined ? Effect.succeed(Option.none()) : Effect.map(view(row), Option.some)
      }),
    activate: (id, leaseExpiresAt, nextActionAt) =>
      Effect.sync(() => {
        const row = byId(id)
        if (row !== undefined) Object.assign(row, { state: "active", leaseExpiresAt, nextActionAt, reason: null })
      }),
    reopen: (id) =>
      Effect.sync(() => {
        const row = byId(id)
        if (row !== undefined && (row.state === "revoked" || row.state === "expired")) row.state = "pending"
      }),
    requested: (id, externalId) =>
      Effect.sync(() => {
        const row = byId(id)
        if (row !== undefined) row.externalId = externalId
      }),
    end: (id, state, reason, nextActionAt) =>
      Effect.sync(() => {
        const row = byId(id)
        if (row === undefined || (row.state !== "pending" && row.state !== "active")) return false
        Object.assign(row, { state, reason, nextActionAt })
        return true
      }),
    expire: (now) =>
      Effect.sync(() => {
        const ended = rows.filter((r) => r.state === "active" && r.leaseExpiresAt !== null && r.leaseExpiresAt.getTime() <= now.getTime())
        for (const r of ended) Object.assign(r, { state: "expired", reason: EXPIRED_REASON, nextActionAt: r.nextActionAt ?? now })
        return ended.map((r) => r.sourceId)
      }),
    remove: (id) => Effect.sync(() => void (rows = rows.filter((r) => String(r.id) !== id))),
    takeMessage: (hookId, messageId) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const key = `${hookId}\u0000${messageId}`
        if (messages.has(key)) return false
        messages.set(key, now)
        return true
      }),
    forgetMessages: (before) =>
      Effect.sync(() => {
        let n = 0
        for (const [key, at] of messages) {
          if (at < before.getTime()) n += Number(messages.delete(key))
        }
        return n
      }),
    pushed: (sourceId, now) =>
      Effect.sync(() => {
        const mine = rows.filter((r) => r.sourceId === sourceId)
        return mine.length > 0 &&
          mine.every((r) => r.state === "active" && (r.leaseExpiresAt === null || r.leaseExpiresAt.getTime() > now.getTime()))
      })
  })
}))
