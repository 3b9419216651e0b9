/** PKCE (RFC 7636): the S256 challenge of a verifier, and the check of a verifier against a challenge. Pure. */
import { createHash, timingSafeEqual } from "node:crypto"

/** S256 (RFC 7636 §4.2). */
export const s256 = (verifier: string): string => createHash("sha256").update(verifier, "ascii").digest("base64url")

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/** Whether `verifier` is well-formed and its S256 is `challenge` (compared in constant time). */
export const verifierMatches = (verifier: string | undefined, challenge: string): boolean => {
  if (verifier === undefined || !VERIFIER.test(verifier)) return false
  const x = Buffer.from(s256(verifier))
  const y = Buffer.from(challenge)
  return x.length === y.length && timingSafeEqual(x, y)
}
