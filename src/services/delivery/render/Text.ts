/**
 * Lengths and cuts in Unicode code points (an emoji is one character, never two UTF-16 units).
 * A cut also avoids splitting a grapheme cluster (a flag, a skin tone, a ZWJ family) when it can,
 * and never leaves a lone surrogate.
 */

export const ELLIPSIS = "…"

/** The number of code points of `s`. */
export const codePointLength = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** The first `n` code points of `s` (all of `s` when it is shorter), without reading past them. */
export const takeCodePoints = (s: string, n: number): string => {
  if (n <= 0) return ""
  let taken = 0
  let end = 0
  for (const c of s) {
    if (taken === n) break
    taken++
    end += c.length
  }
  return s.slice(0, end)
}

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" })

/** A span of `s` (UTF-16 indexes, end exclusive) that a cut must not split. */
export interface Span {
  readonly start: number
  readonly end: number
}

/**
 * `s` when it has at most `max` code points; otherwise its start, cut at a character boundary, with
 * trailing white space dropped, ending in `…`, at most `max` code points in all. A cut that would
 * fall inside one of `whole` moves to its start (unless that leaves nothing).
 */
export const truncate = (s: string, max: number, whole: ReadonlyArray<Span> = []): string => {
  if (max <= 0) return ""
  if (codePointLength(takeCodePoints(s, max + 1)) <= max) return s
  const keep = max - 1
  // One code point past the cut is enough: a grapheme boundary depends only on what precedes it and
  // the code point that follows.
  let kept = 0
  for (const { segment } of graphemes.segment(takeCodePoints(s, keep + 1))) {
    const n = codePointLength(segment)
    if (kept + n > keep) break
    kept += n
  }
  let end = takeCodePoints(s, kept === 0 ? keep : kept).length
  for (const span of whole) {
    if (span.start < end && end < span.end && span.start > 0) end = Math.min(end, span.start)
  }
  return s.slice(0, end).trimEnd() + ELLIPSIS
}
