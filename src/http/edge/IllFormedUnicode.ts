/**
 * Ill-formed Unicode at the edge (issue #30 item 5; decisions.md "Errors": a string that cannot be
 * stored as sent is a 400 at its path). Two ways a client can send text that is not Unicode, both
 * of which the framework would quietly turn into U+FFFD and store altered:
 * - bytes that are not UTF-8 in a JSON body (the decoder replaces them): the body as a whole is refused;
 * - a lone surrogate escape in a JSON string (`"\ud800"`, or a low `"\udc00"` without its high half):
 *   JSON.parse keeps it, PostgreSQL's UTF-8 cannot hold it. Refused at the string's (or key's) path.
 * Percent-encoded parameters that are not UTF-8 once decoded are refused by `notUtf8Percent`.
 */
import { isUtf8 } from "node:buffer"
import type { Problem } from "../../domain/infra/Errors.ts"

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g")

/** Whether a string holds a lone surrogate (String.prototype.isWellFormed, which ES2023's lib lacks). */
export const hasLoneSurrogate = (s: string): boolean => LONE_SURROGATE.test(s)

/**
 * Whether a JSON text could hold a lone surrogate: only through an escape `\uD800`–`\uDFFF` (a
 * decoded UTF-8 text never holds one). The usual answer is no, and then nothing is parsed.
 */
export const mayHoldLoneSurrogate = (jsonText: string): boolean => /\\u[dD][89a-fA-F]/.test(jsonText)

/** A text as the client can read it back: each lone surrogate written as its JSON escape. */
export const shownEscaped = (s: string): string =>
  s.replace(LONE_SURROGATES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** Whether the bytes of a body are UTF-8 (no stray byte, no overlong form, no encoded surrogate). */
export const isUtf8Body = (bytes: ArrayBuffer | Uint8Array): boolean => isUtf8(bytes)

/** The body is not UTF-8: one problem for the whole body (no field can be named in bytes that do not decode). */
export const notUtf8BodyProblem: Problem = {
  message: "The body is not valid UTF-8: send JSON text encoded as UTF-8.",
  additionalProperties: { in: "payload" }
}

export const loneSurrogateProblem = (path: string, where: string): Problem => ({
  message: `${shownEscaped(path)}: holds a lone surrogate (an unpaired \\ud800–\\udfff escape), which is not Unicode text and cannot be stored as sent.`,
  additionalProperties: { path: shownEscaped(path), in: where }
})

/** A parameter whose percent-encoding is not UTF-8 once decoded (`%FF`, `%ED%A0%80`). */
export const notUtf8ParameterProblem = (name: string, where: string): Problem => ({
  message: `${name}: its percent-encoded bytes are not valid UTF-8, so it cannot be read as text.`,
  additionalProperties: { path: name, in: where }
})

const PERCENT_HIGH = /%[89a-fA-F][0-9a-fA-F]/

/** Whether a URL (or one of its parts) may hold percent-encoded bytes that are not UTF-8: any non-ASCII byte does. */
export const mayHoldNotUtf8Percent = (url: string): boolean => PERCENT_HIGH.test(url)

/** Whether a percent-encoded part of a URL decodes to bytes that are not UTF-8. */
export const notUtf8Percent = (encoded: string): boolean => {
  if (!PERCENT_HIGH.test(encoded)) return false
  const bytes: Array<number> = []
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded.charCodeAt(i)
    if (c === 0x25 && /^[0-9a-fA-F]{2}$/.test(encoded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16))
      i += 2
    } else if (c < 0x80) {
      bytes.push(c)
    } else {
      // A raw non-ASCII character: its own UTF-8 bytes.
      bytes.push(...new TextEncoder().encode(encoded[i]!))
    }
  }
  return !isUtf8(new Uint8Array(bytes))
}

const nameOf = (encoded: string): string => {
  try {
    return decodeURIComponent(encoded.replaceAll("+", " "))
  } catch {
    return encoded
  }
}

/** One problem per query parameter (by its name) whose name or value is not UTF-8 once decoded. */
export const notUtf8QueryProblems = (url: string): Array<Problem> => {
  const q = url.indexOf("?")
  if (q < 0) return []
  const names = new Set<string>()
  for (const pair of url.slice(q + 1).split("#")[0]!.split("&")) {
    const eq = pair.indexOf("=")
    const key = eq < 0 ? pair : pair.slice(0, eq)
    const value = eq < 0 ? "" : pair.slice(eq + 1)
    if (notUtf8Percent(key) || notUtf8Percent(value)) names.add(nameOf(key))
  }
  return [...names].map((name) => notUtf8ParameterProblem(name, "query"))
}

/** The path of a URL (before `?`) holds percent-encoded bytes that are not UTF-8. */
export const notUtf8Path = (url: string): boolean => {
  const q = url.indexOf("?")
  return notUtf8Percent(q < 0 ? url : url.slice(0, q))
}

export const NOT_UTF8_PATH_MESSAGE = "The path's percent-encoded bytes are not valid UTF-8, so it cannot be read as text."
