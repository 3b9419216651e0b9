/**
 * `split` (delivery.md §10): a text over the limit is sent as up to `parts` messages, each cut at the
 * last line break that fits, else the last space, else at a character boundary; what does not fit in
 * the last one is left for the caller to cut as §3 says (`last`). Leading and trailing white space
 * around a cut is dropped; empty pieces are never sent.
 */
import { codePointLength, takeCodePoints } from "./Text.ts"

/**
 * The pieces of `text`: every one but the last within `max` code points (the first within
 * `firstMax`), at most `parts` in all; the last holds the rest, however long.
 */
export const splitText = (text: string, max: number, parts: number, firstMax = max): ReadonlyArray<string> => {
  const pieces: Array<string> = []
  let rest = text
  while (pieces.length < parts - 1) {
    const limit = pieces.length === 0 ? firstMax : max
    if (limit < 1 || codePointLength(rest) <= limit) break
    const head = takeCodePoints(rest, limit)
    const next = rest.charAt(head.length)
    const line = head.lastIndexOf("\n")
    const word = head.lastIndexOf(" ")
    // A line break first (one right after the head counts), then a space, then any character.
    const cut = next === "\n" ? head.length : line > 0 ? line : next === " " ? head.length : word > 0 ? word : head.length
    const piece = rest.slice(0, cut).trimEnd()
    if (piece !== "") pieces.push(piece)
    rest = rest.slice(cut).replace(/^\s+/, "")
  }
  pieces.push(rest)
  return pieces
}
