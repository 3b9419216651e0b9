/**
 * The Markdown a chat message shows, the basics of the platform's flavour, as a tree of nodes: bold,
 * italics, underline, strikethrough, inline code and code blocks, headings, quotes, masked links and
 * bare http(s) URLs, line breaks, and mentions. Pure. Nothing here is HTML: the message view makes
 * elements only from these nodes and puts every text in as text, so a source's `<script>` or
 * `<img onerror>` is shown as written. Only http(s) addresses become links.
 */

export type MdNode =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "br" }
  | { readonly kind: "strong" | "em" | "u" | "s" | "quote"; readonly children: ReadonlyArray<MdNode> }
  | { readonly kind: "heading"; readonly level: 1 | 2 | 3; readonly children: ReadonlyArray<MdNode> }
  | { readonly kind: "code" | "codeblock"; readonly text: string }
  | { readonly kind: "link"; readonly href: string; readonly children: ReadonlyArray<MdNode> }
  /** `<@&id>`: a role, shown by its name. */
  | { readonly kind: "role"; readonly id: string }
  /** `@everyone`, `@here`, `<@id>`, `<#id>`: shown as written (whether it pings is the message's allowed_mentions). */
  | { readonly kind: "mention"; readonly text: string }

/** Nesting deeper than this stays text (a hostile source cannot make the parser recurse without end). */
const MAX_DEPTH = 6

interface Rule {
  /** Sticky: it matches at `lastIndex` only. */
  readonly re: RegExp
  /** Only where a line starts (and not inside bold, a link…). */
  readonly block?: boolean
  /** The character before the match must pass (an underscore in a word is not italics). */
  readonly after?: (previous: string) => boolean
  readonly node: (m: RegExpExecArray, inner: (s: string) => ReadonlyArray<MdNode>) => MdNode
}

const span = (kind: "strong" | "em" | "u" | "s") => (m: RegExpExecArray, inner: (s: string) => ReadonlyArray<MdNode>): MdNode => ({ kind, children: inner(m[1]!) })

/** In the order they are tried at one position. */
const RULES: ReadonlyArray<Rule> = [
  { re: /\\([^A-Za-z0-9\s])/y, node: (m) => ({ kind: "text", text: m[1]! }) },
  { re: /```(?:[A-Za-z0-9_+.-]+\n)?\n?([\s\S]*?)```/y, node: (m) => ({ kind: "codeblock", text: m[1]!.replace(/\n$/, "") }) },
  { re: /(`{1,2})(?!`)([\s\S]*?[^`])\1(?!`)/y, node: (m) => ({ kind: "code", text: m[2]! }) },
  { re: />>> ([\s\S]*)/y, block: true, node: (m, inner) => ({ kind: "quote", children: inner(m[1]!) }) },
  { re: /> ([^\n]*)\n?/y, block: true, node: (m, inner) => ({ kind: "quote", children: inner(m[1]!) }) },
  {
    re: /(#{1,3}) +([^\n]+)\n?/y,
    block: true,
    node: (m, inner) => ({ kind: "heading", level: m[1]!.length as 1 | 2 | 3, children: inner(m[2]!) })
  },
  { re: /\[([^[\]\n]+)\]\(<?(https?:\/\/[^\s()<>]+)>?\)/y, node: (m, inner) => ({ kind: "link", href: m[2]!, children: inner(m[1]!) }) },
  { re: /<(https?:\/\/[^\s<>]+)>/y, node: (m) => ({ kind: "link", href: m[1]!, children: [{ kind: "text", text: m[1]! }] }) },
  { re: /<@&(\d{1,20})>/y, node: (m) => ({ kind: "role", id: m[1]! }) },
  { re: /<(?:@!?|#)\d{1,20}>/y, node: (m) => ({ kind: "mention", text: m[0] }) },
  { re: /@(?:everyone|here)(?![A-Za-z0-9_])/y, node: (m) => ({ kind: "mention", text: m[0] }) },
  // A bare URL ends before trailing punctuation, as the platform's does.
  { re: /https?:\/\/[^\s<]*[^\s<.,:;"'\])]/y, node: (m) => ({ kind: "link", href: m[0], children: [{ kind: "text", text: m[0] }] }) },
  { re: /\*\*([\s\S]+?)\*\*(?!\*)/y, node: span("strong") },
  { re: /__([\s\S]+?)__(?!_)/y, node: span("u") },
  { re: /\*(?![\s*])([\s\S]*?[^\s*])\*(?!\*)/y, node: span("em") },
  { re: /_([\s\S]+?)_(?![A-Za-z0-9_])/y, after: (p) => !/[A-Za-z0-9_]/.test(p), node: span("em") },
  { re: /~~([\s\S]+?)~~/y, node: span("s") },
  { re: /\n/y, node: () => ({ kind: "br" }) }
]

/** Where a rule may start; text up to the next one is taken whole. */
const TRIGGER = /[\\`>#[<@h*_~\n]/g

/** `text` as nodes; `inline` (inside bold, a link, a heading…) leaves out headings and quotes. */
export const parseMarkdown = (text: string, inline = false, depth = 0): ReadonlyArray<MdNode> => {
  const out: Array<MdNode> = []
  let plain = ""
  const push = (node: MdNode) => {
    if (plain !== "") out.push({ kind: "text", text: plain })
    plain = ""
    out.push(node)
  }
  const inner = (s: string) => (depth >= MAX_DEPTH ? [{ kind: "text", text: s } as const] : parseMarkdown(s, true, depth + 1))
  let i = 0
  while (i < text.length) {
    TRIGGER.lastIndex = i
    const next = TRIGGER.exec(text)
    const at = next === null ? text.length : next.index
    plain += text.slice(i, at)
    i = at
    if (i >= text.length) break
    const lineStart = !inline && (i === 0 || text[i - 1] === "\n")
    let matched = false
    for (const rule of RULES) {
      if (rule.block === true && !lineStart) continue
      if (rule.after !== undefined && !rule.after(i === 0 ? "" : text[i - 1]!)) continue
      rule.re.lastIndex = i
      const m = rule.re.exec(text)
      if (m === null || m[0].length === 0) continue
      push(rule.node(m, inner))
      i += m[0].length
      matched = true
      break
    }
    if (!matched) {
      plain += text[i]
      i++
    }
  }
  if (plain !== "") out.push({ kind: "text", text: plain })
  return out
}
