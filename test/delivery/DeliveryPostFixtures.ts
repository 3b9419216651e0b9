/**
 * The world DeliveryPost's tests run in (DeliveryPost, DeliveryReconcile, DeliveryCrosspost): an
 * in-memory delivery log and a scripted platform, so every answer of the platform is one line; the
 * crosspost budget's answers are scripted too (the real rule is the store's: its contract suite).
 */
import { Effect, Option, Redacted } from "effect"
import type { AuditLog } from "../../src/services/audit/AuditLog.ts"
import { pageOfMessages } from "../../src/sandbox/interactions/MessagePages.ts"
import type { ChatPlatform, PlatformError, PlatformMessage, PlatformThread } from "../../src/services/platform/ChatPlatform.ts"
import { PlatformRejected } from "../../src/services/platform/ChatPlatform.ts"
import { makePoster } from "../../src/services/delivery/DeliveryPost.ts"
import type { CrosspostReservation, DeliveryStore, FeedRef, FeedState, OpenDelivery } from "../../src/services/delivery/DeliveryStore.ts"
import { ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import type { JobEngine } from "../../src/services/jobs/JobEngine.ts"

export const WEBHOOK = "900000000000000001"
export const CHANNEL = "310000000000000102"

interface Row {
  readonly id: string
  readonly feedId: string
  state: "pending" | "sending" | "sent" | "failed" | "elsewhere"
  reason: string | null
  messageId: string | null
  attempts: number
  body: OpenDelivery["body"]
  token: string | null
  /** Another worker claims it between nextPending and claim. */
  stolen?: boolean
  /** When its send started (the claim). */
  sentAt: Date
  /** Its feed asks for crossposts. */
  crosspost?: boolean
}

const feedRef = (id: string, state: FeedState): FeedRef => ({
  id,
  module: "rss",
  botId: "200000000000000002",
  serverId: "300000000000000001",
  feedIdentifier: `https://news.test/${id}.xml`,
  bot: { id: "200000000000000002", name: "FeedsBot" } as unknown as FeedRef["bot"],
  state,
  reason: null
})

type Answer = Effect.Effect<string | null, PlatformError>

export const world = (o: {
  readonly rows: ReadonlyArray<Partial<Row> & { readonly id: string }>
  readonly feedState?: FeedState
  readonly answers?: ReadonlyArray<Answer>
  readonly postAttempts?: number
  /** The webhook's channel, newest first; or the read's failure. */
  readonly channel?: ReadonlyArray<PlatformMessage> | PlatformError
  /** Other channels (threads, forum posts) by id, newest first; or the read's failure. Paged like the sandbox. */
  readonly channels?: Readonly<Record<string, ReadonlyArray<PlatformMessage> | PlatformError>>
  /** The server's active threads (GET /guilds/{id}/threads/active); or the read's failure. */
  readonly threads?: ReadonlyArray<PlatformThread> | PlatformError
  readonly botToken?: string | null
  /** What `reserveCrosspost` answers, in turn (default: granted in CHANNEL with the bot's token); a failure is the store's. */
  readonly reservations?: ReadonlyArray<CrosspostReservation | ServiceUnavailable>
  /** The bot's servers (GET /users/@me/guilds; default: the feed's, with every permission); or the read's failure. */
  readonly guilds?: ReadonlyArray<{ readonly id: string; readonly permissions: string }> | PlatformError
  /** What each `crosspostMessage` answers, in turn (default: published). */
  readonly crossposts?: ReadonlyArray<Effect.Effect<void, PlatformError>>
}) => {
  const feeds = new Map<string, FeedRef>([["1", feedRef("1", o.feedState ?? "active")]])
  const rows: Array<Row> = o.rows.map((r) => ({
    feedId: "1",
    state: "pending",
    reason: null,
    messageId: null,
    attempts: 0,
    body: { content: `message ${r.id}` } as OpenDelivery["body"],
    token: "hook-token",
    sentAt: new Date(Date.now() - 5_000),
    ...r
  }))
  const reads: Array<{ token: string; channelId: string; options: unknown }> = []
  const threadReads: Array<{ token: string; guildId: string }> = []
  const guildReads: Array<string> = []
  const sent: Array<{ webhookId: string; token: string; body: unknown; options: unknown }> = []
  const answers = [...(o.answers ?? [])]
  const stateCalls: Array<{ ids: ReadonlyArray<string>; from: ReadonlyArray<FeedState>; to: FeedState; reason: string | null }> = []
  const audits: Array<{ eventType: string; eventString: string }> = []
  const queued: Array<{ payload: unknown; options: unknown; queue: unknown }> = []
  const row = (id: string) => rows.find((r) => r.id === id)!
  const reservations = [...(o.reservations ?? [])]
  const crossposts = [...(o.crossposts ?? [])]
  const reserved: Array<{ deliveryId: string; slots: number }> = []
  const published: Array<{ token: string; channelId: string; messageId: string }> = []
  const missed: Array<{ deliveryId: string; reason: string }> = []
  const store = {
    transaction: (self: Effect.Effect<unknown, unknown, unknown>) => self,
    uncertainSends: (webhookId: string) =>
      Effect.sync(() =>
        rows.filter((r) => webhookId === WEBHOOK && r.state === "sending").map((r) => ({
          id: r.id,
          itemId: `item-${r.id}`,
          webhookId: WEBHOOK,
          body: r.body,
          attempts: r.attempts,
          feed: feeds.get(r.feedId)!,
          webhookToken: r.token === null ? null : Redacted.make(r.token),
          crosspost: r.crosspost ?? false,
          sentAt: r.sentAt,
          reason: r.reason,
          channelId: CHANNEL,
          botToken: o.botToken === null ? null : Redacted.make(o.botToken ?? "bot-token")
        }))
      ),
    markUncertain: (id: string, reason: string) => Effect.sync(() => void Object.assign(row(id), { reason })),
    reclaim: (id: string) =>
      Effect.sync(() => {
        const r = row(id)
        if (r.state !== "sending") return false
        r.attempts++
        return true
      }),
    recordedMessageIds: (webhookId: string, ids: ReadonlyArray<string>) =>
      Effect.sync(() => new Set(rows.filter((r) => webhookId === WEBHOOK && r.state === "sent" && ids.includes(r.messageId!)).map((r) => r.messageId!))),
    nextPending: (webhookId: string) =>
      Effect.sync(() => {
        const r = rows.find((r) => webhookId === WEBHOOK && r.state === "pending")
        return r === undefined ? Option.none() : Option.some<OpenDelivery>({
          id: r.id,
          itemId: `item-${r.id}`,
          webhookId: WEBHOOK,
          body: r.body,
          attempts: r.attempts,
          feed: feeds.get(r.feedId)!,
          webhookToken: r.token === null ? null : Redacted.make(r.token),
          crosspost: r.crosspost ?? false
        })
      }),
    claim: (id: string) =>
      Effect.sync(() => {
        const r = row(id)
        if (r.stolen === true) {
          r.state = "elsewhere"
          return false
        }
        if (r.state !== "pending") return false
        r.state = "sending"
        r.attempts++
        return true
      }),
    markSent: (id: string, messageId: string | null) => Effect.sync(() => void Object.assign(row(id), { state: "sent", messageId, reason: null })),
    markRetry: (id: string, reason: string) => Effect.sync(() => void Object.assign(row(id), { state: "pending", reason })),
    markFailed: (id: string, reason: string) => Effect.sync(() => void Object.assign(row(id), { state: "failed", reason })),
    failPending: (feedId: string, reason: string) =>
      Effect.sync(() => {
        const hit = rows.filter((r) => r.feedId === feedId && r.state === "pending")
        for (const r of hit) Object.assign(r, { state: "failed", reason })
        return hit.length
      }),
    reserveCrosspost: (deliveryId: string, slots: number) =>
      Effect.suspend(() => {
        reserved.push({ deliveryId, slots })
        const next = reservations.shift()
        if (next instanceof ServiceUnavailable) return Effect.fail(next)
        return Effect.succeed(next ?? { _tag: "Granted", channelId: CHANNEL, botToken: o.botToken === null ? null : Redacted.make(o.botToken ?? "bot-token") })
      }),
    notCrossposted: (deliveryId: string, reason: string) => Effect.sync(() => void missed.push({ deliveryId, reason })),
    setFeedState: (ids: ReadonlyArray<string>, from: ReadonlyArray<FeedState>, to: FeedState, reason: string | null) =>
      Effect.sync(() => {
        stateCalls.push({ ids, from, to, reason })
        const changes = []
        for (const id of ids) {
          const feed = feeds.get(id)
          if (feed === undefined || !from.includes(feed.state)) continue
          feeds.set(id, { ...feed, state: to, reason })
          changes.push({ feed, previous: feed.state })
        }
        return changes
      })
  } as unknown as DeliveryStore["Service"]
  let messages = 0
  const platform = {
    executeWebhook: (webhookId: string, token: Redacted.Redacted<string>, body: unknown, options: unknown) =>
      Effect.suspend(() => {
        sent.push({ webhookId, token: Redacted.value(token), body, options })
        return answers.shift() ?? Effect.succeed(`msg-${++messages}`)
      }),
    crosspostMessage: (token: Redacted.Redacted<string>, channelId: string, messageId: string) =>
      Effect.suspend(() => {
        published.push({ token: Redacted.value(token), channelId, messageId })
        return crossposts.shift() ?? Effect.void
      }),
    getChannelMessages: (
      token: Redacted.Redacted<string>,
      channelId: string,
      options: { readonly limit?: number; readonly after?: string; readonly before?: string } | undefined
    ) =>
      Effect.suspend(() => {
        reads.push({ token: Redacted.value(token), channelId, options })
        const other = o.channels?.[channelId]
        if (other !== undefined) {
          if (!Array.isArray(other)) return Effect.fail(other as PlatformError)
          return Effect.succeed(pageOfMessages(other as ReadonlyArray<PlatformMessage>, { limit: options?.limit ?? 50, after: options?.after, before: options?.before }))
        }
        const channel = o.channel ?? []
        return Array.isArray(channel) ? Effect.succeed(channel) : Effect.fail(channel as PlatformError)
      }),
    getBotGuilds: (token: Redacted.Redacted<string>) =>
      Effect.suspend(() => {
        guildReads.push(Redacted.value(token))
        const guilds = o.guilds ?? [{ id: "300000000000000001", permissions: String((1n << 41n) - 1n) }]
        return Array.isArray(guilds) ? Effect.succeed(guilds) : Effect.fail(guilds as PlatformError)
      }),
    getActiveThreads: (token: Redacted.Redacted<string>, guildId: string) =>
      Effect.suspend(() => {
        threadReads.push({ token: Redacted.value(token), guildId })
        const threads = o.threads ?? []
        return Array.isArray(threads) ? Effect.succeed(threads) : Effect.fail(threads as PlatformError)
      })
  } as unknown as ChatPlatform["Service"]
  const audit = {
    append: (entry: { eventType: string; eventString: string }) => Effect.sync(() => void audits.push(entry))
  } as unknown as AuditLog["Service"]
  const engine = {
    send: (queue: unknown, payload: unknown, options: unknown) =>
      Effect.sync(() => {
        queued.push({ queue, payload, options })
        return Option.some("job-1")
      })
  } as unknown as JobEngine["Service"]
  const settings = { postAttempts: o.postAttempts ?? 8 } as never
  const poster = makePoster({ store, platform, audit, engine, settings })
  const table = () => rows.map((r) => [r.id, r.state, r.reason, r.messageId] as const)
  return { poster, rows, table, sent, reads, threadReads, guildReads, stateCalls, audits, queued, reserved, published, missed, feedState: () => feeds.get("1")!.state }
}

export const rejected = (status: number, message: string, code?: number) =>
  Effect.fail(new PlatformRejected(code === undefined ? { status, message } : { status, message, code }))

