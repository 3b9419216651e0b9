/**
 * A feed's bytes as text, the way lenient feed readers decode them: a BOM decides; else bytes that
 * are valid UTF-8 are UTF-8 whatever the declaration says (servers and templates often declare
 * ISO-8859-1 and send UTF-8, and no other charset's text passes UTF-8 validation by chance); else the
 * declared charset (HTTP `Content-Type` first, then the XML declaration); else, for a document that
 * claims UTF-8 or nothing, UTF-8 where the bytes are valid and windows-1252 for each stray byte.
 */

const utf8 = new TextDecoder("utf-8", { fatal: true })

// windows-1252's 0x80–0x9F (the rest is ISO-8859-1). Node 20's TextDecoder("windows-1252") decodes
// these as C1 controls, so the table is here; unassigned bytes stay C1 (dropped later).
const CP1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178"

/** One byte as windows-1252. */
export const cp1252Char = (byte: number): string =>
  byte >= 0x80 && byte <= 0x9f ? CP1252_HIGH[byte - 0x80]! : String.fromCharCode(byte)

/** The charset of a `Content-Type` header, lower-cased, or undefined. */
export const httpCharset = (contentType: string | undefined): string | undefined =>
  contentType === undefined ? undefined : /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1]?.toLowerCase()

/** The `encoding` of the XML declaration, looked for within the first KiB (stray bytes may precede it). */
export const declaredEncoding = (bytes: Uint8Array): string | undefined => {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString("latin1")
  return /<\?xml[^>]*?encoding\s*=\s*["']([\w.:-]+)["']/i.exec(head)?.[1]?.toLowerCase()
}

// What browsers (WHATWG Encoding) read as windows-1252.
const SINGLE_BYTE_WESTERN = new Set(["iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1", "us-ascii", "ascii", "windows-1252", "cp1252", "x-cp1252", "cp819", "ibm819"])

const isUtf8Label = (label: string) => label === "utf-8" || label === "utf8" || label === "unicode-1-1-utf-8"
const isUtf16Label = (label: string) => label.startsWith("utf-16") || label === "ucs-2" || label === "unicode"

/** A decoder for `label` when the platform knows it (TextDecoder's labels: iso-8859-2, gb2312, big5…). */
const decoderFor = (label: string): TextDecoder | undefined => {
  try {
    return new TextDecoder(label)
  } catch {
    return undefined
  }
}

/** Length of the valid UTF-8 sequence at `i`, or 0 when the byte there does not start one. */
const sequenceLength = (b: Uint8Array, i: number): number => {
  const c = b[i]!
  if (c < 0x80) return 1
  const cont = (k: number) => i + k < b.length && (b[i + k]! & 0xc0) === 0x80
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0
  if (c >= 0xe0 && c <= 0xef) {
    const c1 = b[i + 1] ?? 0
    if (c === 0xe0 && c1 < 0xa0) return 0
    if (c === 0xed && c1 > 0x9f) return 0
    return cont(1) && cont(2) ? 3 : 0
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const c1 = b[i + 1] ?? 0
    if (c === 0xf0 && c1 < 0x90) return 0
    if (c === 0xf4 && c1 > 0x8f) return 0
    return cont(1) && cont(2) && cont(3) ? 4 : 0
  }
  return 0
}

/** UTF-8 where the bytes are valid, windows-1252 for every byte that is not. */
export const decodeMixed = (bytes: Uint8Array): string => {
  const parts: Array<string> = []
  let runStart = 0
  let i = 0
  while (i < bytes.length) {
    const n = sequenceLength(bytes, i)
    if (n > 0) {
      i += n
      continue
    }
    if (i > runStart) parts.push(utf8.decode(bytes.subarray(runStart, i)))
    parts.push(cp1252Char(bytes[i]!))
    i++
    runStart = i
  }
  if (runStart < bytes.length) parts.push(utf8.decode(bytes.subarray(runStart)))
  return parts.join("")
}

const tryUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

/** The text of a feed served with `contentType`. */
export const decodeFeed = (bytes: Uint8Array, contentType?: string): string => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return tryUtf8(bytes.subarray(3)) ?? decodeMixed(bytes.subarray(3))
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2))
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2))
  // UTF-16 without a BOM shows as `<` and `?` interleaved with zero bytes.
  if (bytes[0] === 0x3c && bytes[1] === 0x00 && bytes[2] === 0x3f && bytes[3] === 0x00) return new TextDecoder("utf-16le").decode(bytes)
  if (bytes[0] === 0x00 && bytes[1] === 0x3c && bytes[2] === 0x00 && bytes[3] === 0x3f) return new TextDecoder("utf-16be").decode(bytes)

  const asUtf8 = tryUtf8(bytes)
  if (asUtf8 !== undefined) return asUtf8
  for (const label of [httpCharset(contentType), declaredEncoding(bytes)]) {
    // A UTF-16 label on ASCII-compatible bytes is a lie; a UTF-8 one was just disproved.
    if (label === undefined || isUtf8Label(label) || isUtf16Label(label)) continue
    if (SINGLE_BYTE_WESTERN.has(label)) return Array.from(bytes, cp1252Char).join("")
    const decoder = decoderFor(label)
    if (decoder !== undefined) return decoder.decode(bytes)
  }
  return decodeMixed(bytes)
}

// C1 control characters are never meant in a feed: they are windows-1252 punctuation read as
// ISO-8859-1 (`’` sent as U+0092), which feed readers map back ("demoronize").
const C1 = /[\u0080-\u009f]/g
const c1ToCp1252 = (c: string) => {
  const mapped = cp1252Char(c.charCodeAt(0))
  return mapped === c ? "" : mapped
}

/** Characters XML forbids (controls but tab and line breaks, lone surrogates, U+FFFE/U+FFFF) dropped; C1 controls mapped. */
export const cleanChars = (text: string): string =>
  text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
    .replace(C1, c1ToCp1252)
