/**
 * The rss connector: the feed at the stored URL, conditional and guarded (Fetch.ts, Guard.ts), read
 * leniently (FeedText.ts → FeedXml.ts → FeedRead.ts) into RssItems. Item id: guid (RSS 1.0:
 * `rdf:about`; Atom: `id`), else the link, else a hash of title and date. An item without a date
 * takes the feed's own date, else the time of the poll (it is new when first seen).
 */
import { Clock, Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import type { RssItem } from "../../../services/delivery/render/Item.ts"
import type { PollFailed, PollResult, PollState } from "../../../services/sources/SourcePoller.ts"
import { failed, type Fetched, type Fetcher, unlessUnchanged, validators } from "./Fetch.ts"
import type { Feed } from "./FeedRead.ts"
import { readFeedBytes } from "./FeedReader.ts"
import { publicAddressesOnly } from "./Guard.ts"

export interface RssPollOptions {
  /** Sandbox and tests only: read feeds on loopback and private addresses (production: false). */
  readonly allowPrivateAddresses?: boolean | undefined
  /** How host names are resolved, before each hop and at connect time (tests inject one). Default: the system's. */
  readonly resolve?: ((host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>) | undefined
}

const ACCEPT = "application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"

/** The feed's items, deduplicated by id (the first wins, as the feed lists it). */
export const feedItems = (feed: Feed, feedUrl: string, now: Date): ReadonlyArray<RssItem> => {
  const seen = new Set<string>()
  const items: Array<RssItem> = []
  for (const e of feed.entries) {
    if (seen.has(e.id)) continue
    seen.add(e.id)
    const at = e.publishedAt ?? feed.updatedAt ?? now
    items.push({
      module: "rss",
      id: e.id,
      url: e.url ?? feed.siteUrl ?? feedUrl,
      publishedAt: at,
      eventAt: at,
      title: e.title,
      author: e.author,
      contentHtml: e.contentHtml,
      mediaUrl: e.mediaUrl,
      categories: e.categories,
      feedTitle: feed.title,
      siteUrl: feed.siteUrl,
      feedUrl,
      feedImage: feed.image
    })
  }
  return items
}

export const makeRssPoller = (fetcher: Fetcher, options: RssPollOptions) => {
  const poll = (identifier: string, previous: PollState): Effect.Effect<PollResult, PollFailed> =>
    Effect.gen(function*() {
      const feedUrl = identifier.trim()
      if (!URL.canParse(feedUrl) || !/^https?:$/.test(new URL(feedUrl).protocol)) {
        return yield* Effect.fail(failed("unreadable", `"${identifier}" is not an http or https feed URL.`))
      }
      const name = `The feed at ${feedUrl}`
      const fetched = yield* fetcher.fetch({
        request: HttpClientRequest.get(feedUrl, { headers: { accept: ACCEPT } }),
        name,
        guard: options.allowPrivateAddresses === true ? undefined : publicAddressesOnly(name, options.resolve),
        previous
      })
      yield* statusProblem(fetched, name)
      return yield* unlessUnchanged(previous, fetched, (bodyHash) =>
        Effect.gen(function*() {
          const reading = readFeedBytes(fetched.body, fetched.headers["content-type"], fetched.url, name)
          if (reading._tag === "Unreadable") return yield* Effect.fail(failed("unreadable", reading.reason))
          const feed = reading.feed
          const now = new Date(yield* Clock.currentTimeMillis)
          return {
            _tag: "Items",
            items: feedItems(feed, feedUrl, now),
            state: { ...validators(fetched), bodyHash, cursor: null }
          } as const
        }))
    }).pipe(Effect.withSpan("SourcePoller.rss"))

  return { poll }
}

/** 2xx and 304 read on; 404/410 mean the feed is gone; other statuses are a failed poll. */
const statusProblem = (fetched: Fetched, name: string): Effect.Effect<void, PollFailed> => {
  const s = fetched.status
  if ((s >= 200 && s < 300) || s === 304) return Effect.void
  if (s === 404 || s === 410) return Effect.fail(failed("gone", `${name} no longer exists (${s}).`, { status: s }))
  if (s === 401 || s === 403) return Effect.fail(failed("http", `${name} refuses the gateway (${s}); it may need a login.`, { status: s }))
  return Effect.fail(failed("http", `${name} answered ${s}.`, { status: s }))
}
