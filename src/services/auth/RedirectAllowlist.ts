/**
 * Which client `redirect_uri` the gateway will send a sign-in result to (decisions.md "Sign-in and
 * tokens"; RFC 9700 §4.1.3, RFC 6749 §3.1.2, RFC 8252 §7.3). Exact match of the parsed URL against
 * configured URLs (scheme, host, port, path, query); a loopback entry (`http://127.0.0.1`,
 * `http://[::1]`, `http://localhost`) matches on any port. Anything that could make the parsed URL
 * differ from what a reader sees is refused before comparing. Pure.
 */

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"])

/** Refused outright: fragments, backslashes, whitespace and control characters, encoded dots or separators, dot segments. */
const suspicious = (raw: string): boolean =>
  raw.length > 2048 ||
  !/^[\x21-\x7e]+$/.test(raw) ||
  raw.includes("#") ||
  raw.includes("\\") ||
  /%(2e|2f|5c|00|0a|0d|09|40|23)/i.test(raw) ||
  /\/\.{1,2}(\/|\?|$)/.test(raw)

const parse = (raw: string): URL | undefined => {
  if (suspicious(raw)) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return undefined
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined
  if (url.username !== "" || url.password !== "" || url.hash !== "") return undefined
  // The authority as written must be the one parsed (no `@`, no stray characters).
  const authority = raw.slice(url.protocol.length + 2).split(/[/?]/, 1)[0]!
  if (authority.includes("@") || authority.toLowerCase() !== url.host && authority.toLowerCase() !== defaultPortHost(url)) {
    return undefined
  }
  return url
}

/** `host:80` for http / `host:443` for https parses to `host`: accept that spelling too. */
const defaultPortHost = (url: URL) => `${url.hostname}:${url.protocol === "https:" ? "443" : "80"}`

export const isLoopback = (url: URL): boolean => url.protocol === "http:" && LOOPBACK.has(url.hostname)

export interface RedirectAllowlist {
  /** The URL to redirect to when `raw` is allowed; `undefined` otherwise. */
  readonly match: (raw: string | undefined) => URL | undefined
}

/** Builds the matcher; configured entries that do not parse are ignored (and listed in `invalid`). */
export const makeRedirectAllowlist = (entries: ReadonlyArray<string>): RedirectAllowlist & {
  readonly invalid: ReadonlyArray<string>
} => {
  // Stryker disable next-line ArrayDeclaration: a stray non-URL element has no .protocol, so `same` never matches it
  const allowed: Array<URL> = []
  const invalid: Array<string> = []
  for (const entry of entries) {
    const url = parse(entry)
    if (url === undefined) invalid.push(entry)
    else allowed.push(url)
  }
  const same = (a: URL, b: URL, port: boolean) =>
    a.protocol === b.protocol && a.hostname === b.hostname && (!port || a.port === b.port) &&
    a.pathname === b.pathname && a.search === b.search
  return {
    invalid,
    match: (raw) => {
      if (raw === undefined) return undefined
      const url = parse(raw)
      if (url === undefined) return undefined
      const loopback = isLoopback(url)
      // Stryker disable next-line LogicalOperator: `same` compares protocol and hostname, which decide isLoopback: when the two differ nothing matches on any port
      return allowed.some((entry) => same(entry, url, !(loopback && isLoopback(entry)))) ? url : undefined
    }
  }
}
