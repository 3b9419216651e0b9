/**
 * Secrets out of log lines (decisions.md "Sandbox mode": no webhook token, bot token or code in a
 * log line, in either mode). A pure rule, usable from every layer: `redactUrl` is what the access
 * log writes for a request target; `redactText` scrubs the same secrets from free text (a failure's
 * cause may quote a webhook URL: Effect redacts known query names in HttpClientError, not paths).
 */

export const REDACTED = "[redacted]"

/** A segment after `webhooks/{id}/` or `interactions/{id}/` is the secret of a platform URL. */
const SECRET_AFTER = new Set(["webhooks", "interactions"])

/** The gateway's own tokens (`bmg_at_…`, `bmg_rt_…`, `bmg_tt_…`). */
const GATEWAY_TOKEN = /^bmg_[a-z]{2}_/i

/** Long opaque strings (bot tokens, keys, codes): 32+ URL-safe characters mixing letters and digits. */
const OPAQUE = /^[A-Za-z0-9._~+=-]{32,}$/
const looksSecret = (segment: string) =>
  GATEWAY_TOKEN.test(segment) || (OPAQUE.test(segment) && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment))

/**
 * Query parameters whose values are never secret and help reading the log; every other value is
 * redacted (`code`, `state`, `token`, `key`, `access_token`, `code_challenge` and any name we do not know).
 */
const PUBLIC_QUERY = new Set([
  "page", "page_size", "module", "start", "end", "limit", "before", "after", "wait", "thread_id",
  "response_type", "scope", "prompt", "code_challenge_method", "error", "client_id", "with_counts"
])

const decode = (s: string) => {
  if (!s.includes("%")) return s
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** `/sandbox/discord/api/v10/webhooks/1/abc` → `/sandbox/discord/api/v10/webhooks/1/[redacted]`. */
export const redactPath = (path: string): string => {
  const segments = path.split("/")
  let changed = false
  for (let i = 0; i < segments.length; i++) {
    const secret = (i >= 2 && SECRET_AFTER.has(segments[i - 2]!.toLowerCase()) && segments[i]!.length > 0) ||
      looksSecret(decode(segments[i]!))
    if (secret) {
      segments[i] = REDACTED
      changed = true
    }
  }
  return changed ? segments.join("/") : path
}

/** `code=abc&page=2` → `code=[redacted]&page=2`: names kept, values shown only for known-public names. */
export const redactQuery = (query: string): string =>
  query.split("&").map((pair) => {
    const eq = pair.indexOf("=")
    if (eq < 0) return pair.length > 0 && looksSecret(decode(pair)) ? REDACTED : pair
    const name = pair.slice(0, eq)
    return PUBLIC_QUERY.has(decode(name)) ? pair : `${name}=${REDACTED}`
  }).join("&")

/** A request target (`/path?query`, or an absolute URL) with its secret path segments and query values redacted. */
export const redactUrl = (url: string): string => {
  const q = url.indexOf("?")
  const path = q < 0 ? url : url.slice(0, q)
  const hash = path.indexOf("#")
  const bare = hash < 0 ? path : path.slice(0, hash)
  return q < 0 ? redactPath(bare) : `${redactPath(bare)}?${redactQuery(url.slice(q + 1).split("#")[0]!)}`
}

/** URLs and path-like runs in free text: `https://host/x?y`, `/webhooks/1/abc`. */
const URL_IN_TEXT = /(?:https?:\/\/[^\s"'<>\\]+|\/[A-Za-z0-9._~%@+=:-]+(?:\/[A-Za-z0-9._~%@+=:-]*)+(?:\?[^\s"'<>\\]*)?)/g
const TOKEN_IN_TEXT = /\bbmg_[a-z]{2}_[A-Za-z0-9_-]+/g

/** Free text (a cause, an error message) with the secrets of the URLs it quotes and any gateway token redacted. */
export const redactText = (text: string): string => {
  if (!/webhooks|interactions|bmg_|\?/i.test(text)) return text
  return text
    .replace(TOKEN_IN_TEXT, REDACTED)
    .replace(URL_IN_TEXT, (match) => {
      if (match.startsWith("http")) {
        const start = match.indexOf("/", match.indexOf("//") + 2)
        return start < 0 ? match : match.slice(0, start) + redactUrl(match.slice(start))
      }
      return redactUrl(match)
    })
}
