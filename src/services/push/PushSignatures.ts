/**
 * The signatures of push notifications (delivery.md §9), pure functions shared by the callbacks
 * and the sandbox's hub: WebSub's `X-Hub-Signature: <algo>=<hex HMAC of the body>` (sha1, as
 * YouTube's hub sends, or sha256/384/512) and Twitch EventSub's
 * `Twitch-Eventsub-Message-Signature: sha256=<hex HMAC of id + timestamp + body>`. Compared in
 * constant time; a malformed header is simply not a match.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

const WEBSUB_ALGOS = new Set(["sha1", "sha256", "sha384", "sha512"])

const hmac = (algo: string, secret: string, parts: ReadonlyArray<string | Uint8Array>) => {
  const h = createHmac(algo, secret)
  for (const p of parts) h.update(p)
  return h.digest()
}

/** `<algo>=<hex>` matches the HMAC of `parts` with `secret` (the algorithm among `allowed`). */
const matches = (header: string | undefined, secret: string, parts: ReadonlyArray<string | Uint8Array>, allowed: ReadonlySet<string>) => {
  if (header === undefined) return false
  const m = /^([a-z0-9]+)=([0-9a-f]+)$/i.exec(header.trim())
  if (m === null || !allowed.has(m[1]!.toLowerCase())) return false
  const expected = hmac(m[1]!.toLowerCase(), secret, parts)
  const given = Buffer.from(m[2]!, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** WebSub: the header the hub sends for `body`. */
export const websubSignature = (secret: string, body: string | Uint8Array, algo: "sha1" | "sha256" = "sha1") =>
  `${algo}=${hmac(algo, secret, [body]).toString("hex")}`

export const websubSignatureValid = (header: string | undefined, secret: string, body: Uint8Array) =>
  matches(header, secret, [body], WEBSUB_ALGOS)

/** EventSub: the header Twitch sends. */
export const eventsubSignature = (secret: string, messageId: string, timestamp: string, body: string | Uint8Array) =>
  `sha256=${hmac("sha256", secret, [messageId, timestamp, body]).toString("hex")}`

export const eventsubSignatureValid = (header: string | undefined, secret: string, messageId: string, timestamp: string, body: Uint8Array) =>
  matches(header, secret, [messageId, timestamp, body], new Set(["sha256"]))

/** EventSub messages older than this (or this far in the future) are refused (replays). */
export const EVENTSUB_MAX_AGE_MS = 10 * 60 * 1000

/** The timestamp (RFC 3339) is within 10 minutes of `now`. */
export const eventsubFresh = (timestamp: string, now: number) => {
  const at = Date.parse(timestamp)
  return Number.isFinite(at) && Math.abs(now - at) <= EVENTSUB_MAX_AGE_MS
}
