/**
 * Signs interactions as the platform does (until the sandbox's member player lands): an Ed25519 key
 * pair per application, `X-Signature-Ed25519` = hex(sign(timestamp + body)), `X-Signature-Timestamp`
 * = Unix seconds.
 */
import { generateKeyPairSync, sign } from "node:crypto"
import type { KeyObject } from "node:crypto"

export interface Signer {
  /** The `verify_key`: the raw 32-byte public key in hex. */
  readonly publicKeyHex: string
  readonly privateKey: KeyObject
  /** The two signature headers of `body` at `timestamp` (default: now). */
  readonly headers: (body: string | Uint8Array, timestamp?: string) => Record<string, string>
}

export const makeSigner = (): Signer => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519")
  const der = publicKey.export({ format: "der", type: "spki" })
  const publicKeyHex = Buffer.from(der.subarray(der.length - 32)).toString("hex")
  return {
    publicKeyHex,
    privateKey,
    headers: (body, timestamp = String(Math.floor(Date.now() / 1000))) => ({
      "x-signature-ed25519": signHex(privateKey, timestamp, body),
      "x-signature-timestamp": timestamp
    })
  }
}

export const signHex = (privateKey: KeyObject, timestamp: string, body: string | Uint8Array) =>
  sign(null, Buffer.concat([Buffer.from(timestamp, "utf8"), typeof body === "string" ? Buffer.from(body, "utf8") : body]), privateKey)
    .toString("hex")
