/**
 * The URLs of a message as Discord links them, and the `censor` rule: every URL wrapped in `<…>`,
 * which Discord shows as a link without an embed preview (delivery.md §2).
 */
import type { Span } from "./Text.ts"

export interface UrlSpan extends Span {
  /** Already between `<` and `>` (the span is the URL alone, without them). */
  readonly wrapped: boolean
}

const CANDIDATE = /https?:\/\/[^\s<>]+/gi
// Characters that end a sentence or Markdown around a URL rather than belong to it.
const TRAILING = new Set([".", ",", ":", ";", "!", "?", "'", "\"", "*", "~", "|", "]"])

const count = (s: string, c: string) => s.split(c).length - 1

/** Drops trailing punctuation and closing parentheses without a matching opening one. */
const trimEnd = (url: string): string => {
  let u = url
  for (;;) {
    const last = u.at(-1)
    if (last !== undefined && TRAILING.has(last)) u = u.slice(0, -1)
    else if (last === ")" && count(u, ")") > count(u, "(")) u = u.slice(0, -1)
    else return u
  }
}

/** Every http(s) URL of `text`, in order. */
export const urlSpans = (text: string): ReadonlyArray<UrlSpan> => {
  const spans: Array<UrlSpan> = []
  for (const m of text.matchAll(CANDIDATE)) {
    const start = m.index
    const url = trimEnd(m[0])
    if (/^https?:\/\/$/i.test(url)) continue
    const end = start + url.length
    spans.push({ start, end, wrapped: text[start - 1] === "<" && text[end] === ">" })
  }
  return spans
}

/** The spans a cut must keep whole: each URL with its `<…>` when it has them. */
export const urlCutSpans = (text: string): ReadonlyArray<Span> =>
  urlSpans(text).map((s) => (s.wrapped ? { start: s.start - 1, end: s.end + 1 } : s))

/** `text` with every URL not yet wrapped put between `<` and `>`. */
export const censorUrls = (text: string): string => {
  let out = ""
  let from = 0
  for (const span of urlSpans(text)) {
    if (span.wrapped) continue
    out += text.slice(from, span.start) + "<" + text.slice(span.start, span.end) + ">"
    from = span.end
  }
  return out + text.slice(from)
}
