/**
 * RSS 2.0 / 0.9x, RSS 1.0 (RDF) and Atom 1.0 / 0.3 read into one shape. Elements are matched by
 * local name and namespace kind (FeedXml.ts), so a missing, misspelled or undeclared namespace still
 * reads; links are resolved against `xml:base` and the URL the feed was read from.
 */
import { createHash } from "node:crypto"
import { parseFeedDate } from "./FeedDate.ts"
import { decodeEntities, type El, escapeHtml, innerHtml, readXml, textOf } from "./FeedXml.ts"

export interface FeedEntry {
  readonly id: string
  readonly url: string | null
  readonly title: string | null
  readonly author: string | null
  readonly contentHtml: string | null
  readonly mediaUrl: string | null
  readonly categories: ReadonlyArray<string>
  readonly publishedAt: Date | null
}

export interface Feed {
  readonly format: "rss" | "rdf" | "atom"
  readonly title: string | null
  readonly siteUrl: string | null
  readonly image: string | null
  readonly updatedAt: Date | null
  readonly entries: ReadonlyArray<FeedEntry>
}

const CORE = new Set(["", "rss"])
const emptyEl: El = { name: "", local: "", kind: "", attrs: {}, children: [] }
const ATOM = new Set(["", "atom"])

const elements = (el: El | undefined): ReadonlyArray<El> =>
  el === undefined ? [] : el.children.filter((c): c is El => typeof c !== "string")
const all = (el: El | undefined, local: string, kinds: ReadonlySet<string>) =>
  elements(el).filter((c) => c.local === local && kinds.has(c.kind))
const first = (el: El | undefined, local: string, kinds: ReadonlySet<string>) =>
  elements(el).find((c) => c.local === local && kinds.has(c.kind))
const ofKind = (kind: string) => new Set([kind])
const attr = (el: El | undefined, local: string): string | undefined => {
  if (el === undefined) return undefined
  if (el.attrs[local] !== undefined) return el.attrs[local]
  const key = Object.keys(el.attrs).find((k) => k.slice(k.indexOf(":") + 1) === local && !k.startsWith("xmlns"))
  return key === undefined ? undefined : el.attrs[key]
}

const nonEmpty = (s: string | undefined | null): string | null => {
  const t = s?.trim()
  return t === undefined || t === "" ? null : t
}

/** Plain text: tags dropped when there are any, entities decoded, white space collapsed. */
export const plainText = (s: string | undefined | null): string | null => {
  if (s === undefined || s === null) return null
  // Block-level tags and line breaks separate words; inline ones (`ft<sup>2</sup>`) do not.
  const stripped = /<\/?[A-Za-z][^<>]*>/.test(s)
    ? s.replace(/<!--[\s\S]*?-->/g, "")
      .replace(/<\/?(?:br|p|div|li|ul|ol|h[1-6]|tr|td|th|table|blockquote|hr)\b[^<>]*>/gi, " ")
      .replace(/<\/?[A-Za-z][^<>]*>/g, "")
    : s
  return nonEmpty(decodeEntities(stripped).replace(/\s+/g, " "))
}

/** `href` resolved against `base`; null when it is empty or not a URL even then. */
export const resolveUrl = (href: string | undefined | null, base: string): string | null => {
  const h = nonEmpty(href)
  if (h === null) return null
  try {
    const url = new URL(h, base)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : h.includes(":") ? url.href : null
  } catch {
    return null
  }
}

const baseOf = (el: El | undefined, parent: string): string => {
  const b = el?.attrs["xml:base"]
  return b === undefined ? parent : resolveUrl(b, parent) ?? parent
}

/** Relative `href` and `src` in HTML resolved against `base`. */
const absolutise = (html: string, base: string): string =>
  html.replace(/\b(href|src)\s*=\s*(["'])(.*?)\2/gi, (all, name: string, q: string, value: string) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(value) || value.startsWith("#") || value === "") return all
    const resolved = resolveUrl(decodeEntities(value), base)
    return resolved === null ? all : `${name}=${q}${escapeHtml(resolved).replace(/"/g, "&quot;")}${q}`
  })

const htmlOf = (el: El | undefined, base: string): string | null => {
  if (el === undefined) return null
  // HTML pasted unescaped into the element reads as child elements: give it back as HTML.
  const html = elements(el).length > 0 ? innerHtml(el) : textOf(el)
  const t = nonEmpty(html)
  return t === null ? null : absolutise(t, base)
}

/** Atom text constructs (`type` text, html or xhtml; Atom 0.3 `mode="escaped"`) as HTML or as plain text. */
const atomHtml = (el: El | undefined, base: string): string | null => {
  if (el === undefined || el.attrs["src"] !== undefined) return null
  const type = (el.attrs["type"] ?? "text").toLowerCase()
  if (type === "xhtml" || type === "application/xhtml+xml") {
    const div = elements(el).find((c) => c.local === "div")
    const t = nonEmpty(div === undefined ? innerHtml(el) : innerHtml(div))
    return t === null ? null : absolutise(t, base)
  }
  if (type === "html" || type === "text/html" || el.attrs["mode"] === "escaped" || elements(el).length > 0) return htmlOf(el, base)
  const t = nonEmpty(textOf(el))
  return t === null ? null : escapeHtml(t).replace(/\n/g, "<br>")
}
const atomText = (el: El | undefined): string | null => {
  if (el === undefined) return null
  const type = (el.attrs["type"] ?? "text").toLowerCase()
  return type === "text" || type === "text/plain" ? nonEmpty(textOf(el).replace(/\s+/g, " ")) : plainText(elements(el).length > 0 ? innerHtml(el) : textOf(el))
}

/** `"jane@example.com (Jane Doe)"` → `Jane Doe`. */
const authorName = (s: string | null): string | null => {
  if (s === null) return null
  const m = /^\S+@\S+\s*\((.+)\)$/.exec(s)
  return m === null ? s : m[1]!.trim()
}

const atomLink = (el: El, rel: string, base: string, kinds: ReadonlySet<string>): string | null => {
  const links = all(el, "link", kinds).filter((l) => (attr(l, "rel") ?? "alternate").toLowerCase() === rel)
  const best = links.find((l) => /html/i.test(attr(l, "type") ?? "")) ?? links[0]
  return best === undefined ? null : resolveUrl(attr(best, "href"), baseOf(best, base))
}

const media = (el: El, base: string): string | null => {
  const enclosure = first(el, "enclosure", CORE)
  const group = first(el, "group", ofKind("media"))
  const candidates = [
    enclosure === undefined ? undefined : attr(enclosure, "url"),
    atomLink(el, "enclosure", base, ATOM) ?? undefined,
    attr(first(el, "content", ofKind("media")), "url"),
    attr(first(group, "content", ofKind("media")), "url"),
    attr(first(el, "thumbnail", ofKind("media")), "url"),
    attr(first(group, "thumbnail", ofKind("media")), "url")
  ]
  for (const c of candidates) {
    const url = resolveUrl(c, base)
    if (url !== null) return url
  }
  return null
}

const hashId = (...parts: ReadonlyArray<string | null>) =>
  `sha256:${createHash("sha256").update(parts.map((p) => p ?? "").join("\n")).digest("hex").slice(0, 32)}`

const categoriesOf = (texts: ReadonlyArray<string | null | undefined>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const t of texts) {
    const c = plainText(t)
    if (c !== null && !out.includes(c)) out.push(c)
  }
  return out
}

const rssEntry = (item: El, base0: string, feedAuthor: string | null): FeedEntry => {
  const base = baseOf(item, base0)
  const title = plainText(textOf(first(item, "title", CORE) ?? emptyEl))
  const link = resolveUrl(textOf(first(item, "link", CORE) ?? emptyEl), base) ?? atomLink(item, "alternate", base, ofKind("atom"))
  const guidEl = first(item, "guid", CORE)
  const guid = nonEmpty(guidEl === undefined ? attr(item, "about") : textOf(guidEl))
  // A permalink guid counts as the link only when it is an absolute web URL.
  const permaGuid = guidEl !== undefined && (attr(guidEl, "isPermaLink") ?? "true").toLowerCase() !== "false" && guid !== null &&
      /^https?:\/\//i.test(guid)
    ? resolveUrl(guid, base)
    : null
  const dateRaw = nonEmpty(textOf(first(item, "pubDate", CORE) ?? first(item, "date", ofKind("dc")) ?? first(item, "published", ofKind("atom")) ?? first(item, "updated", ofKind("atom")) ?? emptyEl))
  const content = htmlOf(first(item, "description", CORE), base) ?? htmlOf(first(item, "encoded", ofKind("content")), base)
  return {
    id: guid ?? link ?? hashId(title, dateRaw, title === null && dateRaw === null ? content : null),
    url: link ?? permaGuid,
    title,
    author: authorName(
      plainText(textOf(first(item, "author", CORE) ?? emptyEl)) ??
        plainText(textOf(first(item, "creator", ofKind("dc")) ?? emptyEl)) ??
        plainText(textOf(first(item, "author", ofKind("itunes")) ?? emptyEl)) ??
        plainText(textOf(first(first(item, "author", ofKind("atom")), "name", ofKind("atom")) ?? emptyEl))
    ) ?? feedAuthor,
    contentHtml: content,
    mediaUrl: media(item, base),
    categories: categoriesOf([
      ...all(item, "category", CORE).map(textOf),
      ...all(item, "subject", ofKind("dc")).map(textOf)
    ]),
    publishedAt: parseFeedDate(dateRaw)
  }
}

const readRss = (root: El, feedUrl: string): Feed => {
  const rdf = root.local === "RDF"
  const channel = root.local === "channel" ? root : first(root, "channel", CORE)
  const base = baseOf(channel, baseOf(root, feedUrl))
  const items = [...all(root, "item", CORE), ...all(channel, "item", CORE)]
  const image = first(channel, "image", CORE) ?? first(root, "image", CORE)
  const feedAuthor = plainText(textOf(first(channel, "creator", ofKind("dc")) ?? first(channel, "author", ofKind("itunes")) ?? emptyEl))
  return {
    format: rdf ? "rdf" : "rss",
    title: plainText(textOf(first(channel, "title", CORE) ?? emptyEl)),
    siteUrl: resolveUrl(textOf(first(channel, "link", CORE) ?? emptyEl), base) ??
      (channel === undefined ? null : atomLink(channel, "alternate", base, ofKind("atom"))),
    image: resolveUrl(textOf(first(image, "url", CORE) ?? emptyEl), base) ??
      resolveUrl(attr(image, "resource"), base) ??
      resolveUrl(attr(first(channel, "image", ofKind("itunes")), "href"), base),
    updatedAt: parseFeedDate(nonEmpty(textOf(
      first(channel, "lastBuildDate", CORE) ?? first(channel, "pubDate", CORE) ?? first(channel, "date", ofKind("dc")) ?? emptyEl
    ))),
    entries: items.map((item) => rssEntry(item, base, feedAuthor))
  }
}

const atomEntry = (entry: El, base0: string, feedAuthor: string | null): FeedEntry => {
  const base = baseOf(entry, base0)
  const title = atomText(first(entry, "title", ATOM))
  const link = atomLink(entry, "alternate", base, ATOM)
  const id = nonEmpty(textOf(first(entry, "id", ATOM) ?? emptyEl))
  const dateRaw = nonEmpty(textOf(
    first(entry, "published", ATOM) ?? first(entry, "updated", ATOM) ?? first(entry, "issued", ATOM) ??
      first(entry, "modified", ATOM) ?? first(entry, "created", ATOM) ?? first(entry, "date", ofKind("dc")) ?? emptyEl
  ))
  const content = atomHtml(first(entry, "content", ATOM), base) ?? atomHtml(first(entry, "summary", ATOM), base)
  const idUrl = id !== null && /^https?:\/\//i.test(id) ? resolveUrl(id, base) : null
  return {
    id: id ?? link ?? hashId(title, dateRaw, title === null && dateRaw === null ? content : null),
    url: link ?? idUrl,
    title,
    author: plainText(textOf(first(first(entry, "author", ATOM), "name", ATOM) ?? emptyEl)) ??
      plainText(textOf(first(entry, "creator", ofKind("dc")) ?? emptyEl)) ?? feedAuthor,
    contentHtml: content,
    mediaUrl: media(entry, base),
    categories: categoriesOf(all(entry, "category", ATOM).map((c) => attr(c, "label") ?? attr(c, "term") ?? textOf(c))),
    publishedAt: parseFeedDate(dateRaw)
  }
}

const readAtom = (root: El, feedUrl: string): Feed => {
  const base = baseOf(root, feedUrl)
  const feedAuthor = plainText(textOf(first(first(root, "author", ATOM), "name", ATOM) ?? emptyEl))
  return {
    format: "atom",
    title: atomText(first(root, "title", ATOM)),
    siteUrl: atomLink(root, "alternate", base, ATOM),
    image: resolveUrl(textOf(first(root, "logo", ATOM) ?? first(root, "icon", ATOM) ?? emptyEl), base),
    updatedAt: parseFeedDate(nonEmpty(textOf(first(root, "updated", ATOM) ?? first(root, "modified", ATOM) ?? emptyEl))),
    entries: all(root, "entry", ATOM).map((entry) => atomEntry(entry, base, feedAuthor))
  }
}

/** The feed in `text` read from `feedUrl` (the URL after redirects), or undefined when it is not RSS or Atom. */
export const readFeed = (text: string, feedUrl: string): Feed | undefined => {
  const root = readXml(text)
  if (root === undefined) return undefined
  if (root.local === "feed") return readAtom(root, feedUrl)
  if (root.local === "rss" || root.local === "RDF" || root.local === "channel") return readRss(root, feedUrl)
  return undefined
}
