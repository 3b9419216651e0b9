/**
 * The platform's signature of an interaction (forms-runtime.md §1): Ed25519 over
 * `X-Signature-Timestamp` + the raw body, with the application's public key (`verify_key`, 64 hex
 * digits). Pure: the caller reads the headers, the bytes and the clock. Node's `crypto` verifies.
 */
import { createPublicKey, verify } from "node:crypto"
import type { KeyObject } from "node:crypto"

/** How far the signed timestamp may be from our clock, either way (the platform's own replay window). */
export const MAX_SKEW_SECONDS = 300

/** Why a request is refused; `undefined` when it is the platform's. */
export type SignatureProblem =
  | "missing signature"
  | "missing timestamp"
  | "malformed signature"
  | "malformed timestamp"
  | "malformed key"
  | "stale timestamp"
  | "bad signature"

const HEX_SIGNATURE = /^[0-9a-fA-F]{128}$/
const HEX_KEY = /^[0-9a-fA-F]{64}$/
// Unix seconds as the platform sends them: digits only, no sign, no fraction, at most 12 digits.
const TIMESTAMP = /^[0-9]{1,12}$/

// An Ed25519 public key in SubjectPublicKeyInfo DER: this fixed prefix, then the 32 key bytes (RFC 8410).
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")

/** Key objects by their hex, a few: every interaction of a bot is checked with the same key. */
export const KEPT_KEYS = 256
const kept = new Map<string, KeyObject>()

/**
 * The key object of a hex `verify_key`, or null when it is not 32 bytes of hex. OpenSSL takes any
 * 32 bytes as an Ed25519 key (a key that is no curve point verifies nothing), so nothing here can
 * throw. Kept by its hex (a key object is immutable): building one cost as much as the verification
 * itself (S11's profile: 7 % of the gateway's time while 100 members filled a form at once).
 */
export const publicKeyOf = (hex: string): KeyObject | null => {
  const known = kept.get(hex)
  if (known !== undefined) return known
  if (!HEX_KEY.test(hex)) return null
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(hex, "hex")]), format: "der", type: "spki" })
  if (kept.size >= KEPT_KEYS) kept.clear()
  kept.set(hex, key)
  return key
}

export interface SignedRequest {
  /** `X-Signature-Ed25519`: 64 bytes in hex. */
  readonly signature: string | undefined
  /** `X-Signature-Timestamp`: Unix seconds. */
  readonly timestamp: string | undefined
  /** The exact bytes of the body. */
  readonly body: Uint8Array
}

/**
 * What is wrong with `request` before any key is needed (its headers, the clock), or undefined: the
 * route refuses these without reading the bot's key.
 */
export const headerProblem = (request: SignedRequest, nowSeconds: number): SignatureProblem | undefined => {
  const { signature, timestamp } = request
  if (signature === undefined || signature === "") return "missing signature"
  if (timestamp === undefined || timestamp === "") return "missing timestamp"
  if (!HEX_SIGNATURE.test(signature)) return "malformed signature"
  if (!TIMESTAMP.test(timestamp)) return "malformed timestamp"
  if (Math.abs(nowSeconds - Number(timestamp)) > MAX_SKEW_SECONDS) return "stale timestamp"
  return undefined
}

/** The problem with `request` under `publicKeyHex` at `nowSeconds`, or undefined when the platform signed it. */
export const signatureProblem = (
  request: SignedRequest,
  publicKeyHex: string,
  nowSeconds: number
): SignatureProblem | undefined => {
  const early = headerProblem(request, nowSeconds)
  if (early !== undefined) return early
  // (Both present: headerProblem said so.)
  // Stryker disable next-line StringLiteral: equivalent, the defaults are never taken
  const { body, signature = "", timestamp = "" } = request
  const key = publicKeyOf(publicKeyHex)
  if (key === null) return "malformed key"
  // Stryker disable next-line StringLiteral: an empty encoding is utf8, Node's default
  const signed = Buffer.concat([Buffer.from(timestamp, "utf8"), body])
  return verify(null, signed, key, Buffer.from(signature, "hex")) ? undefined : "bad signature"
}
