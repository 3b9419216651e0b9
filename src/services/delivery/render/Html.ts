/**
 * Feed HTML as message text: `%content%` is Markdown (node-html-markdown, which Discord mostly
 * renders), `%content_clean%` is the text alone, tags dropped, entities decoded, one blank line at
 * most between blocks.
 */
import { NodeHtmlMarkdown } from "node-html-markdown"

const converter = new NodeHtmlMarkdown({ maxConsecutiveNewlines: 2 })

/** The HTML as Markdown, trimmed. */
export const htmlToMarkdown = (html: string): string => converter.translate(html).trim()

// The entities feeds actually use; an unknown named entity stays as written.
const NAMED: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " ", hellip: "…", mdash: "—", ndash: "–",
  lsquo: "‘", rsquo: "’", sbquo: "‚", ldquo: "“", rdquo: "”", bdquo: "„", laquo: "«", raquo: "»",
  lsaquo: "‹", rsaquo: "›", bull: "•", middot: "·", copy: "©", reg: "®", trade: "™", deg: "°",
  euro: "€", pound: "£", yen: "¥", cent: "¢", sect: "§", para: "¶", times: "×", divide: "÷",
  shy: "", zwj: "\u200d", zwnj: "\u200c", thinsp: "\u2009", ensp: "\u2002", emsp: "\u2003",
  iexcl: "¡", iquest: "¿", auml: "ä", ouml: "ö", uuml: "ü", Auml: "Ä", Ouml: "Ö", Uuml: "Ü",
  szlig: "ß", eacute: "é", egrave: "è", ecirc: "ê", aacute: "á", agrave: "à", acirc: "â",
  iacute: "í", oacute: "ó", uacute: "ú", ntilde: "ñ", ccedil: "ç", Eacute: "É"
}

const fromCodePoint = (n: number): string =>
  Number.isInteger(n) && n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : "\ufffd"

/** Decodes numeric entities and the common named ones. */
export const decodeEntities = (s: string): string =>
  s.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g, (all, dec, hex, name) => {
    if (dec !== undefined) return fromCodePoint(Number(dec))
    if (hex !== undefined) return fromCodePoint(parseInt(hex, 16))
    return Object.hasOwn(NAMED, name) ? NAMED[name]! : all
  })

// Paragraph-like elements stand apart (a blank line); the items of a list, a table or a definition
// list start a new line.
const PARAGRAPH = "address|article|aside|blockquote|div|dl|figcaption|figure|footer|h[1-6]|header|hr|main|nav|ol|p|pre|section|table|ul"
const LINE = "li|tr|dt|dd"

/** The text of the HTML: tags removed (script and style with their content), entities decoded. */
export const stripHtml = (html: string): string =>
  decodeEntities(
    html
      .replace(/<!--[\s\S]*?(?:-->|$)/g, "")
      .replace(/<(script|style|template)\b[\s\S]*?(?:<\/\1\s*>|$)/gi, "")
      .replace(/<br\s*\/?>/gi, "\n")
      .replace(new RegExp(`</?(?:${PARAGRAPH})\\b[^<>]*>`, "gi"), "\n\n")
      .replace(new RegExp(`<(?:${LINE})\\b[^<>]*>`, "gi"), "\n")
      .replace(/<t[dh]\b[^<>]*>/gi, " ")
      // [^<>] rather than [^>]: an unclosed "<a" stops at the next "<", so the scan stays linear.
      .replace(/<\/?[A-Za-z][^<>]*>|<![^<>]*>|<\?[^<>]*>/g, "")
  )
    .split("\n")
    .map((line) => line.replace(/[^\S\n]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
