/**
 * Placeholder substitution in one left-to-right pass: `%name%` is replaced when `lookup` knows the
 * name; an unknown `%words%` stays as written, and its closing `%` may open the next placeholder
 * (`50%%title%` and `%x%title%` still replace `%title%`). Values are never scanned again, so a title
 * holding `%url%` stays as it is. The output is bounded: past `budget` code points nothing more is
 * computed or appended, however many placeholders the template holds; the scan still finishes, so
 * `used` names every placeholder of the template.
 */
import { codePointLength, takeCodePoints } from "./Text.ts"

/** A known placeholder's value, computed only if it is still needed. */
export type Lookup = (name: string) => (() => string) | undefined

export interface Filled {
  /** The text, cut after `budget + 1` code points when it would be longer. */
  readonly text: string
  /** The placeholders replaced, by name. */
  readonly used: ReadonlySet<string>
}

// No placeholder name is longer (an IANA zone is under 40 characters).
const MAX_NAME = 80

export const fillTemplate = (template: string, lookup: Lookup, budget: number): Filled => {
  const used = new Set<string>()
  let text = ""
  let length = 0
  const emit = (piece: string) => {
    if (length > budget || piece === "") return
    const kept = takeCodePoints(piece, budget + 1 - length)
    text += kept
    length += codePointLength(kept)
  }
  let literalFrom = 0
  let i = 0
  for (;;) {
    const open = template.indexOf("%", i)
    if (open < 0) break
    const close = template.indexOf("%", open + 1)
    if (close < 0) break
    const name = template.slice(open + 1, close)
    const value = name.length > 0 && name.length <= MAX_NAME && !/\s/.test(name) ? lookup(name) : undefined
    if (value === undefined) {
      i = close
      continue
    }
    emit(template.slice(literalFrom, open))
    if (length <= budget) emit(value())
    used.add(name)
    literalFrom = i = close + 1
  }
  emit(template.slice(literalFrom))
  return { text, used }
}
