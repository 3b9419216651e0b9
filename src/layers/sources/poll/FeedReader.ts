/**
 * The one reader of delivery.md §1 "Reading" and §10 "One reader": a feed's bytes decoded (charset
 * of the header, else the declaration, else sniffed: FeedText.ts) and read leniently (FeedRead.ts),
 * or the reason it cannot be. The poller and the feed-creation check both call this, so a feed the
 * worker reads is never refused at creation, and one it cannot read is refused in the same words.
 */
import type { Feed } from "./FeedRead.ts"
import { readFeed } from "./FeedRead.ts"
import { decodeFeed } from "./FeedText.ts"

export type FeedReading =
  | { readonly _tag: "Read"; readonly feed: Feed }
  | { readonly _tag: "Unreadable"; readonly reason: string }

/** `name`: how the reason names the feed ("The feed at https://…"). `url`: the URL after redirects (links resolve against it). */
export const readFeedBytes = (bytes: Uint8Array, contentType: string | undefined, url: string, name: string): FeedReading => {
  const feed = readFeed(decodeFeed(bytes, contentType), url)
  if (feed !== undefined) return { _tag: "Read", feed }
  const html = /html/i.test(contentType ?? "")
  return { _tag: "Unreadable", reason: `${name} is ${html ? "a web page" : "something"}, not an RSS or Atom feed.` }
}
