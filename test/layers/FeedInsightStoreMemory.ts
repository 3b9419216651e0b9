/**
 * An in-memory FeedInsightStore, held to the SQL one's contract (test/contracts/FeedInsightStore.contract.ts).
 * The SQL layer reads `feed_deliveries`, which DeliveryStore writes; this one reads its own log,
 * `FeedInsightMemoryLog`, which a test (or a memory delivery engine) writes as the delivery engine
 * leaves the rows. The log is the finished rows (sent, failed, skipped), newest first by (time,
 * id), ids compared as numbers; the preview's history is every state. Cool-downs read the Effect
 * Clock (TestClock in tests that keep it), free again once their time has passed, and a busy
 * attempt changes nothing.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { FeedInsightStore } from "../../src/services/insight/FeedInsightStore.ts"
import type { LoggedDelivery } from "../../src/services/insight/FeedInsightStore.ts"
import type { PastDelivery } from "../../src/services/delivery/render/Select.ts"

export type DeliveryRowState = PastDelivery["state"]

/** A delivery as the engine leaves it: recorded, claimed, finished. */
export interface MemoryDelivery {
  readonly itemId: string
  readonly state: DeliveryRowState
  readonly at: Date
  readonly title?: string | null
  readonly url?: string | null
  readonly reason?: string | null
  readonly messageId?: string | null
}

/** The deliveries the memory FeedInsightStore reads: the `feed_deliveries` of the SQL layer. */
export class FeedInsightMemoryLog extends Context.Service<FeedInsightMemoryLog, {
  /** Records a delivery of the feed (ids ascend in the order of the calls); its id. Unique per (feed, item): a repeat is ignored. */
  readonly record: (feedId: string, row: MemoryDelivery) => Effect.Effect<string>
  /** Moves the feed's delivery of `itemId` on (claimed, sent, failed), at `at`. */
  readonly update: (feedId: string, itemId: string, change: Partial<Omit<MemoryDelivery, "itemId">>) => Effect.Effect<void>
  /** The feed was deleted: its deliveries go with it (the SQL cascade). */
  readonly removeFeed: (feedId: string) => Effect.Effect<void>
}>()("test/FeedInsightMemoryLog") {}

interface Row {
  readonly id: number
  readonly feedId: string
  itemId: string
  state: DeliveryRowState
  at: Date
  title: string | null
  url: string | null
  reason: string | null
  messageId: string | null
}

const FINISHED: ReadonlyArray<DeliveryRowState> = ["sent", "failed", "skipped"]
const newestFirst = (a: Row, b: Row) => b.at.getTime() - a.at.getTime() || b.id - a.id

const toLogged = (r: Row): LoggedDelivery => ({
  id: String(r.id),
  itemId: r.itemId,
  title: r.title,
  url: r.url,
  state: r.state as LoggedDelivery["state"],
  reason: r.reason,
  messageId: r.messageId,
  at: r.at
})

/** The store and its log, one state (fresh for each build). */
export const FeedInsightStoreMemory: Layer.Layer<FeedInsightStore | FeedInsightMemoryLog> = Layer.unwrap(Effect.sync(() => {
  let nextId = 1
  let rows: Array<Row> = []
  /** key → until (epoch ms) */
  const cooldowns = new Map<string, number>()

  const log = FeedInsightMemoryLog.of({
    record: (feedId, r) =>
      Effect.sync(() => {
        const existing = rows.find((d) => d.feedId === feedId && d.itemId === r.itemId)
        if (existing !== undefined) return String(existing.id)
        const row: Row = {
          id: nextId++,
          feedId,
          itemId: r.itemId,
          state: r.state,
          at: r.at,
          title: r.title ?? null,
          url: r.url ?? null,
          reason: r.reason ?? null,
          messageId: r.messageId ?? null
        }
        rows.push(row)
        return String(row.id)
      }),
    update: (feedId, itemId, change) =>
      Effect.sync(() => {
        const row = rows.find((d) => d.feedId === feedId && d.itemId === itemId)
        if (row !== undefined) Object.assign(row, Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)))
      }),
    removeFeed: (feedId) => Effect.sync(() => void (rows = rows.filter((d) => d.feedId !== feedId)))
  })

  const store = FeedInsightStore.of({
    logPage: (feedId, page, pageSize) =>
      Effect.sync(() => {
        const finished = rows.filter((d) => d.feedId === feedId && FINISHED.includes(d.state)).sort(newestFirst)
        const offset = (page - 1) * pageSize
        return { total: finished.length, rows: offset >= finished.length ? [] : finished.slice(offset, offset + pageSize).map(toLogged) }
      }),
    history: (feedId, itemIds) =>
      Effect.sync(() =>
        new Map(
          rows
            .filter((d) => d.feedId === feedId && itemIds.includes(d.itemId))
            .map((d): readonly [string, PastDelivery] => [d.itemId, { state: d.state, reason: d.reason }])
        )
      ),
    cooldown: (key, seconds) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const until = cooldowns.get(key)
        if (until === undefined || until <= now) {
          cooldowns.set(key, now + seconds * 1000)
          return { _tag: "Taken" } as const
        }
        return { _tag: "Busy", retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)) } as const
      })
  })

  return Layer.mergeAll(Layer.succeed(FeedInsightStore, store), Layer.succeed(FeedInsightMemoryLog, log))
}))
