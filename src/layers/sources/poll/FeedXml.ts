/**
 * A feed's text as an element tree, leniently: stray bytes and blank lines before the XML
 * declaration, bare `&`, a `<` that starts no tag, HTML entities, invalid characters and junk after
 * the root are repaired before @rgrove/parse-xml reads it; a document it still refuses (mismatched
 * tags, an unclosed root, HTML pasted unescaped) is read by a forgiving tag-soup reader instead.
 * Each element carries its namespace as a short kind (`atom`, `dc`, `media`…), taken from the
 * declared URI, else from the usual prefix when it is undeclared; unprefixed elements outside the
 * known namespaces are `""` (the feed's own vocabulary, whatever namespace it wrongly declares).
 */
import { parseXml } from "@rgrove/parse-xml"
import type { XmlElement, XmlText } from "@rgrove/parse-xml"
import { cleanChars, cp1252Char } from "./FeedText.ts"
import { HTML_ENTITIES } from "./HtmlEntities.ts"

export type Node = El | string

export interface El {
  /** As written, prefix included (`media:content`). */
  readonly name: string
  readonly local: string
  /** `""` for the feed's own elements, else `atom`, `rss`, `dc`, `content`, `media`, `itunes`, `rdf`, `xhtml` or `other`. */
  readonly kind: string
  readonly attrs: Readonly<Record<string, string>>
  readonly children: ReadonlyArray<Node>
}

const NAMESPACES: Record<string, string> = {
  "http://www.w3.org/2005/atom": "atom",
  "http://purl.org/atom/ns#": "atom",
  "http://purl.org/rss/1.0/": "rss",
  "http://my.netscape.com/rdf/simple/0.9/": "rss",
  "http://backend.userland.com/rss2": "rss",
  "http://blogs.law.harvard.edu/tech/rss": "rss",
  "http://purl.org/dc/elements/1.1/": "dc",
  "http://purl.org/dc/terms/": "dc",
  "http://purl.org/rss/1.0/modules/content/": "content",
  "http://search.yahoo.com/mrss/": "media",
  "http://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
  "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
  "http://www.w3.org/1999/xhtml": "xhtml"
}
const PREFIXES: Record<string, string> = {
  atom: "atom", atom10: "atom", atom03: "atom", rss: "rss", dc: "dc", dcterms: "dc", content: "content",
  media: "media", itunes: "itunes", rdf: "rdf", xhtml: "xhtml"
}

const kindOfUri = (uri: string): string | undefined => {
  const u = uri.trim().toLowerCase()
  return NAMESPACES[u] ?? NAMESPACES[`${u}/`] ?? NAMESPACES[u.replace(/[/#]$/, "")]
}

const XML_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" }

const codePoint = (n: number): string =>
  Number.isInteger(n) && n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) && n !== 0xfffe && n !== 0xffff
    ? String.fromCodePoint(n)
    : "\ufffd"

// Numeric references to 128–159 mean windows-1252 punctuation (`&#146;` for ’), as feed readers read them.
const charRef = (n: number): string => n >= 0x80 && n <= 0x9f ? cp1252Char(n) : codePoint(n)

/** Decodes XML, HTML 4 and numeric references; anything else (a bare `&`, `&unknown;`) stays as written. */
export const decodeEntities = (s: string): string =>
  s.indexOf("&") === -1 ? s : s.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g, (all, dec, hex, name) => {
    if (dec !== undefined) return charRef(Number(dec))
    if (hex !== undefined) return charRef(parseInt(hex, 16))
    return XML_ENTITIES[name] ?? HTML_ENTITIES.get(name) ?? all
  })

/** Cuts what precedes the document (stray bytes, blank lines, a BOM) and what follows the root. */
export const trimDocument = (text: string): string => {
  let t = cleanChars(text).replace(/^\ufeff/, "")
  const decl = t.indexOf("<?xml")
  const start = decl >= 0 && decl < 1024 ? decl : t.search(/<[A-Za-z!?]/)
  if (start > 0) t = t.slice(start)
  // The root is the first element outside comments (a comment before it may quote markup: `'<p>…</p>'`).
  const root = /<(?!\?|!)([A-Za-z_][\w:.-]*)/.exec(t.replace(/<!--[\s\S]*?-->/g, ""))?.[1]
  if (root !== undefined) {
    const close = t.lastIndexOf(`</${root}`)
    const end = close < 0 ? -1 : t.indexOf(">", close)
    if (end > 0) t = t.slice(0, end + 1)
  }
  return t
}

/** Escapes bare `&` and a `<` that starts no markup, outside CDATA sections and comments. */
export const repairMarkup = (text: string): string =>
  text.split(/(<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<!--[\s\S]*?(?:-->|$))/).map((part, i) =>
    i % 2 === 1
      ? part
      : part
        .replace(/&(?!(?:[A-Za-z_][\w.-]*|#\d+|#[xX][0-9a-fA-F]+);)/g, "&amp;")
        .replace(/&#(\d+);|&#[xX]([0-9a-fA-F]+);/g, (all, dec, hex) => {
          const n = dec !== undefined ? Number(dec) : parseInt(hex, 16)
          return n >= 0x80 && n <= 0x9f || codePoint(n) === "\ufffd" ? charRef(n) : all
        })
        .replace(/<(?![A-Za-z_/!?])/g, "&lt;")
  ).join("")

/** The element tree of a feed document, or undefined when there is no element at all. */
export const readXml = (text: string): El | undefined => {
  const repaired = repairMarkup(trimDocument(text))
  try {
    const doc = parseXml(repaired, {
      ignoreUndefinedEntities: true,
      resolveUndefinedEntity: (ref) => HTML_ENTITIES.get(ref.slice(1, -1)) ?? null
    })
    return doc.root === null ? undefined : fromParsed(doc.root, new Map())
  } catch {
    return readLoose(repaired)
  }
}

const splitName = (name: string): readonly [string | undefined, string] => {
  const i = name.indexOf(":")
  return i < 0 ? [undefined, name] : [name.slice(0, i), name.slice(i + 1)]
}

/** The namespace scope of an element: its parent's, with its own `xmlns` declarations. */
const scopeOf = (attrs: Readonly<Record<string, string>>, parent: ReadonlyMap<string, string>): ReadonlyMap<string, string> => {
  let scope: Map<string, string> | undefined
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "xmlns" || k.startsWith("xmlns:")) {
      scope ??= new Map(parent)
      scope.set(k === "xmlns" ? "" : k.slice(6), v)
    }
  }
  return scope ?? parent
}

const kindOf = (name: string, scope: ReadonlyMap<string, string>): string => {
  const [prefix] = splitName(name)
  if (prefix === undefined) {
    const uri = scope.get("")
    const kind = uri === undefined ? undefined : kindOfUri(uri)
    // The feed's own vocabulary, whatever (wrong) namespace it declares; Atom and RSS 1.0 keep theirs.
    return kind === "atom" || kind === "xhtml" || kind === "rss" ? kind : kind ?? ""
  }
  const uri = scope.get(prefix)
  return (uri === undefined ? undefined : kindOfUri(uri)) ?? PREFIXES[prefix.toLowerCase()] ?? "other"
}

const make = (name: string, attrs: Readonly<Record<string, string>>, children: ReadonlyArray<Node>, scope: ReadonlyMap<string, string>): El => ({
  name,
  local: splitName(name)[1],
  kind: kindOf(name, scope),
  attrs,
  children
})

const fromParsed = (el: XmlElement, parentScope: ReadonlyMap<string, string>): El => {
  const scope = scopeOf(el.attributes, parentScope)
  const children: Array<Node> = []
  for (const c of el.children) {
    if (c.type === "element") children.push(fromParsed(c as XmlElement, scope))
    else if (c.type === "text" || c.type === "cdata") {
      const text = (c as XmlText).text
      const last = children[children.length - 1]
      if (typeof last === "string") children[children.length - 1] = last + text
      else children.push(text)
    }
  }
  return make(el.name, el.attributes, children, scope)
}

interface Open {
  readonly name: string
  readonly attrs: Record<string, string>
  readonly children: Array<string | Open>
}

const ATTRIBUTE = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g

const parseAttributes = (source: string): Record<string, string> => {
  const attrs: Record<string, string> = {}
  for (const m of source.matchAll(ATTRIBUTE)) {
    const name = m[1]!
    if (!(name in attrs)) attrs[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? "")
  }
  return attrs
}

/** The end of the tag opened at `from` (index of its `>`), honouring quoted attribute values; -1 if none. */
const tagEnd = (text: string, from: number): number => {
  let quote = ""
  for (let i = from; i < text.length; i++) {
    const c = text[i]!
    if (quote !== "") {
      if (c === quote) quote = ""
    } else if (c === "\"" || c === "'") quote = c
    else if (c === ">") return i
    else if (c === "<") return -1
  }
  return -1
}

// HTML elements that never have content, as pasted HTML writes them (`<br>`); not `link`, an RSS element.
const LOOSE_VOID = new Set(["br", "img", "hr", "input", "meta", "wbr", "area", "col", "embed", "source", "track", "param", "base"])

/**
 * Tag soup: start tags open elements, an end tag closes up to the nearest open element of its name
 * (an end tag matching none is dropped), and whatever is open at the end is closed.
 */
export const readLoose = (text: string): El | undefined => {
  const top: Open = { name: "", attrs: {}, children: [] }
  const stack: Array<Open> = [top]
  const current = () => stack[stack.length - 1]!
  const addText = (s: string) => {
    if (s.length > 0) current().children.push(s)
  }
  let i = 0
  while (i < text.length) {
    const lt = text.indexOf("<", i)
    if (lt < 0) {
      addText(decodeEntities(text.slice(i)))
      break
    }
    addText(decodeEntities(text.slice(i, lt)))
    if (text.startsWith("<![CDATA[", lt)) {
      const end = text.indexOf("]]>", lt + 9)
      addText(text.slice(lt + 9, end < 0 ? text.length : end))
      i = end < 0 ? text.length : end + 3
    } else if (text.startsWith("<!--", lt)) {
      const end = text.indexOf("-->", lt + 4)
      i = end < 0 ? text.length : end + 3
    } else if (text.startsWith("<?", lt)) {
      const end = text.indexOf("?>", lt + 2)
      i = end < 0 ? text.length : end + 2
    } else if (text.startsWith("<!", lt)) {
      const end = text.indexOf(">", lt + 2)
      i = end < 0 ? text.length : end + 1
    } else {
      const end = tagEnd(text, lt + 1)
      if (end < 0) {
        addText("<")
        i = lt + 1
        continue
      }
      const inner = text.slice(lt + 1, end)
      i = end + 1
      if (inner.startsWith("/")) {
        const name = inner.slice(1).trim()
        const at = stack.findLastIndex((o) => o.name === name)
        if (at > 0) stack.length = at
        continue
      }
      const m = /^([A-Za-z_][\w:.-]*)([\s\S]*?)(\/?)\s*$/.exec(inner)
      if (m === null) {
        addText(`<${inner}>`)
        continue
      }
      const el: Open = { name: m[1]!, attrs: parseAttributes(m[2]!), children: [] }
      current().children.push(el)
      if (m[3] !== "/" && !LOOSE_VOID.has(el.name)) stack.push(el)
    }
  }
  const root = top.children.find((c): c is Open => typeof c !== "string")
  return root === undefined ? undefined : fromOpen(root, new Map())
}

const fromOpen = (o: Open, parentScope: ReadonlyMap<string, string>): El => {
  const scope = scopeOf(o.attrs, parentScope)
  const children: Array<Node> = []
  for (const c of o.children) {
    if (typeof c !== "string") children.push(fromOpen(c, scope))
    else {
      const last = children[children.length - 1]
      if (typeof last === "string") children[children.length - 1] = last + c
      else children.push(c)
    }
  }
  return make(o.name, o.attrs, children, scope)
}

/** The text of an element and its descendants. */
export const textOf = (el: El): string => el.children.map((c) => (typeof c === "string" ? c : textOf(c))).join("")

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttr = (s: string) => escapeHtml(s).replace(/"/g, "&quot;")
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"])

/** The children of an element as HTML (XHTML content, or HTML a feed pasted unescaped), prefixes dropped. */
export const innerHtml = (el: El): string =>
  el.children.map((c) => {
    if (typeof c === "string") return escapeHtml(c)
    const attrs = Object.entries(c.attrs)
      .filter(([k]) => k !== "xmlns" && !k.startsWith("xmlns:"))
      .map(([k, v]) => ` ${k}="${escapeAttr(v)}"`)
      .join("")
    const tag = c.local.toLowerCase()
    return VOID.has(tag) && c.children.length === 0 ? `<${tag}${attrs}>` : `<${tag}${attrs}>${innerHtml(c)}</${tag}>`
  }).join("")

export { escapeHtml }
