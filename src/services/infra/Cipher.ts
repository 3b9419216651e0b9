/**
 * Secrets at rest (platform tokens, bot tokens, webhook tokens, task-board credentials):
 * AES-256-GCM with a random 96-bit nonce and the owning row bound as additional data, stored as
 * `v1.<keyId>.<nonce>.<ciphertext+tag>` (base64url). Several keys may be configured, one active:
 * old ciphertexts keep decrypting after a rotation and `reencrypt` moves them to the active key.
 */
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

export class CipherError extends Schema.TaggedError<CipherError>()("CipherError", { message: Schema.String }) {}

export interface Keyring {
  readonly activeKeyId: string
  readonly keys: ReadonlyMap<string, Buffer>
}

/**
 * Parses `TOKEN_ENCRYPTION_KEY`: `keyId:base64key[,keyId:base64key…]`, the first one active; a bare
 * base64 key means key id `k1`. Each key must decode to 32 bytes.
 */
export const parseKeyring = (value: string): Keyring => {
  const entries = value.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  if (entries.length === 0) throw new Error("expected at least one key")
  const keys = new Map<string, Buffer>()
  let activeKeyId = ""
  for (const entry of entries) {
    const colon = entry.indexOf(":")
    const [id, b64] = colon === -1 ? ["k1", entry] : [entry.slice(0, colon), entry.slice(colon + 1)]
    if (!/^[A-Za-z0-9_-]{1,16}$/.test(id)) throw new Error(`key id "${id}" must be 1-16 characters of [A-Za-z0-9_-]`)
    const key = Buffer.from(b64, "base64")
    if (key.length !== 32) throw new Error(`key "${id}" must be 32 bytes in base64 (got ${key.length})`)
    if (keys.has(id)) throw new Error(`key id "${id}" appears twice`)
    keys.set(id, key)
    if (activeKeyId === "") activeKeyId = id
  }
  return { activeKeyId, keys }
}

export const generateKey = (): string => randomBytes(32).toString("base64")

export class Cipher extends Context.Service<Cipher, {
  readonly encrypt: (plaintext: Redacted.Redacted<string>, aad: string) => Effect.Effect<string>
  readonly decrypt: (ciphertext: string, aad: string) => Effect.Effect<Redacted.Redacted<string>, CipherError>
  /** Whether a ciphertext is under a key other than the active one. */
  readonly isStale: (ciphertext: string) => boolean
}>()(
  // Stryker disable next-line StringLiteral: the service's key; any unique string serves
  "gateway/Cipher"
) {
  static readonly make = (keyring: Keyring) => {
    const active = keyring.keys.get(keyring.activeKeyId)!
    return Cipher.of({
      encrypt: (plaintext, aad) =>
        Effect.sync(() => {
          const nonce = randomBytes(12)
          const cipher = createCipheriv("aes-256-gcm", active, nonce)
          // Stryker disable next-line StringLiteral: an empty encoding is utf8, Node's default
          cipher.setAAD(Buffer.from(aad, "utf8"))
          // Stryker disable next-line StringLiteral: an empty encoding is utf8, Node's default
          const body = Buffer.concat([cipher.update(Redacted.value(plaintext), "utf8"), cipher.final(), cipher.getAuthTag()])
          return `v1.${keyring.activeKeyId}.${nonce.toString("base64url")}.${body.toString("base64url")}`
        }),
      decrypt: (ciphertext, aad) =>
        Effect.try({
          try: () => {
            const [version, keyId, nonceB64, bodyB64] = ciphertext.split(".")
            if (version !== "v1" || keyId === undefined || nonceB64 === undefined || bodyB64 === undefined) {
              throw new Error("not a v1 ciphertext")
            }
            const key = keyring.keys.get(keyId)
            if (key === undefined) throw new Error(`unknown key id ${keyId}`)
            const body = Buffer.from(bodyB64, "base64url")
            if (body.length < 16) throw new Error("ciphertext too short")
            const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonceB64, "base64url"))
            // Stryker disable next-line StringLiteral: an empty encoding is utf8, Node's default
            decipher.setAAD(Buffer.from(aad, "utf8"))
            decipher.setAuthTag(body.subarray(body.length - 16))
            const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()])
            return Redacted.make(plain.toString("utf8"))
          },
          // Fail closed, without saying more than which check refused.
          catch: (e) => new CipherError({ message: `cannot decrypt: ${e instanceof Error ? e.message : "invalid"}` })
        }),
      isStale: (ciphertext) => ciphertext.split(".")[1] !== keyring.activeKeyId
    })
  }
  static readonly layer = (keyring: Keyring) => Layer.succeed(Cipher, Cipher.make(keyring))
}
