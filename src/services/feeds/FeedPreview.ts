/**
 * The preview of a feed (delivery.md §8), as a pure function over what the source serves now: the
 * worker's own selection (`selectForFeed`: age, creation time, filters, the per-poll cap, every
 * reason) and renderer (`render`), given what the worker would know (the ids seen at the source,
 * the feed's delivery records), then the newest items first. What the worker does that the
 * selection does not see is said too: a source never polled yet posts nothing (its baseline), a
 * disabled feed is not polled at all, and an item seen before with no record for this feed was
 * there before the feed could post it (not "already posted").
 */
import type { FeedPreview, PreviewItem } from "../../domain/insight/FeedInsight.ts"
import { itemTitle } from "../delivery/render/Item.ts"
import type { Item } from "../delivery/render/Item.ts"
import { renderMessages } from "../delivery/render/Render.ts"
import type { WebhookMessage } from "../delivery/render/Render.ts"
import type { PastDelivery, SelectFeed, SelectLimits } from "../delivery/render/Select.ts"
import { selectForFeed } from "../delivery/render/Select.ts"
import type { FeedState } from "../delivery/DeliveryStore.ts"

export const PREVIEW_MAX = 10
export const BASELINE_REASON = "the feed's source was never polled: its first poll stores what it serves and posts nothing"
/** A seen item the feed has no record of: it was there before the feed could post it. */
export const SEEN_BEFORE = "seen at the source before: at its first poll (which posts nothing) or before this feed existed"
export const disabledReason = (reason: string | null) => `the feed is disabled${reason === null ? "" : `: ${reason}`}`

export interface PreviewInput {
  /** Everything the source serves now (any order). */
  readonly items: ReadonlyArray<Item>
  /** The ids of `items` the source served before. */
  readonly seen: ReadonlySet<string>
  /** The feed's delivery records of those items. */
  readonly history: ReadonlyMap<string, PastDelivery>
  /** Whether the source had its first poll (else the next poll is the baseline). */
  readonly baselined: boolean
  readonly feed: SelectFeed & { readonly state: FeedState; readonly reason: string | null }
  readonly limits: SelectLimits
}

export const previewMessage = (m: WebhookMessage, continued: ReadonlyArray<WebhookMessage> = []): PreviewItem["message"] => ({
  content: m.content,
  username: m.username ?? null,
  avatar_url: m.avatar_url ?? null,
  allowed_mentions: m.allowed_mentions,
  ...(m.embeds === undefined ? {} : { embeds: m.embeds }),
  ...(m.thread_name === undefined ? {} : { thread_name: m.thread_name }),
  ...(m.applied_tags === undefined ? {} : { applied_tags: m.applied_tags }),
  ...(continued.length === 0 ? {} : { continued: continued.map((c) => c.content) })
})

/** Every message of the item, as the worker would send them. */
const previewOf = (item: Item, feed: Pick<SelectFeed, "options" | "defaults">) => {
  const [first, ...rest] = renderMessages(item, feed.options, feed.defaults)
  return previewMessage(first!, rest)
}

export const buildPreview = (input: PreviewInput): FeedPreview => {
  const { feed } = input
  const decisions = selectForFeed(input.items, input.seen, feed, input.limits, { renderSkipped: true, history: input.history })
  const newest = decisions.slice(-PREVIEW_MAX).toReversed()
  return {
    items: newest.map((d): PreviewItem => {
      let verdict = d.verdict
      let reasons = !d.isNew && !input.history.has(d.item.id) ? [SEEN_BEFORE] : d.reasons
      if (!input.baselined) {
        verdict = "skip"
        reasons = [BASELINE_REASON]
      } else if (feed.state === "disabled") {
        verdict = "skip"
        reasons = [disabledReason(feed.reason), ...(d.verdict === "skip" ? reasons : [])]
      }
      return {
        id: d.item.id,
        title: itemTitle(d.item),
        url: d.item.url,
        published_at: d.item.publishedAt.toISOString(),
        verdict,
        reasons: [...reasons],
        message: previewOf(d.item, feed)
      }
    })
  }
}
