/**
 * Each seeded bot's Ed25519 key pair, as its platform application holds one: the public key is the
 * application's `verify_key` (hex of the 32 raw bytes), the private key signs the interactions the
 * sandbox sends to the bot's Interactions Endpoint URL. Derived from the bot's id, so every sandbox
 * (and every test) knows the same keys.
 */
import { createHash, createPrivateKey, createPublicKey, sign } from "node:crypto"
import type { KeyObject } from "node:crypto"

/** PKCS#8 DER prefix of an Ed25519 private key (RFC 8410): the 32-byte seed follows. */
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex")

interface BotKey {
  readonly privateKey: KeyObject
  readonly publicKeyHex: string
}

const keys = new Map<string, BotKey>()

const keyOf = (botId: string): BotKey => {
  const known = keys.get(botId)
  if (known !== undefined) return known
  const seed = createHash("sha256").update(`sandbox-interactions-key:${botId}`).digest()
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: "der", type: "pkcs8" })
  // The SPKI DER of an Ed25519 key ends with its 32 raw bytes.
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" })
  const key = { privateKey, publicKeyHex: spki.subarray(spki.length - 32).toString("hex") }
  keys.set(botId, key)
  return key
}

/** The bot application's public key (`verify_key`): 64 hex characters. */
export const publicKeyHex = (botId: string): string => keyOf(botId).publicKeyHex

/** `X-Signature-Ed25519`: hex of the Ed25519 signature of timestamp + raw body, as the platform signs. */
export const signInteraction = (botId: string, timestamp: string, rawBody: string): string =>
  sign(null, Buffer.from(timestamp + rawBody, "utf8"), keyOf(botId).privateKey).toString("hex")

/** Where the platform sends a bot's interactions in sandbox mode: the gateway's own endpoint. */
export const interactionsUrl = (origin: string, botId: string): string => `${origin}/interactions/${botId}`
