/**
 * Signs interactions as the platform does: `X-Signature-Ed25519` = hex(sign(timestamp + body)),
 * `X-Signature-Timestamp` = Unix seconds. `botSigner` signs with a sandbox bot's own key pair (the
 * sandbox platform's, src/sandbox/interactions/BotKeys.ts: the `verify_key` its application answers
 * and `GET /sandbox` lists); `makeSigner` makes a key pair of its own, the platform's for no bot (a
 * forger's, or a key reset's).
 */
import { generateKeyPairSync, sign } from "node:crypto"
import type { KeyObject } from "node:crypto"
import { publicKeyHex, signInteraction } from "../../src/sandbox/interactions/BotKeys.ts"
import { BOT1_ID } from "../../src/sandbox/seed/Ids.ts"

export interface Signer {
  /** The `verify_key`: the raw 32-byte public key in hex. */
  readonly publicKeyHex: string
  /** The two signature headers of `body` at `timestamp` (default: now). */
  readonly headers: (body: string | Uint8Array, timestamp?: string) => Record<string, string>
}

const now = () => String(Math.floor(Date.now() / 1000))

export const makeSigner = (): Signer & { readonly privateKey: KeyObject } => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519")
  const der = publicKey.export({ format: "der", type: "spki" })
  const publicKeyHex = Buffer.from(der.subarray(der.length - 32)).toString("hex")
  return {
    publicKeyHex,
    privateKey,
    headers: (body, timestamp = now()) => ({
      "x-signature-ed25519": signHex(privateKey, timestamp, body),
      "x-signature-timestamp": timestamp
    })
  }
}

/** A sandbox bot's interactions as the sandbox platform signs them. */
export const botSigner = (botId: string): Signer => ({
  publicKeyHex: publicKeyHex(botId),
  headers: (body, timestamp = now()) => ({
    "x-signature-ed25519": signInteraction(botId, timestamp, typeof body === "string" ? body : Buffer.from(body).toString("utf8")),
    "x-signature-timestamp": timestamp
  })
})

/** BOT1's interactions, the forms tests' bot. */
export const sandboxSigner: Signer = botSigner(BOT1_ID)

export const signHex = (privateKey: KeyObject, timestamp: string, body: string | Uint8Array) =>
  sign(null, Buffer.concat([Buffer.from(timestamp, "utf8"), typeof body === "string" ? Buffer.from(body, "utf8") : body]), privateKey)
    .toString("hex")
