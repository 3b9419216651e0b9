/**
 * An uncertain send reconciled (issue #30 item 5; delivery.md §4: never twice where the platform
 * answered, never dropped silently). A delivery left `sending` — its send was cut or timed out
 * before the platform answered, or its worker stopped mid-send — may or may not be in its channel.
 * Before anything else of its webhook is sent, the worker reads where it was sent with the feed's bot
 * and looks for it there: the thread of `thread_id` (a message sent into a thread is in the thread's
 * own history, not its channel's), else the webhook's channel (GET /channels/{id}/messages, newest
 * first, 50 a page). A forum post (`thread_name`) is a new thread whose id (its first message's) is
 * known only from the answer that never came: the server's active threads are read (GET
 * /guilds/{id}/threads/active) and the forum's posts named so are checked newest first, at most
 * MAX_PAGES, each by its first message (GET /channels/{post}/messages?after=<post id − 1>&limit=1);
 * a post archived before the look is not among them (it is then sent once more). Then:
 * - found: recorded `sent` with that message's id, not posted again; for a `crosspost: true` feed,
 *   published then (DeliveryCrosspost.ts): the send had no answer, so nothing published it before;
 * - not there: sent once more (one more attempt; after `postAttempts` the delivery fails with why);
 * - cannot tell (the bot may not read the channel or thread, no bot token, more than 250 messages
 *   since the send, more than MAX_PAGES posts of that name to look at, or a bot without
 *   READ_MESSAGE_HISTORY in the server, to whom the platform answers an empty history rather than a
 *   refusal): `failed`, "unknown whether it was posted" with the reason, never sent twice blindly;
 * - the read fails for now (503, timeout, 429 past the budget): the job is retried, the row waits.
 *
 * How a message is recognised, since Discord's execute-webhook takes no nonce: posted by THIS
 * webhook (`webhook_id`, which only a holder of its token can post as), with exactly the content the
 * delivery holds (compared without surrounding whitespace, which Discord trims), dated no earlier
 * than the send's start minus SKEW_MS, and whose id no sent delivery of the webhook recorded
 * already. The content carries the item's URL, so two different items never match; the same item
 * sent by two feeds on one webhook is told apart by the recorded ids (each message claimed once).
 */
import { Clock, Effect } from "effect"
import type { ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { ChatPlatform, PlatformError, PlatformMessage } from "../platform/ChatPlatform.ts"
import type { CrosspostOutcome, Posted } from "./DeliveryCrosspost.ts"
import type { DeliverySettingsShape } from "./DeliverySettings.ts"
import type { DeliveryBody, DeliveryStore, UncertainDelivery } from "./DeliveryStore.ts"

/** How much earlier than the send's start (the database's clock) the platform may date the message. */
export const SKEW_MS = 60_000
export const PAGE_SIZE = 50
export const MAX_PAGES = 5

export const UNKNOWN = "unknown whether it was posted"

type Step = "sent" | "failed" | "skipped" | { readonly retry: string }

export type Search =
  | { readonly _tag: "Found"; readonly messageId: string }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Unknown"; readonly reason: string }
  | { readonly _tag: "ReadFailed"; readonly error: PlatformError; readonly where: string }

/** ADMINISTRATOR and READ_MESSAGE_HISTORY: without either, the platform answers a history read with no messages. */
const ADMINISTRATOR = 1n << 3n
const READ_MESSAGE_HISTORY = 1n << 16n

/** Whether `m` is the message of `d` (see the module's comment), its id not yet checked against the recorded ones. */
const SNOWFLAKE = /^\d{1,20}$/
/** Snowflakes by value (newer is larger), whatever their length. */
// Stryker disable next-line EqualityOperator: `<=`/`>=` differ only for two equal ids (the same post, either order); `>` → `<=` makes "larger" read as "equal", which V8's sort cannot tell (it reads only whether the answer is < 0)
const compareIds = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0)

export const looksLike = (d: Pick<UncertainDelivery, "webhookId" | "body" | "sentAt">, m: PlatformMessage): boolean =>
  m.webhook_id === d.webhookId &&
  d.body?.content !== undefined &&
  m.content.trim() === d.body.content.trim() &&
  Date.parse(m.timestamp) >= d.sentAt.getTime() - SKEW_MS

export const makeReconciler = (deps: {
  readonly store: DeliveryStore["Service"]
  readonly platform: ChatPlatform["Service"]
  readonly settings: DeliverySettingsShape
  /** Sends a claimed delivery and records what the platform answered (DeliveryPost.ts). */
  readonly send: (d: UncertainDelivery) => Effect.Effect<Step, ServiceUnavailable>
  /** Publishes a found message of a `crosspost: true` feed (DeliveryCrosspost.ts). */
  readonly crosspost: (d: UncertainDelivery, posted: Posted) => Effect.Effect<CrosspostOutcome>
}) => {
  const { crosspost, platform, send, settings, store } = deps

  /** Pages back from the newest message of `channelId` until the send's start: is the delivery's message there? */
  const search = (
    d: UncertainDelivery,
    botToken: NonNullable<UncertainDelivery["botToken"]>,
    channelId: string,
    where: string
  ): Effect.Effect<Search, ServiceUnavailable> =>
    Effect.gen(function*() {
      const windowStart = d.sentAt.getTime() - SKEW_MS
      let before: string | undefined = undefined
      for (let page = 0; page < MAX_PAGES; page++) {
        const read = yield* Effect.result(platform.getChannelMessages(botToken, channelId, {
          limit: PAGE_SIZE,
          ...(before === undefined ? {} : { before })
        }))
        if (read._tag === "Failure") return { _tag: "ReadFailed", error: read.failure, where } as const
        const list: ReadonlyArray<PlatformMessage> = read.success
        const candidates = list.filter((m) => looksLike(d, m))
        if (candidates.length > 0) {
          const taken = yield* store.recordedMessageIds(d.webhookId, candidates.map((m) => m.id))
          // Newest first: the last free one is the earliest after the send's start.
          const free = candidates.filter((m) => !taken.has(m.id))
          if (free.length > 0) return { _tag: "Found", messageId: free[free.length - 1]!.id } as const
        }
        const last = list[list.length - 1]
        if (last === undefined || list.length < PAGE_SIZE || Date.parse(last.timestamp) < windowStart) {
          return { _tag: "Absent" } as const
        }
        before = last.id
      }
      return {
        _tag: "Unknown",
        reason: `more than ${PAGE_SIZE * MAX_PAGES} messages in its channel since the send, too many to look through`
      } as const
    })

  /** A forum post named `name`: among the forum's active posts of that name, one whose first message is the delivery's. */
  const searchForum = (
    d: UncertainDelivery,
    botToken: NonNullable<UncertainDelivery["botToken"]>,
    name: string
  ): Effect.Effect<Search, ServiceUnavailable> =>
    Effect.gen(function*() {
      const where = `the active posts of the webhook's forum ${d.channelId}`
      const read = yield* Effect.result(platform.getActiveThreads(botToken, d.feed.serverId))
      if (read._tag === "Failure") return { _tag: "ReadFailed", error: read.failure, where } as const
      const named = read.success
        .filter((t) => t.parent_id === d.channelId && t.name.trim() === name.trim() && SNOWFLAKE.test(t.id))
        .toSorted((a, b) => compareIds(b.id, a.id))
      const taken = yield* store.recordedMessageIds(d.webhookId, named.map((t) => t.id))
      const free = named.filter((t) => !taken.has(t.id))
      for (const post of free.slice(0, MAX_PAGES)) {
        // The post's first message has the post's own id: the one message just after id − 1.
        const first = yield* Effect.result(platform.getChannelMessages(botToken, post.id, { limit: 1, after: String(BigInt(post.id) - 1n) }))
        if (first._tag === "Failure") return { _tag: "ReadFailed", error: first.failure, where: `the forum post ${post.id}` } as const
        if (first.success.some((m) => m.id === post.id && looksLike(d, m))) return { _tag: "Found", messageId: post.id } as const
      }
      if (free.length > MAX_PAGES) {
        return { _tag: "Unknown", reason: `more than ${MAX_PAGES} posts named "${name}" in its forum, too many to look through` } as const
      }
      return { _tag: "Absent" } as const
    })

  /** Where the delivery was sent, looked through (see the module's comment). */
  const look = (d: UncertainDelivery & { readonly body: DeliveryBody }, botToken: NonNullable<UncertainDelivery["botToken"]>) =>
    d.body.thread_id !== undefined
      ? search(d, botToken, d.body.thread_id, `the thread ${d.body.thread_id}`)
      : d.body.thread_name !== undefined
      ? searchForum(d, botToken, d.body.thread_name)
      : search(d, botToken, d.channelId, `the webhook's channel ${d.channelId}`)

  /**
   * Whether an absent message can be trusted: the bot holds READ_MESSAGE_HISTORY (or ADMINISTRATOR)
   * in the feed's server, by its server list read now (GET /users/@me/guilds, not the 30 s copy the
   * directory keeps: the server-wide bits; a channel's own overwrites are not read). Asked only when
   * the message was not found.
   */
  const historyReadable = (d: UncertainDelivery, botToken: NonNullable<UncertainDelivery["botToken"]>) =>
    Effect.map(Effect.result(platform.getBotGuilds(botToken, { fresh: true })), (r): Search | undefined => {
      if (r._tag === "Failure") return { _tag: "ReadFailed", error: r.failure, where: "the bot's servers" }
      const server = r.success.find((g) => g.id === d.feed.serverId)
      const bits = server === undefined ? 0n : BigInt(server.permissions)
      return (bits & (ADMINISTRATOR | READ_MESSAGE_HISTORY)) !== 0n ? undefined : {
        _tag: "Unknown",
        reason: `the bot lacks READ_MESSAGE_HISTORY in server ${d.feed.serverId}, so its history reads empty; give it that permission`
      }
    })

  const fail = (d: UncertainDelivery, why: string) =>
    Effect.as(store.markFailed(d.id, `${UNKNOWN}: ${why}`), "failed" as const)

  const readFailed = (d: UncertainDelivery, e: PlatformError, where: string): Effect.Effect<Step, ServiceUnavailable> =>
    e._tag === "PlatformRejected" && e.status !== 429 && e.status !== 408
      ? fail(d, `the send had no answer and the bot cannot read ${where} (${e.status} ${e.message})`)
      : Effect.succeed({ retry: `${where} could not be read to find an unanswered send: ${e._tag === "PlatformRejected" ? `the chat platform answered ${e.status}` : e.problems[0]?.message ?? e._tag}` })

  /** One uncertain delivery: found and recorded, sent once more, failed with why, or left for the job's retry. */
  const reconcile = (d: UncertainDelivery): Effect.Effect<Step, ServiceUnavailable> =>
    Effect.gen(function*() {
      if (d.body === null) return yield* fail(d, "the stored message is unreadable")
      if (d.botToken === null) return yield* fail(d, "the send had no answer and the bot's token cannot be decrypted to read its channel")
      const looked = yield* look({ ...d, body: d.body }, d.botToken)
      const found = looked._tag === "Absent" ? (yield* historyReadable(d, d.botToken)) ?? looked : looked
      if (found._tag === "ReadFailed") return yield* readFailed(d, found.error, found.where)
      if (found._tag === "Found") {
        yield* store.markSent(d.id, found.messageId, new Date(yield* Clock.currentTimeMillis))
        yield* Effect.logInfo("an unanswered send was found in its channel: recorded as sent").pipe(
          Effect.annotateLogs({ delivery: d.id, message: found.messageId })
        )
        // Found in a thread or a forum post: nothing there can be published (counted with that reason).
        yield* crosspost(d, { messageIds: [found.messageId], inThread: d.body.thread_id !== undefined || d.body.thread_name !== undefined })
        return "sent" as const
      }
      if (found._tag === "Unknown") return yield* fail(d, found.reason)
      if (d.attempts >= settings.postAttempts) {
        return yield* Effect.as(
          store.markFailed(d.id, `not posted after ${d.attempts} attempts: ${d.reason ?? "the worker stopped during the send"}`),
          "failed" as const
        )
      }
      if (!(yield* store.reclaim(d.id))) return "skipped" as const
      yield* Effect.logInfo("an unanswered send is not in its channel: sent again").pipe(Effect.annotateLogs({ delivery: d.id }))
      return yield* send({ ...d, attempts: d.attempts + 1 })
    }).pipe(
      Effect.uninterruptible,
      // Stryker disable next-line StringLiteral,ObjectLiteral: the tracing span's name and attributes only
      Effect.withSpan("Delivery.reconcile", { attributes: { delivery: d.id } })
    )

  return { reconcile }
}
