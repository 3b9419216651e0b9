/**
 * An in-memory DisableNoticeStore, held to the SQL one's contract (test/contracts/DisableNotices.contract.ts).
 * As the SQL layer joins `feeds`, `audit_entries` and `bots`, this one reads the memory FeedsRepo's
 * table (`FeedsMemoryTable`), the memory audit log's entries (`AuditLogMemoryStore`) and Bots. The
 * notices themselves are written by the disabling transaction's trigger in SQL; here by
 * `DisableNoticesMemoryTable.disabled`, which a test (or a memory delivery engine) calls when it
 * disables a feed. A user's hour is read from the Effect Clock; a claim that finds nothing left to
 * claim does not take the user's hour.
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import { Bots } from "../../src/services/platform/Bots.ts"
import { DisableNoticeStore } from "../../src/services/delivery/DisableNotices.ts"
import type { OpenNotice } from "../../src/services/delivery/DisableNotices.ts"
import { AuditLogMemoryStore } from "./AuditLogMemory.ts"
import { FeedsMemoryTable } from "./FeedsRepoMemory.ts"

const HOUR_MS = 3_600_000

/** The notices and the users' last messages (`feed_disable_notices`, `feed_notice_users`). */
export class DisableNoticesMemoryTable extends Context.Service<DisableNoticesMemoryTable, {
  /** The feed became disabled with `reason`: a notice waits (what the SQL trigger writes). */
  readonly disabled: (feedId: string, reason: string | null) => Effect.Effect<void>
  /** Moves the user's last message `ms` earlier (as if that time had passed). */
  readonly backdate: (userId: string, ms: number) => Effect.Effect<void>
}>()("test/DisableNoticesMemoryTable") {}

interface Notice {
  readonly id: number
  readonly feedId: string
  readonly reason: string | null
  sentAt: number | null
}

export const DisableNoticesMemory: Layer.Layer<
  DisableNoticeStore | DisableNoticesMemoryTable,
  never,
  FeedsMemoryTable | AuditLogMemoryStore | Bots
> = Layer.unwrap(Effect.gen(function*() {
  const feeds = yield* FeedsMemoryTable
  const audit = yield* AuditLogMemoryStore
  const bots = yield* Bots
  let nextId = 1
  const notices: Array<Notice> = []
  /** user → last message (epoch ms; null: released) */
  const users = new Map<string, number | null>()

  const creatorOf = (feed: { readonly id: string; readonly module: string; readonly botId: string; readonly serverId: string }) =>
    Effect.map(Ref.get(audit.entries), (entries) =>
      entries
        .filter((e) =>
          e.module === feed.module && e.serverId === feed.serverId && e.botId === feed.botId &&
          e.itemIdentifier === Number(feed.id) && e.eventType === "PUSH"
        )
        // The create entry first, else the earliest (by time, then id).
        .sort((a, b) =>
          Number(b.eventString.startsWith("Created ")) - Number(a.eventString.startsWith("Created ")) ||
          a.at.getTime() - b.at.getTime() || a.id - b.id
        )[0]?.userId ?? null)

  const store = DisableNoticeStore.of({
    open: (limit) =>
      Effect.gen(function*() {
        const all = yield* feeds.all
        const waiting = notices.filter((n) => n.sentAt === null).sort((a, b) => a.id - b.id).slice(0, Math.max(0, limit))
        return yield* Effect.forEach(waiting, (n) =>
          Effect.gen(function*() {
            const feed = all.find((f) => f.id === n.feedId)
            return {
              id: String(n.id),
              feedId: n.feedId,
              reason: n.reason,
              feed: feed === undefined ? null : { module: feed.module, botId: feed.botId, serverId: feed.serverId, identifier: feed.feedIdentifier },
              creatorId: feed === undefined ? null : yield* creatorOf(feed)
            } satisfies OpenNotice
          }))
      }),
    drop: (ids) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        for (const n of notices) if (ids.includes(String(n.id)) && n.sentAt === null) n.sentAt = now
      }),
    claim: (userId, ids) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const last = users.get(userId)
        if (last !== undefined && last !== null && last > now - HOUR_MS) return null
        const claimed = notices.filter((n) => ids.includes(String(n.id)) && n.sentAt === null)
        // Nothing left to claim (another sweep took them): the user's hour is not taken either.
        if (claimed.length === 0) return []
        users.set(userId, now)
        for (const n of claimed) n.sentAt = now
        return claimed.map((n) => String(n.id))
      }),
    release: (userId, ids) =>
      Effect.sync(() => {
        if (users.has(userId)) users.set(userId, null)
        for (const n of notices) if (ids.includes(String(n.id))) n.sentAt = null
      }),
    botToken: (botId) => Effect.map(bots.get(botId), (bot) => Option.fromUndefinedOr(bot?.token))
  })

  const table = DisableNoticesMemoryTable.of({
    disabled: (feedId, reason) => Effect.sync(() => void notices.push({ id: nextId++, feedId, reason, sentAt: null })),
    backdate: (userId, ms) =>
      Effect.sync(() => {
        const last = users.get(userId)
        if (last !== undefined && last !== null) users.set(userId, last - ms)
      })
  })

  return Layer.mergeAll(Layer.succeed(DisableNoticeStore, store), Layer.succeed(DisableNoticesMemoryTable, table))
}))
