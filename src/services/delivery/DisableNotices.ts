/**
 * Disable notices (delivery.md §8): when a feed is disabled, its creator gets a direct message from
 * a bot naming the server, the feed, the reason and how to fix it; at most one such message per
 * user per hour, whatever the bots of the feeds, the rest grouped into the next. A notice is recorded by the
 * disabling transaction itself (migration 0007's trigger); `sweep` (run by the workers every poll
 * interval, at most a minute) sends what is due through the chat platform's client (its rate
 * limits and invalid-request budget apply). A user is claimed before the message leaves, so two
 * workers never both send; a message the platform did not take for a passing reason is released
 * for the next sweep; one it refuses for good (the user takes no DMs from the bot) is not retried.
 * The creator is the user of the feed's create entry in the audit log: a feed whose entry is gone
 * (audit retention) gets no notice.
 *
 * Which bot sends a message that groups feeds of several bots: the bot of the oldest notice (the
 * first feed disabled). It is in that feed's server, so it can reach the creator there, and it is
 * the notice that has waited longest; a stable choice, so a user hears from the same bot for the
 * same feeds. When that bot cannot send (its token is gone, or the user takes no DMs from it), the
 * bot of the next notice tries, in the same sweep. Each server is named through its own feed's bot.
 */
import { Context, Effect, Layer } from "effect"
import type { Option, Redacted } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { ChatPlatform } from "../platform/ChatPlatform.ts"
import { truncate } from "./render/Text.ts"

export interface OpenNotice {
  readonly id: string
  readonly reason: string | null
  readonly feedId: string
  /** null: the feed was deleted since. */
  readonly feed: { readonly module: FeedModuleName; readonly botId: string; readonly serverId: string; readonly identifier: string } | null
  /** The user who created the feed; null when nobody is known. */
  readonly creatorId: string | null
}

export class DisableNoticeStore extends Context.Service<DisableNoticeStore, {
  /** Notices not sent yet, oldest first. */
  readonly open: (limit: number) => Effect.Effect<ReadonlyArray<OpenNotice>, ServiceUnavailable>
  /** Marks notices done without a message (no feed or no creator any more). */
  readonly drop: (ids: ReadonlyArray<string>) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Claims the user for a message now, unless one was sent within the hour (by any bot), and marks
   * `ids` sent; the ids claimed, or null when the user's hour is not over.
   */
  readonly claim: (userId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string> | null, ServiceUnavailable>
  /** Undoes a claim whose message was not sent. */
  readonly release: (userId: string, ids: ReadonlyArray<string>) => Effect.Effect<void, ServiceUnavailable>
  readonly botToken: (botId: string) => Effect.Effect<Option.Option<Redacted.Redacted<string>>, ServiceUnavailable>
}>()("gateway/DisableNoticeStore") {}

export interface SweepOutcome {
  readonly sent: number
  /** Notices that wait for their user's hour to end (or for the platform to take them). */
  readonly waiting: number
  /** Notices given up: no feed or creator any more, no bot token, or refused by the platform for good. */
  readonly dropped: number
}

const FIX = "Each reason says what to do. Once it is fixed, edit the feed to re-enable it (or delete it and create it again)."

/** The message: the server, each feed and its reason, how to fix; at most 2,000 characters. */
export const noticeContent = (serverName: (serverId: string) => string, notices: ReadonlyArray<OpenNotice>): string => {
  const line = (n: OpenNotice) =>
    `• ${n.feed!.module} feed ${n.feedId} ("${n.feed!.identifier}") on the server "${serverName(n.feed!.serverId)}": ${n.reason ?? "no reason given"}`
  const head = notices.length === 1 ? "Your feed was disabled, so it posts nothing until it is fixed:" : `${notices.length} of your feeds were disabled, so they post nothing until they are fixed:`
  return truncate([head, ...notices.map(line), FIX].join("\n"), 2000)
}

export class DisableNotices extends Context.Service<DisableNotices, {
  readonly sweep: Effect.Effect<SweepOutcome, ServiceUnavailable>
}>()("gateway/DisableNotices") {
  /** Needs DisableNoticeStore and ChatPlatform. */
  static readonly layer = Layer.effect(DisableNotices, Effect.gen(function*() {
    const store = yield* DisableNoticeStore
    const platform = yield* ChatPlatform

    /** The bots of the user's notices, oldest notice first, each with its token (None: unknown or undecryptable). */
    const tokensOf = (notices: ReadonlyArray<OpenNotice>) =>
      Effect.forEach([...new Set(notices.map((n) => n.feed!.botId))], (botId) =>
        Effect.map(store.botToken(botId), (token) => ({ botId, token })))

    const send = (userId: string, notices: ReadonlyArray<OpenNotice>) =>
      Effect.gen(function*() {
        const bots = (yield* tokensOf(notices)).flatMap((b) => (b.token._tag === "Some" ? [{ botId: b.botId, token: b.token.value }] : []))
        if (bots.length === 0) {
          yield* store.drop(notices.map((n) => n.id))
          yield* Effect.logWarning("disable notice not sent: no bot of the feeds has a known token").pipe(Effect.annotateLogs({ user: userId }))
          return "dropped" as const
        }
        const claimed = yield* store.claim(userId, notices.map((n) => n.id))
        if (claimed === null || claimed.length === 0) return "waiting" as const
        const mine = notices.filter((n) => claimed.includes(n.id))
        const tokenOf = new Map(bots.map((b) => [b.botId, b.token]))
        const names = new Map<string, string>()
        for (const n of mine) {
          const serverId = n.feed!.serverId
          const token = tokenOf.get(n.feed!.botId) ?? bots[0]!.token
          if (names.has(serverId)) continue
          const guild = yield* Effect.option(platform.getGuild(token, serverId))
          names.set(serverId, guild._tag === "Some" ? guild.value.name : serverId)
        }
        const content = noticeContent((id) => names.get(id) ?? id, mine)
        for (const bot of bots) {
          const result = yield* Effect.result(platform.sendDirectMessage(bot.token, userId, { content, allowed_mentions: { parse: [] } }))
          if (result._tag === "Success") return "sent" as const
          const e = result.failure
          if (e._tag === "PlatformRejected" && e.status !== 429) {
            yield* Effect.logWarning("disable notice refused by the chat platform; the next bot tries, else not retried").pipe(
              Effect.annotateLogs({ bot: bot.botId, user: userId, status: e.status, message: e.message })
            )
            continue
          }
          yield* store.release(userId, claimed)
          yield* Effect.logWarning("disable notice not sent now; the next sweep retries it").pipe(Effect.annotateLogs({ bot: bot.botId, user: userId }))
          return "waiting" as const
        }
        return "dropped" as const
      })

    const sweep = Effect.gen(function*() {
      const open = yield* store.open(500)
      const orphans = open.filter((n) => n.feed === null || n.creatorId === null)
      if (orphans.length > 0) yield* store.drop(orphans.map((n) => n.id))
      // Per user, whatever the bot; `open` is oldest first, so each group is too.
      const groups = new Map<string, Array<OpenNotice>>()
      for (const n of open) {
        if (n.feed === null || n.creatorId === null) continue
        groups.set(n.creatorId, [...(groups.get(n.creatorId) ?? []), n])
      }
      let sent = 0
      let waiting = 0
      let dropped = orphans.length
      for (const [userId, notices] of groups) {
        const outcome = yield* send(userId, notices)
        if (outcome === "sent") sent++
        else if (outcome === "waiting") waiting += notices.length
        else dropped += notices.length
      }
      return { sent, waiting, dropped }
    }).pipe(Effect.withSpan("DisableNotices.sweep"))

    return DisableNotices.of({ sweep })
  }))
}
