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
}

export interface WebhookMessage {
  readonly content: string
  readonly username?: string
  readonly avatar_url?: string
  readonly allowed_mentions: { readonly parse: readonly [] }
}

/** The time the placeholders show: the item's own (publication, stream start). */
export const itemTime = (item: Item): Date => item.publishedAt

/** Whether the rendered message wraps its URLs: `censor` on an NSFW item. */
export const isCensored = (item: Item, options: DeliveryOptions): boolean =>
  options.nsfw === "censor" && isNsfw(item)

/** The message content alone (see the module comment). */
export const renderContent = (item: Item, options: DeliveryOptions): string => {
  const format = formatOf(item)
  const template = options.custom_header ?? format.header(item)
  const header = format.prepare?.(template, item) ?? template
  const values = format.values(item)
  const memo = new Map<string, string | undefined>()
  const once = (name: string, compute: () => string | undefined): string | undefined => {
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
  }, MAX_CONTENT * 2)

  const censor = isCensored(item, options)
  const body = censor ? censorUrls(text) : text
  if (used.has("url")) return truncate(body, MAX_CONTENT, urlCutSpans(body))
  const url = censor ? censorUrls(item.url) : item.url
  if (body === "") return truncate(url, MAX_CONTENT)
  const suffix = `\n${url}`
  const room = MAX_CONTENT - codePointLength(suffix)
  if (codePointLength(body) <= room) return body + suffix
  // The URL alone does not fit with an ellipsis before it: cut the whole.
  if (room < 1) return truncate(body + suffix, MAX_CONTENT, urlCutSpans(body + suffix))
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

export const render = (item: Item, options: DeliveryOptions, defaults: RenderDefaults = {}): WebhookMessage => {
  const format = formatOf(item)
  const username = options["no-username-overwrite"] === true
    ? null
    : webhookUsername(options["webhook-name"]) ?? webhookUsername(format.name(item)) ?? webhookUsername(defaults.name)
  const avatar = options["no-avatar-overwrite"] === true ? null : httpUrl(format.avatar(item)) ?? httpUrl(defaults.avatarUrl)
  return {
    content: renderContent(item, options),
    ...(username === null ? {} : { username }),
    ...(avatar === null ? {} : { avatar_url: avatar }),
    allowed_mentions: { parse: [] }
  }
}
