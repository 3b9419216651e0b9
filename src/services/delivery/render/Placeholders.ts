/**
 * Each module's message vocabulary (delivery.md §3): its placeholders, default header, and default
 * name and avatar. Where the contract gives no fallback for a missing value, the rule of its rss
 * row applies by kind: a name → `Unknown` (or the account's other name), a text → `None`, a list →
 * `None`, a URL → empty.
 *
 * | module | placeholder | value (fallback) |
 * |---|---|---|
 * | rss | feed_name | feed title (site URL, else feed URL) |
 * | | author, title | (Unknown) |
 * | | content / content_clean | HTML → Markdown / tags stripped (None) |
 * | | media_url | enclosure (empty) |
 * | | categories | `a, b` (None) |
 * | forum | subreddit, subreddit_fullname, author, title, content_url | as the item has them |
 * | | flair | (None) |
 * | streaming | display_name (username), username, game (Unknown), status (None), stream_status | `Live` / `Offline` |
 * | microblog | screen_name, name (screen name) | |
 * | | media_url | one URL per line; a line holding only `%media_url%` is removed when there is none |
 * | video | title, channel, video_status (`added`/`updated`) | |
 * | | duration | `M:SS` or `H:MM:SS` (Unknown) |
 * | | description / short_description | cut to 1,024 / 256 code points, ending in `…` (None) |
 * | | tags | `a, b` (None) |
 * | | thumbnail | (empty) |
 * | photo | username, profile_url | |
 * | | fullname (username), caption (None), media_url (empty), hashtags `#a #b` (None) | |
 */
import type { FeedModuleName } from "../../../domain/platform/Platform.ts"
import { htmlToMarkdown, stripHtml } from "./Html.ts"
import type { Item, ItemOf } from "./Item.ts"
import { truncate } from "./Text.ts"

export type Values = Readonly<Record<string, () => string>>

interface Format<I> {
  readonly header: (item: I) => string
  readonly name: (item: I) => string | null
  readonly avatar: (item: I) => string | null
  readonly values: (item: I) => Values
  /** Rewrites the header before substitution (microblog: lines of absent media). */
  readonly prepare?: (header: string, item: I) => string
}

const NONE = "None"
const UNKNOWN = "Unknown"
export const DESCRIPTION_MAX = 1024
export const SHORT_DESCRIPTION_MAX = 256

/** The value when it holds something other than white space, else null. */
const present = (s: string | null): string | null => (s !== null && s.trim() !== "" ? s : null)
const list = (items: ReadonlyArray<string>, sep = ", ", each = (s: string) => s) => {
  const kept = items.map((s) => s.trim()).filter((s) => s !== "")
  return kept.length === 0 ? NONE : kept.map(each).join(sep)
}

/** Seconds as `M:SS`, or `H:MM:SS` from one hour. */
export const formatDuration = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds))
  const two = (n: number) => String(n).padStart(2, "0")
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`
}

const MEDIA_LINE = /^[^\S\n]*(?:%media_url%[^\S\n]*)+$/

export const FORMATS: { readonly [M in FeedModuleName]: Format<ItemOf<M>> } = {
  rss: {
    header: () => "New item found in %feed_name%!",
    name: (i) => present(i.feedTitle),
    avatar: (i) => i.feedImage,
    values: (i) => ({
      feed_name: () => present(i.feedTitle) ?? present(i.siteUrl) ?? i.feedUrl,
      author: () => present(i.author) ?? UNKNOWN,
      title: () => present(i.title) ?? UNKNOWN,
      content: () => (i.contentHtml === null ? "" : htmlToMarkdown(i.contentHtml)) || NONE,
      content_clean: () => (i.contentHtml === null ? "" : stripHtml(i.contentHtml)) || NONE,
      media_url: () => i.mediaUrl ?? "",
      categories: () => list(i.categories)
    })
  },
  forum: {
    header: () => "New submission in /r/%subreddit% from /u/%author%!",
    name: (i) => `/r/${i.subreddit}`,
    avatar: (i) => i.subredditIcon,
    values: (i) => ({
      subreddit: () => i.subreddit,
      subreddit_fullname: () => i.subredditFullname,
      author: () => i.author,
      title: () => i.title,
      flair: () => present(i.flair) ?? NONE,
      content_url: () => i.contentUrl
    })
  },
  streaming: {
    header: (i) =>
      i.event === "live"
        ? ":red_circle: Now Live on Twitch: %display_name% | :video_game: Playing %game%."
        : "Stream Offline: %display_name% | :video_game: Playing %game%.",
    name: (i) => present(i.displayName) ?? present(i.username),
    avatar: (i) => i.profileImage,
    values: (i) => ({
      display_name: () => present(i.displayName) ?? i.username,
      username: () => i.username,
      game: () => present(i.game) ?? UNKNOWN,
      status: () => present(i.status) ?? NONE,
      stream_status: () => (i.event === "live" ? "Live" : "Offline")
    })
  },
  microblog: {
    header: () => "New tweet from %name%!",
    name: (i) => present(i.screenName),
    avatar: (i) => i.profileImage,
    values: (i) => ({
      screen_name: () => i.screenName,
      name: () => present(i.name) ?? i.screenName,
      media_url: () => i.mediaUrls.filter((u) => u.trim() !== "").join("\n")
    }),
    prepare: (header, i) =>
      i.mediaUrls.some((u) => u.trim() !== "")
        ? header
        : header.split("\n").filter((line) => !MEDIA_LINE.test(line.replace(/\r$/, ""))).join("\n")
  },
  video: {
    header: () => "%channel% just %video_status% a video!",
    name: (i) => present(i.channel),
    avatar: (i) => i.channelThumbnail,
    values: (i) => ({
      title: () => i.title,
      channel: () => i.channel,
      duration: () => (i.durationSeconds === null ? UNKNOWN : formatDuration(i.durationSeconds)),
      video_status: () => i.event,
      description: () => truncate(present(i.description)?.trim() ?? NONE, DESCRIPTION_MAX),
      short_description: () => truncate(present(i.description)?.trim() ?? NONE, SHORT_DESCRIPTION_MAX),
      tags: () => list(i.tags),
      thumbnail: () => i.thumbnail ?? ""
    })
  },
  photo: {
    header: () => "New post from %username%!",
    name: (i) => present(i.username),
    avatar: (i) => i.profilePicture,
    values: (i) => ({
      username: () => i.username,
      fullname: () => present(i.fullname) ?? i.username,
      caption: () => present(i.caption) ?? NONE,
      media_url: () => i.mediaUrl ?? "",
      hashtags: () => list(i.hashtags.map((h) => h.replace(/^#+/, "")), " ", (h) => `#${h}`),
      profile_url: () => i.profileUrl
    })
  }
}

/** The format of the item's module (the table is per module; this joins it back to the union). */
export const formatOf = (item: Item): Format<Item> => FORMATS[item.module] as Format<Item>

/** The header the module posts when `custom_header` is null. */
export const defaultHeader = (item: Item): string => formatOf(item).header(item)
