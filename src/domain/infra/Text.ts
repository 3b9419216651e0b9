/**
 * Lengths of text as decisions.md counts them: Unicode code points ("an emoji is one character"),
 * never UTF-16 units (`"😀".length` is 2). Every text limit of the resources goes through `text`
 * or `isCharacters`, so the rule lives in one place; the JSON Schema keeps `minLength`/`maxLength`,
 * which JSON Schema itself counts in code points.
 */
import { Schema } from "effect"

/** The number of code points of `s` (an unpaired surrogate counts as one). */
export const codePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

const words = (min: number, max: number) =>
  min === 0 ? `at most ${max} characters` : min === max ? `exactly ${min} characters` : `${min} to ${max} characters`

/** A length check in code points, failing with "expected 1 to 256 characters". */
export const isCharacters = (min: number, max: number) =>
  Schema.isBetweenCodePoints(min, max, {
    expected: `a text of ${words(min, max)}`,
    message: `expected a text of ${words(min, max)} (an emoji counts as one)`
  })

/** A string of `min` to `max` characters (code points). */
export const text = (min: number, max: number) =>
  Schema.String.annotate({ message: `expected a text of ${words(min, max)}` }).check(isCharacters(min, max))
