/**
 * `embed: true` (delivery.md §10): the item as one embed, per module — `title` the item's title
 * linked to its URL, `description` its text as Markdown, `image` its first media, `thumbnail` the
 * profile or channel image, `author` its author or channel, `timestamp` its time, `footer` the
 * feed's name, `color` from `embed_color`. Within the platform's limits (title and author 256,
 * description 4,096, footer 2,048, 6,000 in all): the description is what gets cut. A censored item
 * (`nsfw: censor`) shows no image or thumbnail, and its description's URLs are wrapped.
 */
import { censorUrls } from "./Censor.ts"
import { htmlToMarkdown } from "./Html.ts"
import type { Item } from "./Item.ts"
import { SHORT_DESCRIPTION_MAX } from "./Placeholders.ts"
import { codePointLength, truncate } from "./Text.ts"

export const EMBED_TOTAL = 6000
export const EMBED_TITLE = 256
export const EMBED_DESCRIPTION = 4096
export const EMBED_AUTHOR = 256
export const EMBED_FOOTER = 2048
const MAX_URL = 2048

export interface Embed {
  readonly title?: string
  readonly url?: string
  readonly description?: string
  readonly color?: number
  readonly timestamp: string
  readonly image?: { readonly url: string }
  readonly thumbnail?: { readonly url: string }
  readonly author?: { readonly name: string }
  readonly footer?: { readonly text: string }
}

/** The parts of an item an embed shows, before limits. */
interface Parts {
  readonly title: string | null
  readonly description: string | null
  readonly image: string | null
  readonly thumbnail: string | null
  readonly author: string | null
}

const present = (s: string | null | undefined): string | null => s === null || s === undefined || s.trim() === "" ? null : s.trim()

const partsOf = (item: Item): Parts => {
  switch (item.module) {
    case "rss":
      return {
        title: item.title,
        description: item.contentHtml === null ? null : htmlToMarkdown(item.contentHtml),
        image: item.mediaUrl,
        thumbnail: item.feedImage,
        author: item.author
      }
    case "forum":
      // A text post's self-text (Markdown already); a link post has none.
      return { title: item.title, description: item.selfText, image: null, thumbnail: item.subredditIcon, author: `u/${item.author}` }
    case "streaming":
      return {
        title: `${present(item.displayName) ?? item.username} is ${item.event === "live" ? "live" : "offline"}`,
        description: item.status,
        image: null,
        thumbnail: item.profileImage,
        author: present(item.displayName) ?? item.username
      }
    case "microblog":
      return {
        title: `${present(item.name) ?? item.screenName} (@${item.screenName})`,
        description: item.text,
        image: item.mediaUrls[0] ?? null,
        thumbnail: item.profileImage,
        author: present(item.name) ?? item.screenName
      }
    case "video":
      return {
        title: item.title,
        description: present(item.description) === null ? null : truncate(item.description!.trim(), SHORT_DESCRIPTION_MAX),
        image: item.thumbnail,
        thumbnail: item.channelThumbnail,
        author: item.channel
      }
    case "photo":
      return {
        title: present(item.fullname) ?? item.username,
        description: item.caption,
        image: item.mediaUrl,
        thumbnail: item.profilePicture,
        author: present(item.fullname) ?? item.username
      }
  }
}

const httpUrl = (url: string | null | undefined): string | null => {
  const u = present(url)
  return u !== null && u.length <= MAX_URL && /^https?:\/\/\S+$/i.test(u) ? u : null
}

/** `#rrggbb` as the integer Discord takes; null for anything else. */
export const colorOf = (hex: string | null | undefined): number | null =>
  typeof hex === "string" && /^#[0-9a-f]{6}$/i.test(hex) ? Number.parseInt(hex.slice(1), 16) : null

export interface EmbedInput {
  readonly color: string | null | undefined
  readonly feedName: string | null | undefined
  readonly censored: boolean
}

export const renderEmbed = (item: Item, input: EmbedInput): Embed => {
  const parts = partsOf(item)
  const title = present(parts.title) === null ? null : truncate(present(parts.title)!, EMBED_TITLE)
  const author = present(parts.author) === null ? null : truncate(present(parts.author)!, EMBED_AUTHOR)
  const footer = present(input.feedName) === null ? null : truncate(present(input.feedName)!, EMBED_FOOTER)
  const others = [title, author, footer].reduce((n, s) => n + (s === null ? 0 : codePointLength(s)), 0)
  const text = present(parts.description)
  const shown = text === null ? null : input.censored ? censorUrls(text) : text
  const description = shown === null ? null : truncate(shown, Math.min(EMBED_DESCRIPTION, EMBED_TOTAL - others))
  const url = httpUrl(item.url)
  const color = colorOf(input.color)
  const image = input.censored ? null : httpUrl(parts.image)
  const thumbnail = input.censored ? null : httpUrl(parts.thumbnail)
  return {
    ...(title === null ? {} : { title }),
    ...(title === null || url === null ? {} : { url }),
    ...(description === null ? {} : { description }),
    ...(color === null ? {} : { color }),
    timestamp: item.publishedAt.toISOString(),
    ...(image === null ? {} : { image: { url: image } }),
    ...(thumbnail === null ? {} : { thumbnail: { url: thumbnail } }),
    ...(author === null ? {} : { author: { name: author } }),
    ...(footer === null ? {} : { footer: { text: footer } })
  }
}

/** The characters Discord counts against an embed's 6,000. */
export const embedLength = (e: Embed): number =>
  [e.title, e.description, e.author?.name, e.footer?.text].reduce((n, s) => n + (s === undefined ? 0 : codePointLength(s)), 0)
