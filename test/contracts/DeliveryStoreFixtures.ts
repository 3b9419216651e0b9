/** The data of the DeliveryStore contract: feeds (through FeedsRepo and Bots) and deliveries to record. */
import { Effect, Option, Redacted } from "effect"
import type { Layer } from "effect"
import { Bots } from "../../src/services/platform/Bots.ts"
import { Cipher } from "../../src/services/infra/Cipher.ts"
import { DeliveryStore } from "../../src/services/delivery/DeliveryStore.ts"
import type { NewDelivery } from "../../src/services/delivery/DeliveryStore.ts"
import { FeedsRepo } from "../../src/services/feeds/FeedsRepo.ts"

export type DeliveryStoreLayer<E> = Layer.Layer<DeliveryStore | FeedsRepo | Bots | Cipher, E>

export const BOT = "200000000000000002"
export const UNNAMED_BOT = "200000000000000077"
export const SERVER = "300000000000000001"
let counter = 0
/** A source identifier no other test uses. */
export const newIdentifier = () => `https://news.test/contract-${++counter}.xml`
/** A webhook id no other test uses. */
export const newWebhookId = () => `3400000000000${String(++counter).padStart(5, "0")}`
export const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)

/**
 * A stored rss feed (of the registered bot unless said) on `webhookId`, its token sealed for that
 * webhook (or a ciphertext that does not open); its id.
 */
export const addFeed = (o: {
  readonly identifier: string
  readonly webhookId: string
  readonly botId?: string
  readonly sealed?: boolean
  /** Its webhook's channel (default 310000000000000102) and options besides the default ones. */
  readonly channelId?: string
  readonly options?: Readonly<Record<string, unknown>>
  /** The tags of the forum the webhook posts in (absent: not a forum). */
  readonly forumTags?: ReadonlyArray<{ readonly id: string; readonly name: string }>
}) =>
  Effect.gen(function*() {
    yield* Bots.use((bots) => bots.upsert({ id: BOT, name: "FeedsBot", icon: "ab12", token: Redacted.make("bot-token") }))
    const tokenEnc = o.sealed === false
      ? "v1.k1.bm9uY2U.Y2lwaGVy"
      : yield* Cipher.use((c) => c.encrypt(Redacted.make(`token-of-${o.webhookId}`), `feed-webhook:${o.webhookId}`))
    const inserted = yield* FeedsRepo.use((repo) =>
      repo.insert({
        botId: o.botId ?? BOT,
        serverId: SERVER,
        module: "rss",
        feedIdentifier: o.identifier,
        webhookOptions: { filter_words: ["spam"], filter_excl: true, custom_header: "News ✓", ...o.options },
        displayInfo: null,
        webhook: { id: o.webhookId, tokenEnc, name: "Feed hook", avatar: null, channelId: o.channelId ?? "310000000000000102", forumTags: o.forumTags ?? null }
      }, 50)
    )
    if (inserted._tag !== "Inserted") return yield* Effect.die(new Error(`feed not inserted: ${inserted._tag}`))
    return inserted.feed.id
  })

/** A pending delivery of `itemId` for a feed on a webhook, with its rendered body. */
export const pending = (feedId: string, webhookId: string, itemId: string, eventAt: Date): NewDelivery => ({
  feedId,
  webhookId,
  itemId,
  title: `Title ${itemId}`,
  url: `https://news.test/${itemId}`,
  eventAt,
  state: "pending",
  reason: null,
  body: { content: `**${itemId}** ✓`, username: "News", allowed_mentions: { parse: [] } }
})

export const skipped = (feedId: string, webhookId: string, itemId: string, reason: string): NewDelivery => ({
  ...pending(feedId, webhookId, itemId, minutesAgo(5)),
  state: "skipped",
  reason,
  body: null
})

export const statusOf = (feedId: string) => Effect.map(DeliveryStore.use((s) => s.status(feedId)), Option.getOrThrow)

