/**
 * The webhook message of an item (delivery.md §3), the same for the worker, the preview and the test
 * message:
 * - `content`: the header (`custom_header`, else the module's default) with its placeholders
 *   replaced (Placeholders.ts, Timestamp.ts), then `\n` and the item URL unless the header uses
 *   `%url%`. A header that comes out empty gives the URL alone. With `nsfw: censor` and an NSFW item,
 *   every URL of the message is wrapped in `<…>`. Over 2,000 code points: cut at a character boundary
 *   (never inside a grapheme or a URL when avoidable), ending in `…`, the appended URL kept whole.
 * - `username`: `webhook-name`, else the module's default name, else `defaults.name`; each only if
 *   Discord accepts it (1–80 characters once white space is collapsed, cut to 80 with `…`; not
 *   containing "discord" or "clyde", not "everyone" or "here"), else the next; none → omitted, and
 *   omitted when `no-username-overwrite` is true.
 * - `avatar_url`: the module's default avatar, else `defaults.avatarUrl`; an http(s) URL only;
 *   omitted when `no-avatar-overwrite` is true.
 * - `allowed_mentions` is always `{ parse: [] }`: `@everyone` or `<@id>` from a source or a header is
 *   shown as text and pings no one.
 */
import { censorUrls, urlCutSpans } from "./Censor.ts"
import type { Embed } from "./Embed.ts"
import { renderEmbed } from "./Embed.ts"
import type { ForumTag } from "./ForumPost.ts"
import { appliedTags, DEFAULT_THREAD_NAME, threadName } from "./ForumPost.ts"
import type { AllowedMentions } from "./Mentions.ts"
import { allowedMentions, mentionPrefix, mentionRoles } from "./Mentions.ts"
import { splitText } from "./Split.ts"
import type { Item } from "./Item.ts"
import { isNsfw } from "./Nsfw.ts"
import type { DeliveryOptions } from "./Options.ts"
import { formatOf } from "./Placeholders.ts"
import { fillTemplate } from "./Template.ts"
import { formatTimestamp } from "./Timestamp.ts"
import { codePointLength, truncate } from "./Text.ts"

export const MAX_CONTENT = 2000
export const MAX_USERNAME = 80

/** Fallbacks the caller knows when the item lacks its module's name or avatar (e.g. display_info). */
export interface RenderDefaults {
  readonly name?: string | null | undefined
  readonly avatarUrl?: string | null | undefined
  /** The tags of the forum the webhook posts in; present only for a forum webhook (one post per item). */
  readonly forumTags?: ReadonlyArray<ForumTag> | null | undefined
}

export interface WebhookMessage {
  readonly content: string
  readonly username?: string
  readonly avatar_url?: string
  readonly allowed_mentions: AllowedMentions
  readonly embeds?: ReadonlyArray<Embed>
  /** A forum webhook's new post (its first message only). */
  readonly thread_name?: string
  readonly applied_tags?: ReadonlyArray<string>
}

/** The most messages one item becomes with `split` (delivery.md §10). */
export const MAX_SPLIT = 3

/** The time the placeholders show: the item's own (publication, stream start). */
export const itemTime = (item: Item): Date => item.publishedAt

/** Whether the rendered message wraps its URLs: `censor` on an NSFW item. */
export const isCensored = (item: Item, options: DeliveryOptions): boolean =>
  options.nsfw === "censor" && isNsfw(item)

/** The header with its placeholders replaced (the URL of `%url%` censored with the rest), and whether it used `%url%`. */
export const fillHeader = (item: Item, options: DeliveryOptions, template: string, budget: number) => {
  const format = formatOf(item)
  const header = format.prepare?.(template, item) ?? template
  const values = format.values(item)
  const memo = new Map<string, string | undefined>()
  const once = (name: string, compute: () => string | undefined): string | undefined => {
    // Stryker disable next-line ConditionalExpression: computing a value again gives the same (values are pure); the memo only saves the work
    if (!memo.has(name)) memo.set(name, compute())
    return memo.get(name)
  }
  const { text, used } = fillTemplate(header, (name) => {
    if (name === "url") return () => item.url
    if (name.startsWith("timestamp")) {
      const stamp = once(name, () => formatTimestamp(itemTime(item), name.slice("timestamp".length)))
      return stamp === undefined ? undefined : () => stamp
    }
    const value = Object.hasOwn(values, name) ? values[name] : undefined
    // Stryker disable next-line StringLiteral: a placeholder's value is a () => string (Placeholders.Values): once() never gives undefined here
    return value === undefined ? undefined : () => once(name, value) ?? ""
  }, budget)
  return { text: isCensored(item, options) ? censorUrls(text) : text, usesUrl: used.has("url") }
}

/** How `renderContent` shapes the text: its limit, and whether the item URL is appended (not with an embed). */
export interface ContentShape {
  readonly max?: number
  readonly appendUrl?: boolean
}

/** The message content alone (see the module comment). */
export const renderContent = (item: Item, options: DeliveryOptions, shape: ContentShape = {}): string => {
  const max = shape.max ?? MAX_CONTENT
  const template = options.custom_header ?? formatOf(item).header(item)
  const { text: body, usesUrl } = fillHeader(item, options, template, MAX_CONTENT * 4)
  if (usesUrl || shape.appendUrl === false) return truncate(body, max, urlCutSpans(body))
  return withUrl(body, isCensored(item, options) ? censorUrls(item.url) : item.url, max)
}

/** `body`, then a newline and `url`, in at most `max` code points: the body is cut, the URL kept whole. */
export const withUrl = (body: string, url: string, max: number): string => {
  if (body === "") return truncate(url, max)
  const suffix = `\n${url}`
  const room = max - codePointLength(suffix)
  // The URL alone does not fit with an ellipsis before it: cut the whole.
  if (room < 1) return truncate(body + suffix, max, urlCutSpans(body + suffix))
  // A body that fits comes back from truncate() as it is.
  return truncate(body, room, urlCutSpans(body)) + suffix
}

const FORBIDDEN_PARTS = ["discord", "clyde"]
const FORBIDDEN_NAMES = ["everyone", "here"]

/** A name Discord accepts for a webhook message, or null. */
export const webhookUsername = (name: string | null | undefined): string | null => {
  if (name === null || name === undefined) return null
  const collapsed = name.replace(/\s+/g, " ").trim()
  const lower = collapsed.toLowerCase()
  if (collapsed === "" || FORBIDDEN_NAMES.includes(lower) || FORBIDDEN_PARTS.some((p) => lower.includes(p))) return null
  return truncate(collapsed, MAX_USERNAME)
}

const httpUrl = (url: string | null | undefined): string | null =>
  url !== null && url !== undefined && /^https?:\/\/\S+$/i.test(url.trim()) ? url.trim() : null

/**
 * The messages of an item (delivery.md §3 and §10), in the order they are posted: one, or with
 * `split` up to `MAX_SPLIT`. The first opens with the feed's role mentions and carries the embed and,
 * for a forum webhook (`defaults.forumTags`) unless it goes into `thread_id`, the new post's
 * `thread_name` and `applied_tags`; every one has the same name, avatar and
 * `allowed_mentions` (exactly the feed's roles may ping).
 */
export const renderMessages = (item: Item, options: DeliveryOptions, defaults: RenderDefaults = {}): ReadonlyArray<WebhookMessage> => {
  const format = formatOf(item)
  const username = options["no-username-overwrite"] === true
    ? null
    : webhookUsername(options["webhook-name"]) ?? webhookUsername(format.name(item)) ?? webhookUsername(defaults.name)
  const avatar = options["no-avatar-overwrite"] === true ? null : httpUrl(format.avatar(item)) ?? httpUrl(defaults.avatarUrl)
  const roles = mentionRoles(options.mention_roles)
  const prefix = mentionPrefix(roles)
  const room = MAX_CONTENT - codePointLength(prefix)
  const embed = options.embed === true
  const contents = embed || options.split !== true
    ? [prefix + renderContent(item, options, { max: room, appendUrl: !embed })]
    : splitContents(item, options, prefix)
  const common = {
    ...(username === null ? {} : { username }),
    ...(avatar === null ? {} : { avatar_url: avatar }),
    allowed_mentions: allowedMentions(roles)
  }
  const first = {
    ...(embed
      ? {
        embeds: [renderEmbed(item, {
          color: options.embed_color,
          feedName: format.name(item) ?? defaults.name,
          censored: isCensored(item, options)
        })]
      }
      : {}),
    // Into `thread_id` (in a forum: an existing post), no new post: the platform refuses both (220002).
    ...(options.thread_id === null || options.thread_id === undefined ? forumPost(item, options, defaults.forumTags) : {})
  }
  return contents.map((content, i) => ({ content, ...common, ...(i === 0 ? first : {}) }))
}

/** With `split`: the header and the URL cut into up to MAX_SPLIT contents, the first after the mentions. */
const splitContents = (item: Item, options: DeliveryOptions, prefix: string): ReadonlyArray<string> => {
  const template = options.custom_header ?? formatOf(item).header(item)
  const { text: body, usesUrl } = fillHeader(item, options, template, MAX_CONTENT * MAX_SPLIT)
  const url = isCensored(item, options) ? censorUrls(item.url) : item.url
  const whole = usesUrl || body === "" ? (body === "" ? url : body) : `${body}\n${url}`
  const pieces = splitText(whole, MAX_CONTENT, MAX_SPLIT, MAX_CONTENT - codePointLength(prefix))
  // One piece: `whole` fits after the mentions, and is what renderContent would make of it.
  if (pieces.length === 1) return [prefix + pieces[0]!]
  const last = pieces[pieces.length - 1]!
  // §3's rules for the last: cut with an ellipsis, an appended URL kept whole.
  const lastMax = MAX_CONTENT
  // An empty header's `whole` is the URL: a last piece of it never ends with all of it.
  const lastContent = usesUrl || !last.endsWith(url)
    ? truncate(last, lastMax, urlCutSpans(last))
    : withUrl(last.slice(0, last.length - url.length).trimEnd(), url, lastMax)
  return [prefix + pieces[0]!, ...pieces.slice(1, -1), lastContent]
}

/** A forum webhook's post: its name and tags (only when the webhook is in a forum: `tags` not null). */
const forumPost = (item: Item, options: DeliveryOptions, tags: ReadonlyArray<ForumTag> | null | undefined) => {
  if (tags === null || tags === undefined) return {}
  const filled = fillHeader(item, options, options.forum_thread_name ?? DEFAULT_THREAD_NAME, MAX_CONTENT).text
  const applied = appliedTags(tags, options.forum_tags)
  return { thread_name: threadName(filled, item.url), ...(applied.length === 0 ? {} : { applied_tags: applied }) }
}

/** What the worker stores and sends: the first message, the thread it goes into, and those that follow. */
export interface OutgoingMessage extends WebhookMessage {
  readonly thread_id?: string
  readonly continued?: ReadonlyArray<WebhookMessage>
}

export const outgoing = (item: Item, options: DeliveryOptions, defaults: RenderDefaults = {}): OutgoingMessage => {
  const [first, ...rest] = renderMessages(item, options, defaults)
  const thread = options.thread_id
  return {
    ...first!,
    ...(thread === null || thread === undefined ? {} : { thread_id: thread }),
    ...(rest.length === 0 ? {} : { continued: rest })
  }
}

/** The item's message; with `split`, its first (renderMessages has them all). */
export const render = (item: Item, options: DeliveryOptions, defaults: RenderDefaults = {}): WebhookMessage =>
  renderMessages(item, options, defaults)[0]!
